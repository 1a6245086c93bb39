// plumb baseline --workload [options] -- COMMAND [ARGS...]: the whole baseline set from one real
// training job (issue 29; docs/baseline.md, "plumb baseline --workload"). Topology and versions,
// the comm sweep, then COMMAND under the supervisor for --steps N with its traces analysed as
// plumb step does (the model part), the memory baseline of its train-events (the memory part),
// and a drill of --drill K faults on the same job (the recovery part, whose first resumed attempt
// gives the checkpoint check its load), and with --serve-url a plumb serve bench sweep of an
// inference server (the serving part); stored as one record.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "cli/baseline_command.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// The parts --skip takes, in the order they are taken (topology and versions are always taken).
inline constexpr const char* kSkippableParts[] = {"comm", "model", "memory", "recovery", "serve"};

// The serving part's reason when --serve-url was not given.
inline constexpr const char* kServeNotAsked = "not asked for: no --serve-url";

// The serving part into `r`: skipped (--skip serve), not asked for (no --serve-url), the sweep's
// plumb.serve/1 in r.serve, or missing with why no request completed. Returns the sweep's
// failed-requests line ("3 of 120 requests failed (connect 3)"), "" when none failed.
std::string take_serve_part(const BaselineOptions& o, const std::set<std::string>& skip,
                            baseline::Record& r);

// The drill a set takes unless --drill says otherwise: one kill, one hang (--drill-faults).
inline constexpr int kDefaultSetDrill = 2;

// --skip's list → the parts; an unknown name is an Error (exit 2) naming the valid ones:
// "--skip 'comms': unknown part 'comms'; the parts are comm, model, memory, recovery, serve".
std::set<std::string> parse_skip(const std::string& list);

struct ProfileWindow {
  int64_t start = 0;
  int64_t count = 0;
};

// --profile-steps START:COUNT, a window inside steps 1..`steps`; an Error (exit 2) naming the
// option otherwise.
ProfileWindow parse_profile_steps(const std::string& text, int steps);

// MASTER_ADDR a job's ranks meet at: the environment's when set, else 127.0.0.1 for a job on this
// host alone, else this host's name (a --launcher or --hostfile spreads the ranks).
std::string master_address(const BaselineOptions& o);

// A TCP port on this host nobody listens on now (bound to port 0, read back, released).
int free_port();

void add_workload_options(CLI::App& app, BaselineOptions& o);
int run_workload_baseline(const BaselineOptions& o);

}  // namespace plumb::cli
