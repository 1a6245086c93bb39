#include "common/config.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/error.h"
#include "common/yaml_strict.h"

namespace plumb {
namespace {

const std::array<std::string, 1> kConfigKeys = {"store"};

constexpr const char* kSiteConfig = "/etc/plumb/config.yaml";

// A setting's text: a non-empty scalar.
std::string scalar_value(const YAML::Node& node, const std::string& where, const char* expected) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    throw Error(fmt::format("{}: expected {}, got {}", where, expected,
                            node.IsSequence() || node.IsMap() ? "a list or a map" : "nothing"));
  }
  return node.Scalar();
}

}  // namespace

Config parse_config(std::string_view text, const std::string& source) {
  const YAML::Node root = load_yaml(text, source);
  Config config;
  if (root.IsNull()) return config;  // an empty file sets nothing
  if (!root.IsMap()) {
    throw Error(fmt::format("{}:{}: expected a map of settings (store: ...)", source, yaml_line(root)));
  }
  if (const auto problems = key_problems(root, kConfigKeys); !problems.empty()) {
    throw Error(fmt::format("{}:{}: {}", source, problems.front().line, problems.front().message));
  }
  // Its keys are known and each appears once: `store`, at the key's line (an empty value has
  // none of its own).
  for (const auto& item : root) {
    const std::string where = fmt::format("{}:{}", source, yaml_line(item.first));
    config.store = ConfigValue{
        scalar_value(item.second, where + ": store", "a file path or a postgresql:// URL"), where};
  }
  return config;
}

std::string home_folder() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  const passwd* user = getpwuid(getuid());
  return user != nullptr && user->pw_dir != nullptr ? user->pw_dir : "";
}

std::vector<std::string> config_paths() {
  std::vector<std::string> paths;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    paths.push_back(std::string(xdg) + "/plumb/config.yaml");
  } else if (const std::string home = home_folder(); !home.empty()) {
    paths.push_back(home + "/.config/plumb/config.yaml");
  }
  paths.emplace_back(kSiteConfig);
  return paths;
}

Config read_config(const std::vector<std::string>& paths) {
  Config config;
  for (const std::string& path : paths) {
    config.looked_in.push_back(path);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    const Config file = parse_config(read_text_file(path, "config file"), path);
    config.read.push_back(path);
    if (!config.store) config.store = file.store;
  }
  return config;
}

}  // namespace plumb
