#include "plan/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/data_dir.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::plan {

std::string data_dir() { return plumb::data_dir(); }

std::vector<std::string> preset_names(const std::string& kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() + "/" + kind, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string preset_path(const std::string& kind, const std::string& name) {
  const std::string option = kind == "models" ? "--model" : "--hardware";
  return preset_path(kind, name, option, option + "-file PATH");
}

std::string preset_path(const std::string& kind, const std::string& name, const std::string& option,
                        const std::string& file_hint) {
  const std::vector<std::string> names = preset_names(kind);
  if (std::find(names.begin(), names.end(), name) != names.end()) {
    return data_dir() + "/" + kind + "/" + name + ".yaml";
  }
  const std::string noun = kind == "models" ? "model" : "hardware";
  if (names.empty()) {
    throw Error(fmt::format("{} '{}': no catalog in {}/{} (set PLUMB_DATA_DIR to plumb's data folder)",
                            option, name, data_dir(), kind));
  }
  // "h100" means "h100-sxm" more likely than the closer spelling "h200": a single name that starts
  // with the word is the suggestion.
  std::vector<std::string> prefixed;
  for (const std::string& n : names) {
    if (n.rfind(name, 0) == 0) prefixed.push_back(n);
  }
  const std::string suggest = prefixed.size() == 1 ? prefixed.front() : name;
  throw Error(unknown_name(option, noun, name, names, suggest) +
              fmt::format(" (or {})", file_hint));
}

}  // namespace plumb::plan
