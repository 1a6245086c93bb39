// plumb recover: the recovery steps of `plumb run` once, on this host — for a site that runs them
// on every node of an allocation (`plumb run --on-failure 'srun --ntasks-per-node=1 plumb recover
// --recover reset-device,link-check'`); a host whose link stays down is printed as
// "plumb: unusable host NAME", the line `plumb run` reads from an --on-failure command.
#pragma once

#include "cli/recovery_options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct RecoverOptions {
  RecoveryArgs recovery;
  bool json = false;
};

void setup_recover(CLI::App& app, RecoverOptions& options);
int run_recover(const RecoverOptions& options);

}  // namespace plumb::cli
