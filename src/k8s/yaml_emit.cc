#include "k8s/yaml_emit.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace plumb::k8s {
namespace {

// Plain scalars YAML 1.1 (yaml-cpp, older kubectl) or 1.2 (the core schema) resolves to a
// boolean or null.
constexpr std::array<std::string_view, 13> kReserved = {
    "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", ".nan", "<<"};

std::string lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool numeric_start(std::string_view text) {
  size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i < text.size() && text[i] == '.') ++i;
  return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
}

}  // namespace

bool needs_quotes(std::string_view text) {
  if (text.empty()) return true;
  const std::string l = lower(text);
  const std::string_view trimmed = l[0] == '-' || l[0] == '+' ? std::string_view(l).substr(1) : l;
  if (std::find(kReserved.begin(), kReserved.end(), trimmed) != kReserved.end()) return true;
  return numeric_start(text);
}

void scalar(YAML::Emitter& out, std::string_view text) {
  const std::string s(text);
  if (needs_quotes(text)) {
    out << YAML::DoubleQuoted << s;
  } else {
    out << s;
  }
}

void key(YAML::Emitter& out, std::string_view name) { out << YAML::Key << std::string(name) << YAML::Value; }

void text(YAML::Emitter& out, std::string_view name, std::string_view value) {
  key(out, name);
  scalar(out, value);
}

void number(YAML::Emitter& out, std::string_view name, long long value) {
  key(out, name);
  out << value;
}

void flag(YAML::Emitter& out, std::string_view name, bool value) {
  key(out, name);
  out << value;
}

}  // namespace plumb::k8s
