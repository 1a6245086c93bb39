// Small steps over yaml-cpp's emitter for manifests: strings that YAML would read back as another
// type ("8", "true", "null") are double-quoted, since the Kubernetes API refuses a number where it
// wants a string (an env value, a label).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string_view>

namespace plumb::k8s {

// `text` as a string scalar.
void scalar(YAML::Emitter& out, std::string_view text);

// key: value pairs inside a map.
void text(YAML::Emitter& out, std::string_view key, std::string_view value);
void number(YAML::Emitter& out, std::string_view key, long long value);
void flag(YAML::Emitter& out, std::string_view key, bool value);

// key: followed by a value the caller emits (a map or a sequence).
void key(YAML::Emitter& out, std::string_view key);

// True when a plain scalar `text` would not read back as that string: empty, a number, a
// boolean or null in YAML 1.1 or 1.2, or text starting with a character YAML gives a meaning.
bool needs_quotes(std::string_view text);

}  // namespace plumb::k8s
