// A node's history of checks: the "lemon node" that fails the same check in k of its last n runs
// (Meta's RSC study, Kokolis et al. HPCA 2025, found a few such nodes behind a large share of job
// failures). docs/check.md, "History".
#pragma once

#include <span>
#include <string>
#include <vector>

#include "baseline/store.h"

namespace plumb::check {

// "3 of its last 5": the example and the default.
inline constexpr int kDefaultOffenderFailures = 3;
inline constexpr int kDefaultOffenderRuns = 5;

struct Offender {
  std::string host;
  std::string check;
  int failed = 0;  // runs among the last `runs` in which the check was warning or critical
  int runs = 0;    // runs looked at (at most n)
};

// Over `passes` (newest first, as Store::recent_checks gives them), each host's newest `n` passes
// of kind "node": every check that failed in at least `k` of them. Sorted by host, then by the
// number of failures (most first), then by check name.
std::vector<Offender> repeat_offenders(std::span<const baseline::CheckEntry> passes, int k, int n);

// "node7 failed pcie.link in 3 of its last 5 runs"
std::string describe(const Offender& offender);

}  // namespace plumb::check
