// plumb checkpoint seal|verify|find DIR: writes a checkpoint's manifest (plumb-checkpoint.json:
// every file with its size and SHA-256), checks the files against it, and says which checkpoint
// `plumb run --checkpoint-dir DIR` would resume from (docs/run.md, "plumb checkpoint").
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

enum class CheckpointMode { kSeal, kVerify, kFind };

struct CheckpointOptions {
  CheckpointMode mode = CheckpointMode::kSeal;
  std::string dir;
  int64_t step = -1;   // seal: -1 takes the number DIR's name ends with
  bool force = false;  // seal: replace an existing manifest
  std::string json;    // find: plumb.checkpoint-find/1 here ("-": standard output)
};

void setup_checkpoint(CLI::App& app, CheckpointOptions& options);
int run_checkpoint(const CheckpointOptions& options);

}  // namespace plumb::cli
