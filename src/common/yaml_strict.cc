#include "common/yaml_strict.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

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

std::string too_deep(std::string_view source, int line) {
  return fmt::format("{}:{}: YAML nested deeper than {} levels", source, line, kMaxYamlDepth);
}

// yaml-cpp's parse of `text`, its exceptions as plumb::Errors naming `source`.
template <class Load>
auto parsed(std::string_view text, std::string_view source, Load load) {
  try {
    return load(std::string(text));
  } catch (const YAML::DeepRecursion&) {
    // yaml-cpp's own limit, said as "bad file", at where its scanner had read to: not the line.
    throw Error(fmt::format("{}: YAML nested deeper than {} levels", source, kMaxYamlDepth));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid YAML: {}", source, e.mark.line + 1, e.msg));
  }
}

// Every node `root` stands for, aliases followed, without recursion: refused when deeper than
// kMaxYamlDepth (a cycle of aliases is infinitely deep) or more than the node budget.
void check_shape(const YAML::Node& root, size_t text_bytes, std::string_view source) {
  const size_t budget = std::max(kMaxYamlNodes, 2 * text_bytes);
  std::vector<std::pair<YAML::Node, int>> open = {{root, 1}};
  size_t seen = 0;
  while (!open.empty()) {
    const auto [node, depth] = std::move(open.back());
    open.pop_back();
    if (++seen > budget) {
      throw Error(fmt::format("{}: YAML aliases expand to more than {} nodes", source, budget));
    }
    if (depth > kMaxYamlDepth) throw Error(too_deep(source, yaml_line(node)));
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) open.emplace_back(item, depth + 1);
    } else if (node.IsMap()) {
      for (const auto& item : node) {
        open.emplace_back(item.first, depth + 1);
        open.emplace_back(item.second, depth + 1);
      }
    }
  }
}

// yaml-cpp 0.7's LoadAll loops for ever on some malformed streams: a document its parser cannot
// read ends without consuming a token, the next one starts at that same token, and each turn adds
// a null document until memory runs out (jbeder/yaml-cpp#1319, fixed after 0.8; found by
// fuzz_hypernodes with a 54-byte file). The stream's events are walked first, building nothing,
// and a second document starting where the one before it started is refused.
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (started_ && mark.pos == last_.pos) {
      throw YAML::ParserException(mark, "a document that cannot be read (it would be read again for ever)");
    }
    started_ = true;
    last_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool started_ = false;
  YAML::Mark last_;
};

std::vector<YAML::Node> load_all(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
  }
  return YAML::LoadAll(text);
}

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

YAML::Node load_yaml(std::string_view text, std::string_view source) {
  YAML::Node root = parsed(text, source, [](const std::string& t) { return YAML::Load(t); });
  check_shape(root, text.size(), source);
  return root;
}

std::vector<YAML::Node> load_yaml_documents(std::string_view text, std::string_view source) {
  std::vector<YAML::Node> docs =
      parsed(text, source, load_all);
  for (const YAML::Node& doc : docs) check_shape(doc, text.size(), source);
  return docs;
}

YAML::Node load_yaml_file(const std::string& path, std::string_view what) {
  return load_yaml(read_text_file(path, what), path);
}

}  // namespace plumb
