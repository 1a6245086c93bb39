// Strict reading of plumb's YAML files (model, hardware and cluster descriptions, the comm cluster
// map): a file that cannot be read is one plain line, and every map's keys are checked against
// the keys its reader knows, so a typo or a repeated key cannot silently change a result.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/number_range.h"

namespace plumb {

// One problem with a YAML file, at a 1-based line (0: the file as a whole).
struct YamlProblem {
  int line = 0;
  std::string message;
};

// Problems with the keys of the map `map`, in file order:
//   "duplicate key 'hidden' (first at line 3)"
//   "unknown key 'hiden' in <where> (did you mean 'hidden'?); expected one of a, b, c"
//   "a key must be a plain name, one of a, b, c"
// yaml-cpp 0.7 keeps every entry of a map when it iterates, a repeated key included, while
// map[key] returns the first: without this check the second value would be silently ignored.
// `where` names the map in messages ("moe", "a rack"); empty: the file's top level.
std::vector<YamlProblem> key_problems(const YAML::Node& map, std::span<const std::string> known,
                                      std::string_view where = {});

// The number a YAML scalar holds when it is within `range`; otherwise nothing, and `problem`
// says "must be <range>, got '<value>'" (a list or a map: "got a list").
std::optional<double> yaml_number(const YAML::Node& value, const NumberRange& range,
                                  std::string& problem);

// The line of a node in its file, 1-based.
inline int yaml_line(const YAML::Node& node) { return node.Mark().line + 1; }

// The largest file read_text_file reads: plumb's YAML and CSV inputs are a few KiB; /dev/zero or
// a mistaken multi-GB file must not fill the memory.
inline constexpr size_t kMaxTextFileBytes = size_t{16} << 20;

// The whole text of a file. A directory, a file that does not exist or cannot be read, or one
// over kMaxTextFileBytes is a plumb::Error "<path>: is a directory, not a <what>", "<path>: cannot
// read the <what>: <reason>" or "<path>: more than 16 MiB, not a <what>" (never the C++ library's
// text). `what` names the file's role: "model file".
std::string read_text_file(const std::string& path, std::string_view what);

// The deepest YAML plumb reads (docs/outputs.md, "Limits on input"). Its files nest 6 levels or
// so; yaml-cpp 0.7 refuses 500 itself, as "bad file". A loaded document can still be deeper than
// its text, or cyclic ("&a [*a]"), through aliases, and readers, copies and the emitter recurse
// once per level.
inline constexpr int kMaxYamlDepth = 256;
// Aliases repeat a node wherever they stand: nine lines of them can stand for a billion nodes.
// A document may stand for at most this many nodes, or 2 per byte of its text if that is more
// (no node takes less than half a byte of text without aliases).
inline constexpr size_t kMaxYamlNodes = size_t{1} << 20;

// `text` as one YAML document, or a plumb::Error naming `source`:
//   "<source>:<line>: not valid YAML: <reason>"
//   "<source>:<line>: YAML nested deeper than 256 levels" (without the line past yaml-cpp's own
//   limit of 500)
//   "<source>: YAML aliases expand to more than 1048576 nodes"
YAML::Node load_yaml(std::string_view text, std::string_view source);
// Every document of a multi-document stream ("---" between them), each checked as above.
std::vector<YAML::Node> load_yaml_documents(std::string_view text, std::string_view source);

// read_text_file, then load_yaml.
YAML::Node load_yaml_file(const std::string& path, std::string_view what);

}  // namespace plumb
