// plumb's config file: what a site sets once for every user and every node (docs/store.md, "The
// config file"). Two files are read, the user's first: $XDG_CONFIG_HOME/plumb/config.yaml (else
// ~/.config/plumb/config.yaml), then /etc/plumb/config.yaml; a key set in the user's file wins
// over the same key in the site's. Today one key:
//
//   store: postgresql://plumb@db.example.org/plumb   # the default store of every command
//
// A file that is there but wrong (not YAML, an unknown or repeated key, an empty value) is an Error
// naming the file and line, never skipped: a node that silently fell back to its own SQLite file
// would lose its records from the team's store. (What a store value may be: baseline/store.h.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb {

// A value of the config file and where it was set ("/etc/plumb/config.yaml:3").
struct ConfigValue {
  std::string value;
  std::string where;
};

struct Config {
  std::optional<ConfigValue> store;   // the default store: a file path or a postgresql:// URL
  std::vector<std::string> read;      // the files found and read, the user's first
  std::vector<std::string> looked_in; // every file looked for, in order
};

// The files looked for, the user's first: $XDG_CONFIG_HOME/plumb/config.yaml (else
// $HOME/.config/plumb/config.yaml, else the password database's home; left out when none is
// known), then /etc/plumb/config.yaml.
std::vector<std::string> config_paths();

// One file's settings from its text; `source` names it in errors ("<source>:<line>: <problem>").
Config parse_config(std::string_view text, const std::string& source);

// The config of `paths` (the first one that sets a key wins); a path with no file there is passed
// over. Throws plumb::Error "<file>:<line>: <problem>".
Config read_config(const std::vector<std::string>& paths);

// The user's home folder: $HOME, else the password database's entry for this user; empty when
// neither is known.
std::string home_folder();

}  // namespace plumb
