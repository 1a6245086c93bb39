// msprobe's dump.json into calls and tensor entries (see the header for the format and its source).
#include "precision/msprobe_dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "common/error.h"
#include "mem/input.h"

namespace plumb::precision {

namespace {

namespace fs = std::filesystem;

// Deeper than any dump msprobe writes (its compare stops at Const.MAX_DEPTH, far less), and
// shallow enough that walking the tree cannot exhaust the stack.
constexpr size_t kMaxDumpDepth = 64;

// A JSON value with its object members in the file's order (nlohmann's json sorts them, and its
// ordered_json looks every key up on insertion: quadratic in a 10,000-call `data`).
struct JNode {
  enum class Kind : uint8_t { kNull, kBool, kInt, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool is_negative_int = false;
  int64_t integer = 0;  // kInt
  double number = 0;    // kInt and kNumber
  std::string text;     // kString
  std::vector<JNode> items;       // kArray items; kObject values
  std::vector<std::string> keys;  // kObject keys, one per item
};

JNode node_of(JNode::Kind kind) {
  JNode n;
  n.kind = kind;
  return n;
}

const JNode* member(const JNode& object, std::string_view key) {
  for (size_t i = 0; i < object.keys.size(); ++i) {
    if (object.keys[i] == key) return &object.items[i];
  }
  return nullptr;
}

// nlohmann's SAX interface building the JNode tree, with an explicit stack (no recursion).
class TreeBuilder {
 public:
  explicit TreeBuilder(JNode* root) : root_(root) {}
  bool null() { return put(JNode{}) != nullptr; }
  bool boolean(bool) { return put(node_of(JNode::Kind::kBool)) != nullptr; }
  bool number_integer(int64_t v) {
    JNode n = node_of(JNode::Kind::kInt);
    n.integer = v;
    n.number = static_cast<double>(v);
    n.is_negative_int = v < 0;
    return put(std::move(n)) != nullptr;
  }
  bool number_unsigned(uint64_t v) {
    JNode n = node_of(JNode::Kind::kNumber);
    n.number = static_cast<double>(v);
    if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      n.kind = JNode::Kind::kInt;
      n.integer = static_cast<int64_t>(v);
    }
    return put(std::move(n)) != nullptr;
  }
  bool number_float(double v, const std::string&) {
    JNode n = node_of(JNode::Kind::kNumber);
    n.number = v;
    return put(std::move(n)) != nullptr;
  }
  bool string(std::string& v) {
    JNode n = node_of(JNode::Kind::kString);
    n.text = std::move(v);
    return put(std::move(n)) != nullptr;
  }
  bool binary(nlohmann::json::binary_t&) { return put(JNode{}) != nullptr; }
  bool start_object(size_t) { return open(JNode::Kind::kObject); }
  bool key(std::string& k) {
    stack_.back()->keys.push_back(std::move(k));
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(size_t) { return open(JNode::Kind::kArray); }
  bool end_array() { return close(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::json::exception& ex) {
    error_at_ = position;
    error_ = ex.what();
    return false;
  }

  std::optional<size_t> error_at_;
  std::string error_;

 private:
  JNode* put(JNode node) {
    if (stack_.empty()) {
      *root_ = std::move(node);
      return root_;
    }
    JNode* parent = stack_.back();
    parent->items.push_back(std::move(node));
    return &parent->items.back();
  }
  bool open(JNode::Kind kind) {
    if (stack_.size() >= kMaxDumpDepth) {
      error_ = fmt::format("values nested deeper than {} levels", kMaxDumpDepth);
      return false;
    }
    stack_.push_back(put(node_of(kind)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  JNode* root_;
  std::vector<JNode*> stack_;  // the open arrays and objects; only the last one grows
};

// Python's json.dump writes float('nan'), inf and -inf as the bare words NaN, Infinity and
// -Infinity, which are not JSON. Each is quoted, so the parser takes it as a string that
// stat_value() reads back as the number. `inserted` gets the original offset of each (for
// messages); nullopt when there is none (the common case: no copy).
std::optional<std::string> quote_bare_words(std::string_view text, std::vector<size_t>& inserted) {
  static constexpr std::string_view kWords[] = {"NaN", "Infinity", "-Infinity"};
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;
    for (std::string_view word : kWords) {
      if (text.substr(i, word.size()) != word) continue;
      out.append(text.substr(copied, i - copied)).append("\"").append(word).append("\"");
      inserted.push_back(i);
      i += word.size() - 1;
      copied = i + 1;
      break;
    }
  }
  if (inserted.empty()) return std::nullopt;
  out.append(text.substr(copied));
  return out;
}

// The offset in the original text of byte `at` of the quoted text (2 quotes per word before it).
size_t original_offset(size_t at, const std::vector<size_t>& inserted) {
  size_t shift = 0;
  for (size_t word : inserted) {
    if (word + shift >= at) break;
    shift += 2;
  }
  return at - std::min(at, shift);
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error
// while parsing value - ..." without the part the offset already says.
std::string parse_error_text(const std::string& what) {
  const size_t column = what.find("column ");
  const size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

JNode parse_tree(std::string_view text, const std::string& path) {
  std::vector<size_t> inserted;
  const std::optional<std::string> quoted = quote_bare_words(text, inserted);
  const std::string_view json_text = quoted ? std::string_view(*quoted) : text;
  JNode root;
  TreeBuilder builder(&root);
  if (nlohmann::json::sax_parse(json_text.begin(), json_text.end(), &builder)) return root;
  if (builder.error_at_) {
    // nlohmann's position is one past the byte it stopped at.
    const size_t at = original_offset(*builder.error_at_ > 0 ? *builder.error_at_ - 1 : 0, inserted);
    throw Error(fmt::format("{}: not valid JSON at byte {}: {}", path, at, parse_error_text(builder.error_)));
  }
  throw Error(fmt::format("{}: {}", path, builder.error_));
}

bool is_leaf(const JNode& n) {
  if (n.kind != JNode::Kind::kObject) return false;
  const JNode* type = member(n, "type");
  return type != nullptr && type->kind == JNode::Kind::kString;
}

std::string quoted_key(std::string_view key) { return nlohmann::json(std::string(key)).dump(); }

// Turns the tree into calls and tensors, naming every problem by its place in the file.
class Extractor {
 public:
  Extractor(const std::string& path, MsprobeDump& dump) : path_(path), dump_(dump) {}

  void top(const JNode& root) {
    if (root.kind != JNode::Kind::kObject) {
      fail("", "the top level is not a JSON object (msprobe's dump.json holds task, level, framework and data)");
    }
    dump_.task = text_field(root, "task", "", true);
    dump_.level = text_field(root, "level", "", false);
    dump_.framework = text_field(root, "framework", "", false);
    dump_.dump_data_dir = text_field(root, "dump_data_dir", "", false);
    const JNode* data = member(root, "data");
    if (data == nullptr || data->kind != JNode::Kind::kObject) {
      fail("", "'data' is missing or not an object (msprobe's dump.json maps each API call to its tensors there)");
    }
    std::unordered_set<std::string_view> apis;
    dump_.calls.reserve(data->keys.size());
    for (size_t i = 0; i < data->keys.size(); ++i) {
      const std::string& api = data->keys[i];
      const std::string where = "data[" + quoted_key(api) + "]";
      if (!apis.insert(api).second) fail(where, "the call appears twice");
      if (data->items[i].kind != JNode::Kind::kObject) fail(where, "is not an object");
      call(api, data->items[i], where);
    }
  }

 private:
  // The sections of a call's entry and the role of their tensors (msprobe's IO_NAME_MAPPING).
  struct Section {
    std::string_view field, suffix;
    PairRole role;
  };
  static constexpr Section kSections[] = {
      {"input_args", ".input", PairRole::kInput},  {"input_kwargs", ".input", PairRole::kInput},
      {"input", ".input", PairRole::kInput},       {"parameters", ".parameters", PairRole::kParameter},
      {"output", ".output", PairRole::kOutput},
  };

  void call(const std::string& api, const JNode& entry, const std::string& where) {
    DumpCall c{api, {}};
    bool any_section = false;
    for (size_t i = 0; i < entry.keys.size(); ++i) {
      const auto section = std::find_if(std::begin(kSections), std::end(kSections),
                                        [&](const Section& s) { return s.field == entry.keys[i]; });
      if (section == std::end(kSections)) continue;
      any_section = true;
      const JNode& node = entry.items[i];
      const std::string prefix = api + std::string(section->suffix);
      walk(node, is_leaf(node) ? prefix + ".0" : prefix, section->role, where + "." + entry.keys[i], c);
    }
    // parameters_grad (and any other entry without sections): the entry is the tensors' mapping,
    // a one-item list not indexed (msprobe names "Module.fc.Linear.parameters_grad.0.weight").
    if (!any_section) {
      in_grads_ = api.find(".parameters_grad") != std::string::npos;
      walk(entry, api, in_grads_ ? PairRole::kParameter : PairRole::kOutput, where, c);
      in_grads_ = false;
    }
    dump_.calls.push_back(std::move(c));
  }

  void walk(const JNode& node, const std::string& name, PairRole role, const std::string& where, DumpCall& c) {
    if (node.kind == JNode::Kind::kArray) {
      const bool index = !(in_grads_ && node.items.size() == 1);
      for (size_t i = 0; i < node.items.size(); ++i) {
        walk(node.items[i], index ? fmt::format("{}.{}", name, i) : name, role, fmt::format("{}[{}]", where, i), c);
      }
    } else if (node.kind == JNode::Kind::kObject) {
      if (is_leaf(node)) {
        if (member(node, "dtype") != nullptr && member(node, "shape") != nullptr) tensor(node, name, role, where, c);
        return;  // a value that is not a tensor (int, slice, torch.Size, None ...): nothing to compare
      }
      for (size_t i = 0; i < node.keys.size(); ++i) {
        walk(node.items[i], name + "." + node.keys[i], role, where + "." + node.keys[i], c);
      }
    }
  }

  void tensor(const JNode& node, const std::string& name, PairRole role, const std::string& where, DumpCall& c) {
    DumpTensor t;
    t.key = name;
    t.role = role;
    t.dtype = text_field(node, "dtype", where, true);
    const JNode* shape = member(node, "shape");
    if (shape->kind != JNode::Kind::kArray) fail(where, "'shape' is not a list of sizes");
    for (const JNode& d : shape->items) {
      if (d.kind != JNode::Kind::kInt || d.is_negative_int) fail(where, "'shape' is not a list of sizes");
      t.shape.push_back(d.integer);
    }
    t.max = stat_value(node, "Max", where);
    t.min = stat_value(node, "Min", where);
    t.mean = stat_value(node, "Mean", where);
    t.norm = stat_value(node, "Norm", where);
    t.data_name = text_field(node, "data_name", where, false);
    if (t.data_name == "-1") t.data_name.clear();  // msprobe's "no file"
    if (t.data_name.find_first_of("/\\") != std::string::npos || t.data_name == "." || t.data_name == "..") {
      fail(where, fmt::format("'data_name' is {}, not a file name under dump_tensor_data", quoted_key(t.data_name)));
    }
    if (!keys_.insert(t.key).second) fail(where, fmt::format("a second tensor named {}", quoted_key(t.key)));
    c.tensors.push_back(std::move(t));
  }

  std::optional<double> stat_value(const JNode& node, std::string_view field, const std::string& where) {
    const JNode* v = member(node, field);
    if (v == nullptr || v->kind == JNode::Kind::kNull) return std::nullopt;
    if (v->kind == JNode::Kind::kInt || v->kind == JNode::Kind::kNumber) return v->number;
    if (v->kind == JNode::Kind::kString) {
      static constexpr std::pair<std::string_view, double> kWords[] = {
          {"NaN", std::numeric_limits<double>::quiet_NaN()}, {"nan", std::numeric_limits<double>::quiet_NaN()},
          {"Infinity", std::numeric_limits<double>::infinity()}, {"inf", std::numeric_limits<double>::infinity()},
          {"-Infinity", -std::numeric_limits<double>::infinity()}, {"-inf", -std::numeric_limits<double>::infinity()},
      };
      for (const auto& [word, value] : kWords) {
        if (v->text == word) return value;
      }
    }
    fail(where, fmt::format("'{}' is not a number", field));
  }

  std::string text_field(const JNode& node, std::string_view field, const std::string& where, bool required) {
    const JNode* v = member(node, field);
    if (v != nullptr && v->kind == JNode::Kind::kString) return v->text;
    if (v == nullptr || v->kind == JNode::Kind::kNull) {
      if (!required) return {};
      fail(where, fmt::format("'{}' is missing", field));
    }
    fail(where, fmt::format("'{}' is not a string", field));
  }

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(where.empty() ? fmt::format("{}: {}", path_, what) : fmt::format("{}: {}: {}", path_, where, what));
  }

  const std::string& path_;
  MsprobeDump& dump_;
  std::unordered_set<std::string> keys_;
  bool in_grads_ = false;  // walking a parameters_grad entry: its one-item lists are not indexed
};

// "rank10" after "rank9": runs of digits compared as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string_view da = std::string_view(a).substr(i, ie - i), db = std::string_view(b).substr(j, je - j);
      const size_t za = da.find_first_not_of('0'), zb = db.find_first_not_of('0');
      const std::string_view na = za == std::string_view::npos ? "" : da.substr(za);
      const std::string_view nb = zb == std::string_view::npos ? "" : db.substr(zb);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

bool has_dump_json(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "dump.json", ec);
}

std::vector<fs::path> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec)) out.push_back(it->path());
  }
  return out;
}

}  // namespace

size_t MsprobeDump::tensors() const {
  size_t n = 0;
  for (const DumpCall& c : calls) n += c.tensors.size();
  return n;
}

std::string MsprobeDump::tensor_path(const DumpTensor& t) const {
  return (fs::path(dir) / "dump_tensor_data" / t.data_name).string();
}

MsprobeDump parse_dump_json(std::string_view text, const std::string& path, const std::string& dir) {
  MsprobeDump dump;
  dump.path = path;
  dump.dir = dir;
  const JNode root = parse_tree(text, path);
  Extractor(path, dump).top(root);
  return dump;
}

MsprobeDump read_dump(const std::string& dump_json_path) {
  const mem::InputBytes input = mem::load_input(dump_json_path);
  const fs::path parent = fs::path(dump_json_path).parent_path();
  return parse_dump_json(input.bytes(), dump_json_path, parent.empty() ? "." : parent.string());
}

std::vector<std::string> find_dump_dirs(const std::string& root) {
  const fs::path base(root);
  if (has_dump_json(base)) return {""};
  std::vector<std::string> found;
  for (const fs::path& level1 : subdirectories(base)) {
    if (has_dump_json(level1)) {
      found.push_back(level1.filename().string());
      continue;
    }
    for (const fs::path& level2 : subdirectories(level1)) {
      if (has_dump_json(level2)) found.push_back((level1.filename() / level2.filename()).generic_string());
    }
  }
  std::sort(found.begin(), found.end(), natural_less);
  return found;
}

TensorStats dump_stats(const DumpTensor& t) {
  TensorStats s;
  uint64_t elements = 1;
  for (int64_t d : t.shape) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) {
      elements = std::numeric_limits<uint64_t>::max();
      break;
    }
  }
  s.elements = elements;
  s.max = t.max.value_or(kUndefined);
  s.min = t.min.value_or(kUndefined);
  s.mean = t.mean.value_or(kUndefined);
  s.l2norm = t.norm.value_or(kUndefined);
  return s;
}

}  // namespace plumb::precision
