// plumb list, plumb show ID|latest, plumb export ID|latest: reading the store.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct StoreOptions {
  std::string db;        // empty: the default store
  std::string id = "latest";
  std::string output;    // export: file, or empty/"-" for standard output
  int limit = 50;        // list
};

void setup_list(CLI::App& app, StoreOptions& options);
void setup_show(CLI::App& app, StoreOptions& options);
void setup_export(CLI::App& app, StoreOptions& options);
int run_list(const StoreOptions& options);
int run_show(const StoreOptions& options);
int run_export(const StoreOptions& options);

}  // namespace plumb::cli
