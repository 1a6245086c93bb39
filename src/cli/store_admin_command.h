// plumb store copy FROM TO | plumb store check: moving a store's records into another (SQLite
// into PostgreSQL and back) and checking a store's schema and integrity (docs/store.md). The
// logic lives in baseline/store_copy.h and baseline/store_integrity.h.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct StoreAdminOptions {
  std::function<int()> selected;  // what the chosen subcommand runs
};

struct StoreCopyOptions {
  std::string from;
  std::string to;
  bool progress = false;  // draw the progress line even when stderr is not a terminal
};

struct StoreCheckOptions {
  std::string db;  // empty: the default store
};

void setup_store(CLI::App& app, StoreAdminOptions& options);
int run_store(const StoreAdminOptions& options);
// 0 when copied; Error (exit 2) for a missing FROM, FROM == TO, an unreachable server.
int run_store_copy(const StoreCopyOptions& options);
// 0 when every check holds, 1 when one fails.
int run_store_check(const StoreCheckOptions& options);

}  // namespace plumb::cli
