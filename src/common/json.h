// The one way plumb reads JSON it did not write in this process (files, HTTP bodies, a tool's
// output): the nesting checked first against a documented limit, then nlohmann's parser.
// nlohmann parses and destroys deep values without recursion, but copies, comparisons and
// dump() recurse once per level: a document nested 100,000 deep would overflow the stack long
// after it was read. No format plumb reads nests anywhere near kMaxJsonDepth.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <optional>
#include <string_view>

namespace plumb {

// Deeper documents are refused (docs/outputs.md, "Limits on input"). simdjson's default is 1024;
// a plumb record nests 6 levels, a Kineto trace 4, an Alertmanager payload 4.
inline constexpr int kMaxJsonDepth = 512;

// The largest count a JSON integer field may hold: the store's INTEGER is a signed 64-bit one.
inline constexpr int64_t kMaxJsonCount = std::numeric_limits<int64_t>::max();

// The byte offset of the bracket that opens level max_depth + 1 of `text` (brackets inside
// strings do not count), or nullopt when the text nests no deeper than max_depth. One pass, no
// allocation; the text need not be valid JSON.
std::optional<size_t> json_depth_exceeded(std::string_view text, int max_depth = kMaxJsonDepth);

// "JSON nested deeper than 512 levels (at byte 1234)" when `text` nests deeper than
// kMaxJsonDepth, else nullopt: for a reader that builds its own tree through nlohmann's SAX
// interface, checked before it parses.
std::optional<std::string> json_too_deep(std::string_view text);

// `text` as JSON, or a plumb::Error (exit 2) naming `source`: "<source>: JSON nested deeper than
// 512 levels (at byte 1234)" or "<source>: not valid JSON: <the parser's reason>" (the token it
// last read cut to 40 bytes: the message stays one short line whatever the input).
nlohmann::json parse_json(std::string_view text, std::string_view source);

// The same with nlohmann's parser callback, which may drop values as they are read (return
// false) or refuse one by throwing; what it throws passes through.
nlohmann::json parse_json(std::string_view text, std::string_view source,
                          const nlohmann::json::parser_callback_t& callback);

// The same without exceptions: a discarded value (is_discarded()) for text that is not valid
// JSON or nests too deep, with the reason in `problem`.
nlohmann::json parse_json_or_discarded(std::string_view text, std::string& problem);

// Typed access to a JSON document's fields; every error names the file and the JSON path:
// "run.json: results[3].bus_bw: expected a number, got \"fast\"".
class JsonFields {
 public:
  using json = nlohmann::json;
  explicit JsonFields(std::string_view file) : file_(file) {}

  // "results[3]" + "busbw" -> "results[3].busbw"; "" + "args" -> "args".
  static std::string at(const std::string& path, const char* key);
  // The value as JSON, cut to one short line.
  static std::string shown(const json& v);
  [[noreturn]] void fail(const std::string& path, const std::string& what) const;

  const json& member(const json& parent, const std::string& path, const char* key) const;
  const json& object(const json& parent, const std::string& path, const char* key) const;
  const json& array(const json& parent, const std::string& path, const char* key) const;
  double number(const json& parent, const std::string& path, const char* key) const;
  // A number, or NaN for null (a figure the tool did not have).
  double number_or_null(const json& parent, const std::string& path, const char* key) const;
  // A whole number from 0 to 2^63 - 1 (the store's INTEGER).
  uint64_t whole(const json& parent, const std::string& path, const char* key) const;
  // A whole number from `low` to `high`.
  int64_t integer(const json& parent, const std::string& path, const char* key, int64_t low,
                  int64_t high) const;
  std::string text(const json& parent, const std::string& path, const char* key) const;
  bool boolean(const json& parent, const std::string& path, const char* key) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace plumb
