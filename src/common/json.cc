#include "common/json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/error.h"

namespace plumb {
namespace {

// The longest token of the input a message quotes: nlohmann's "last read" is the whole token,
// which for an unterminated string is the rest of the input.
constexpr size_t kMaxQuoted = 40;

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, and the token it
// quotes ("; last read: '...'") cut to kMaxQuoted bytes.
std::string reason(const nlohmann::json::exception& e) {
  std::string_view what = e.what();
  if (what.starts_with("[json.exception.")) {
    if (size_t end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  std::string out(what);
  static constexpr std::string_view kLastRead = "; last read: '";
  const size_t from = out.find(kLastRead);
  if (from == std::string::npos) return out;
  // The token ends before "; expected ..." when the parser names what it expected, else at the
  // message's last quote.
  const size_t token = from + kLastRead.size();
  size_t close = out.rfind("'; expected ");
  if (close == std::string::npos || close < token) close = out.rfind('\'');
  if (close == std::string::npos || close < token || close - token <= kMaxQuoted) return out;
  return out.substr(0, token + kMaxQuoted) + "..." + out.substr(close);
}

nlohmann::json discarded() { return nlohmann::json(nlohmann::json::value_t::discarded); }

// The largest whole() accepts: the store's INTEGER is a signed 64-bit one.
constexpr uint64_t kMaxWhole = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

}  // namespace

std::optional<size_t> json_depth_exceeded(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character, whatever it is
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return std::nullopt;
}

std::optional<std::string> json_too_deep(std::string_view text) {
  const std::optional<size_t> at = json_depth_exceeded(text);
  if (!at) return std::nullopt;
  return fmt::format("JSON nested deeper than {} levels (at byte {})", kMaxJsonDepth, *at);
}

nlohmann::json parse_json_or_discarded(std::string_view text, std::string& problem) {
  if (std::optional<std::string> deep = json_too_deep(text)) {
    problem = std::move(*deep);
    return discarded();
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    problem = "not valid JSON: " + reason(e);
    return discarded();
  }
}

nlohmann::json parse_json(std::string_view text, std::string_view source) {
  std::string problem;
  nlohmann::json out = parse_json_or_discarded(text, problem);
  if (out.is_discarded()) throw Error(fmt::format("{}: {}", source, problem));
  return out;
}

nlohmann::json parse_json(std::string_view text, std::string_view source,
                          const nlohmann::json::parser_callback_t& callback) {
  if (std::optional<std::string> deep = json_too_deep(text)) {
    throw Error(fmt::format("{}: {}", source, *deep));
  }
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", source, reason(e)));
  }
}

std::string JsonFields::at(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

std::string JsonFields::shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr size_t kMaxShown = 40;  // keep the message one line for a whole object
  if (s.size() > kMaxShown) s = s.substr(0, kMaxShown) + "...";
  return s;
}

void JsonFields::fail(const std::string& path, const std::string& what) const {
  throw Error(fmt::format("{}: {}: {}", file_, path, what));
}

const JsonFields::json& JsonFields::member(const json& parent, const std::string& path,
                                           const char* key) const {
  if (!parent.is_object()) fail(path, "expected an object, got " + shown(parent));
  const auto it = parent.find(key);
  if (it == parent.end()) fail(at(path, key), "missing");
  return *it;
}

const JsonFields::json& JsonFields::object(const json& parent, const std::string& path,
                                           const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_object()) fail(at(path, key), "expected an object, got " + shown(v));
  return v;
}

const JsonFields::json& JsonFields::array(const json& parent, const std::string& path,
                                          const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_array()) fail(at(path, key), "expected a list, got " + shown(v));
  return v;
}

double JsonFields::number(const json& parent, const std::string& path, const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    fail(at(path, key), "expected a number, got " + shown(v));
  }
  return v.get<double>();
}

double JsonFields::number_or_null(const json& parent, const std::string& path,
                                  const char* key) const {
  const json& v = member(parent, path, key);
  // NaN is written as null; a document built in memory may still hold the NaN itself.
  if (v.is_null() || (v.is_number_float() && std::isnan(v.get<double>()))) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return number(parent, path, key);
}

uint64_t JsonFields::whole(const json& parent, const std::string& path, const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxWhole) {
    fail(at(path, key), fmt::format("expected a whole number from 0 to {}, got {}", kMaxWhole,
                                    shown(v)));
  }
  return v.get<uint64_t>();
}

int64_t JsonFields::integer(const json& parent, const std::string& path, const char* key,
                            int64_t low, int64_t high) const {
  const json& v = member(parent, path, key);
  // nlohmann reads every non-negative number as unsigned: both bounds apply to it as well.
  const auto fits_unsigned = [&] {
    const uint64_t u = v.get<uint64_t>();
    return (low <= 0 || u >= static_cast<uint64_t>(low)) && high >= 0 &&
           u <= static_cast<uint64_t>(high);
  };
  const bool fits = v.is_number_integer() &&
                    (v.is_number_unsigned() ? fits_unsigned()
                                            : v.get<int64_t>() >= low && v.get<int64_t>() <= high);
  if (!fits) {
    fail(at(path, key), fmt::format("expected a whole number from {} to {}, got {}", low, high,
                                    shown(v)));
  }
  return v.get<int64_t>();
}

std::string JsonFields::text(const json& parent, const std::string& path, const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_string()) fail(at(path, key), "expected a string, got " + shown(v));
  return v.get<std::string>();
}

bool JsonFields::boolean(const json& parent, const std::string& path, const char* key) const {
  const json& v = member(parent, path, key);
  if (!v.is_boolean()) fail(at(path, key), "expected true or false, got " + shown(v));
  return v.get<bool>();
}

}  // namespace plumb
