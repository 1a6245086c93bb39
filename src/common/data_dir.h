// Where plumb's data folder is (the catalogs of models, hardware and clusters, the validation
// sets): in a build tree, an installed package or a package extracted anywhere (dpkg -x).
#pragma once

#include <functional>
#include <string>

namespace plumb {

struct DataDirSources {
  std::string env;         // $PLUMB_DATA_DIR
  std::string legacy_env;  // $PLUMB_DATA, its older name
  std::string exe;         // this binary's path (/proc/self/exe), empty if unknown
  std::string built_in;    // the source tree's data/ the binary was built from
};

// The first of: $PLUMB_DATA_DIR as given (the user said so, even where it does not exist: the
// message then names it), $PLUMB_DATA, <exe's folder>/../share/plumb where that is a folder (an
// installed or relocated package: /usr/bin/plumb → /usr/share/plumb), the built-in source path.
std::string resolve_data_dir(const DataDirSources& sources,
                             const std::function<bool(const std::string&)>& is_dir);

// This process's data folder (resolved once).
const std::string& data_dir();

}  // namespace plumb
