// One plumb serve bench sweep, shared by plumb serve bench and the serving part of a baseline set
// (plumb baseline --workload --serve-url, cli/baseline_workload.cc): the setup as plumb.serve/1
// names it, and each load point run --repeat times with its warm-up excluded, pooled and
// summarized (docs/serve.md).
#pragma once

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

}  // namespace plumb::cli
