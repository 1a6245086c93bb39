#include "cli/run_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "baseline/recovery_store.h"
#include "baseline/store.h"
#include "cli/supervision.h"
#include "cli/store_option.h"
#include "common/error.h"

namespace plumb::cli {

void setup_run(CLI::App& app, RunOptions& o) {
  app.add_option("COMMAND", o.command, "The job, after --: a training script or a launcher");
  add_supervision_options(app, o);
  app.add_option("--events", o.events,
                 "Write plumb.run-events/1 JSONL here (one that cannot be written stops the run "
                 "before the job starts)");
  app.add_option("--metrics", o.metrics,
                 "Keep a Prometheus textfile (node_exporter's textfile collector) of restarts, "
                 "failures, detection, recovery and downtime here");
  app.add_flag("--save", o.save, "Store the recovery baseline (plumb show, plumb diff)");
  app.add_option("--label", o.label, "Label of the stored record");
  app.add_option("--db", o.db, kStoreOptionHelp);
  app.footer("Exit status: 0 the job finished with 0; 1 gave up after too many failures, or a "
             "drill that could not inject every fault or saw a restart not resume after its "
             "checkpoint; 2 bad usage (no command after --, a command that does not exist, a "
             "pattern RE2 refuses, an --events or --metrics file that cannot be written); 130 "
             "stopped by SIGINT/SIGTERM.");
}

int run_run(const RunOptions& o) {
  if (o.command.empty()) {
    throw Error("no command after --: plumb run [options] -- COMMAND [ARGS...]");
  }
  if (o.save) {  // a store that cannot be opened is said now, not after a week of training
    baseline::Store(baseline::store_location(o.db));
  }
  SupervisedRun run = supervise_job(o, JobHooks{});
  if (o.save) {
    std::cerr << fmt::format("plumb run: saved as baseline {}\n",
                             baseline::save_recovery(run.baseline, o.db, o.label))
              << std::flush;
  }
  return run.exit_code;
}

}  // namespace plumb::cli
