// One plumb serve bench sweep, shared by plumb serve bench and the serving part of a baseline set
// (plumb baseline --workload --serve-url, cli/baseline_workload.cc): the setup as plumb.serve/1
// names it, and each load point run --repeat times with its warm-up excluded, pooled and
// summarized (docs/serve.md).
#pragma once

#include <functional>

#include <string>
#include <vector>

#include "cli/serve_options.h"
#include "common/progress.h"
#include "serve/result.h"

namespace plumb::cli {

struct ServeBenchOptions {
  ServeEndpointOptions endpoint;
  ServeLoadOptions load;
  ServeReportOptions report;
};

// The setup of a sweep over `points` (non-empty): the URL with its password masked, the arrival,
// the dataset ("random 512/128", "sharegpt FILE"), the SLO parsed from --slo.
serve::ServeSetup make_serve_setup(const ServeBenchOptions& options,
                                   const std::vector<LoadPoint>& points);

// One load point, --repeat times; each kind of failed request is one line on stderr, prefixed
// by `who` ("plumb serve bench"). Stops early on SIGINT/SIGTERM (cli/stop_signal.h).
serve::ServeRun run_serve_point(const ServeBenchOptions& options, const LoadPoint& point,
                                const serve::Slo& slo, Progress& progress, const std::string& who);

// A reader that closes plumb's output early (`plumb serve bench ... | head -1`) must not kill the
// run before its --json file and --store record are written: SIGPIPE is ignored for the run (as
// plumb run does: cli/supervision.cc), and end_on_closed_stdout, once every output is written,
// drops what the reader did not take, quietly: standard output then goes to /dev/null and the
// command ends with its own verdict. Output to a terminal, a file or an open pipe is unchanged.
void ignore_closed_pipes();
void end_on_closed_stdout();

// Runs every one of `outputs` (the --store record, the --json file, the --html page) even when
// an earlier one fails, so that one full disk loses no other output; each failure after the first
// is said on stderr ("plumb: error: ..."), the first is thrown again at the end.
void write_all_outputs(const std::vector<std::function<void()>>& outputs);

}  // namespace plumb::cli
