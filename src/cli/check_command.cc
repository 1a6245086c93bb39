#include "cli/check_command.h"

#include <CLI/CLI.hpp>

#include "cli/check_subcommands.h"
#include "common/error.h"

namespace plumb::cli {

void setup_check(CLI::App& app, CheckOptions& options) {
  app.require_subcommand(1);
  for (auto setup : {setup_check_node, setup_check_genconf, setup_check_list, setup_check_history,
                     setup_check_burn_in, setup_check_links}) {
    setup(app, options.selected);
  }
}

int run_check(const CheckOptions& options) {
  if (!options.selected) return static_cast<int>(kCheckCouldNotRun);
  try {
    return options.selected();
  } catch (const Error& e) {
    throw Error(e.what(), kCheckCouldNotRun);
  }
}

}  // namespace plumb::cli
