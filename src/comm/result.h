// The record `plumb comm` produces: plain data, no printing. Reporters (src/report/) turn it into
// a console table, JSON (schema plumb.comm/1) or CSV.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/placement.h"
#include "sysinfo/slurm_job.h"

namespace plumb::comm {

inline constexpr const char* kCommSchema = "plumb.comm/1";

// One (layer, group, collective, size) measurement.
struct Row {
  std::string layer;
  std::string group;
  int group_ranks = 0;
  std::string collective;
  std::string dtype;
  std::string op;           // "none" for collectives that do not reduce
  int root = -1;            // -1 for collectives without a root
  uint64_t requested_bytes = 0;
  uint64_t bytes = 0;       // after rounding to whole elements per rank
  uint64_t count = 0;
  double time_us = 0;       // mean over ranks of each rank's average in the timed loop
  double algbw_gbps = 0;    // bytes / 1e9 / time
  double busbw_gbps = 0;    // algbw × bus factor
  int64_t wrong = -1;       // wrong elements over all ranks; -1 when not checked
  double p50_us = 0;        // percentiles of per-iteration time, each the max over ranks
                            // (NaN when unknown: imported from a tool that has no such figure)
  double p99_us = 0;
  double max_us = 0;
  int straggler = -1;       // world rank slowest in most iterations
  double straggler_share = 0;  // fraction of iterations it was slowest
  // Measured in several rounds (--rounds): median absolute deviation of the rounds' busbw from
  // their median, relative to it; the row holds the median round. NaN when measured once.
  double busbw_spread = std::numeric_limits<double>::quiet_NaN();
};

struct SweepSettings {
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step_factor = 0;  // 0 when stepping by step_bytes
  uint64_t step_bytes = 0;
  int iters = 0;
  int warmup = 0;
  bool check = true;
  std::string dtype;
  std::string op;
  int root = 0;
  int rounds = 1;
};

struct Result {
  std::string created;  // ISO 8601 UTC
  std::string backend;
  std::string launcher;  // what started the ranks: "mpirun (Open MPI)", "srun", ... (JSON "launcher")
  int ranks = 0;
  std::vector<std::string> hosts;  // distinct, in rank order of first appearance
  std::map<std::string, std::string> env;
  SweepSettings settings;
  Placement placement;
  std::vector<Layer> layers;
  std::vector<Row> rows;
  std::vector<std::string> notes;  // what the user should know (rounded sizes, skipped layers)
  std::optional<sysinfo::SlurmJob> job;  // the Slurm job it ran in (JSON "job", absent outside one)
};

// The average busbw, plumb's one definition of it (docs/comm.md, "Summary line"), shown alike by
// the console, `plumb show`, the JSON summary (`plumb comm --json`, `plumb export`), the HTML
// report and `plumb diff`. Per (layer, collective): each group's mean busbw over the requested
// sizes of at least kSummaryMinBytes (requested: with 3 ranks a 1 MiB allgather measures 1048572
// bytes and still counts), then the mean of those over the layer's groups. It is always computed
// from the rows, never read back from a file, so no output can show a stale figure.
inline constexpr uint64_t kSummaryMinBytes = 1024 * 1024;

struct Summary {
  std::string layer;
  std::string collective;
  int sizes = 0;                 // sizes ≥ 1 MiB that were measured (the most of any group)
  int groups = 0;                // groups with such a size: the average is over them
  double avg_busbw_gbps = 0;     // mean over groups of each group's average
  std::string slowest_group;     // group with the lowest average
  double slowest_busbw_gbps = 0;
  double spread = 0;             // (best − worst group average) / best
};

// One Summary per (layer, collective), in the order the rows first show them.
std::vector<Summary> summarize(const std::vector<Row>& rows);
std::vector<Summary> summarize(const Result& result);

// The JSON summary[] entries (plumb.comm/1 and plumb.baseline/1 "summary", plumb.diff/1
// "summary"): the figures above with min_bytes = kSummaryMinBytes.
nlohmann::json summary_json(const std::vector<Summary>& summaries);

// Total wrong elements over all rows (0 when nothing was checked).
int64_t total_wrong(const Result& result);

void to_json(nlohmann::json& j, const Row& row);
void from_json(const nlohmann::json& j, Row& row);

}  // namespace plumb::comm
