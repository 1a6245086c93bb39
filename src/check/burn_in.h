// plumb check burn-in: the deeper pass before a job (docs/check.md, "Burn-in"). The node's
// own collective sweep on its ranks (plumb comm's sweep, in process), judged against a busbw
// threshold and against a stored baseline's same row, and host↔device copy bandwidth where the
// CUDA runtime loads. The verdicts are plumb.check/1 checks, so the node's record is one
// NodeReport whatever pass made it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "check/check.h"
#include "check/node_run.h"
#include "comm/communicator.h"
#include "comm/result.h"

namespace plumb::check {

struct BurnInJudgement {
  std::string collective = "allreduce";
  uint64_t bytes = 0;
  double busbw_gbps = 0;          // the threshold; 0: none
  double baseline_share = 0.9;    // the share of the baseline's busbw a node must reach
  std::string baseline_name;      // "baseline 7 · 2026-12-01T..."; empty: no baseline
  std::optional<comm::Row> baseline_row;  // the baseline's row of the same layer, collective, size
};

// burn_in.busbw: the measured row (nullptr: fewer than 2 ranks, nothing crossed a link) against
// the threshold. critical below it; ok above; ok with no threshold, the value recorded; wrong
// elements are critical whatever the speed.
CheckResult judge_busbw(const comm::Row* row, const BurnInJudgement& j);

// burn_in.baseline: against the baseline's row: warning below baseline_share of its busbw;
// skipped without a baseline or a row to compare.
CheckResult judge_baseline(const comm::Row* row, const BurnInJudgement& j);

// burn_in.h2d: host→device and device→host copies of `bytes` through the CUDA runtime (dlopen:
// PLUMB_CUDART_LIBRARY, else libcudart.so*), on device `device`; skipped where the runtime does
// not load or sees no device. `min_gbps` 0: recorded, not judged.
CheckResult measure_h2d(uint64_t bytes, int device, double min_gbps);

// The row of `rows` that the judgement reads: layer world, the collective, the requested size.
const comm::Row* burn_in_row(const std::vector<comm::Row>& rows, const BurnInJudgement& j);

struct BurnInRun {
  BurnInJudgement judgement;
  int iters = 20;
  int warmup = 5;
  uint64_t h2d_bytes = 256ull << 20;  // NVIDIA bandwidthTest's large transfers reach the link's rate
  double h2d_min_gbps = 0;
  int device = 0;                     // this rank's accelerator (its local rank)
  std::string host;
  std::string created;
};

// The whole pass, collective over `world` (every rank calls it): the sweep of
// judgement.collective at judgement.bytes over every rank, then the judgements. The report on
// rank 0 (the checks burn_in.busbw, burn_in.baseline, burn_in.h2d: rank 0's device), what the
// store keeps as the node's check record; an empty report on the other ranks.
NodeReport run_burn_in(comm::Communicator& world, const BurnInRun& run);

// The node's report of the three checks (named, timed 0: the pass's own time is `seconds`).
NodeReport burn_in_report(std::string host, std::string created, double seconds,
                          std::vector<CheckResult> checks);

}  // namespace plumb::check
