#include "cli/serve_command.h"

#include <CLI/CLI.hpp>

#include "cli/serve_subcommands.h"

namespace plumb::cli {

void setup_serve(CLI::App& app, ServeOptions& options) {
  app.require_subcommand(1);
  for (auto setup : {setup_serve_bench, setup_serve_peak, setup_serve_mock}) {
    setup(app, options.selected);
  }
}

int run_serve(const ServeOptions& options) { return options.selected ? options.selected() : 2; }

}  // namespace plumb::cli
