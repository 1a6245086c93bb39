// --db's help, one text on every command that opens the store (docs/store.md, "Choosing the
// store"): where the store is when --db is not given.
#pragma once

namespace plumb::cli {

inline constexpr const char* kStoreOptionHelp =
    "The store: a file, or postgresql://USER@HOST:PORT/DB (default $PLUMB_DB, else the config "
    "file's store, else $XDG_DATA_HOME/plumb/plumb.db; plumb --version says which; docs/store.md)";

}  // namespace plumb::cli
