#include "common/yaml_strict.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "common/error.h"
#include "common/strings.h"

namespace plumb {
namespace {

std::string unknown_key(const std::string& key, std::span<const std::string> known,
                        std::string_view where) {
  return fmt::format("unknown key '{}'{}{}; expected one of {}", key,
                     where.empty() ? "" : fmt::format(" in {}", where), did_you_mean(key, known),
                     join(known, ", "));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::vector<YamlProblem> key_problems(const YAML::Node& map, std::span<const std::string> known,
                                      std::string_view where) {
  std::vector<YamlProblem> problems;
  std::map<std::string, int> first_line;
  for (const auto& item : map) {
    const int line = yaml_line(item.first);
    if (!item.first.IsScalar()) {
      problems.push_back({line, fmt::format("a key must be a plain name, one of {}", join(known, ", "))});
      continue;
    }
    const std::string& key = item.first.Scalar();
    const auto [seen, fresh] = first_line.emplace(key, line);
    if (!fresh) {
      problems.push_back({line, fmt::format("duplicate key '{}' (first at line {})", key, seen->second)});
    } else if (std::find(known.begin(), known.end(), key) == known.end()) {
      problems.push_back({line, unknown_key(key, known, where)});
    }
  }
  return problems;
}

std::optional<double> yaml_number(const YAML::Node& value, const NumberRange& range,
                                  std::string& problem) {
  if (value.IsScalar()) return parse_number(value.Scalar(), range, problem);
  problem = fmt::format("must be {}, got {}", describe(range),
                        value.IsSequence() ? "a list" : value.IsMap() ? "a map" : "nothing");
  return std::nullopt;
}

std::string read_text_file(const std::string& path, std::string_view what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw Error(fmt::format("{}: is a directory, not a {}", path, what));
  }
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw Error(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxTextFileBytes) {
      throw Error(fmt::format("{}: more than {} MiB, not a {}", path, kMaxTextFileBytes >> 20, what));
    }
  }
  if (std::ferror(file.get())) {
    throw Error(fmt::format("{}: cannot read the {}: {}", path, what, std::strerror(errno)));
  }
  return text;
}

YAML::Node load_yaml_file(const std::string& path, std::string_view what) {
  const std::string text = read_text_file(path, what);
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
}

}  // namespace plumb
