// plumb import: other tools' logs into baseline records.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct ImportCommandOptions {
  std::vector<std::string> files;  // several: logs of the same test, combined as rounds
  std::string format;      // empty: detected
  std::string collective;  // for logs that do not name it
  int ranks = 0;
  std::string label;
  std::string db;
};

void setup_import(CLI::App& app, ImportCommandOptions& options);
int run_import(const ImportCommandOptions& options);

}  // namespace plumb::cli
