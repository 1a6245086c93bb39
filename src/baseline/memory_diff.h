// `plumb diff` of two memory parts of baseline sets (mem/memory_baseline, the part plumb baseline
// --workload stores): did a rank settle higher, does a rank leak in B where it was flat in A (or
// leak faster), does the checkpoint check fail in B where it passed in A.
//
// The judging (docs/diff.md, "Baseline sets"):
// - settled level, per rank present in both: a rise beyond the threshold and beyond the level's
//   noise is a regression, the 2× rule of the other diffs included (judge_time_change). A set
//   holds one run, so there is no spread between runs to measure; the noise is the tolerance the
//   checkpoint check already calls "the same level": max(1% of A's level, 16 MiB)
//   (mem::kCheckpointShare, mem::kCheckpointBytes; docs/mem.md says why those two).
// - creep, per rank: B leaks where A did not (flat, or too few steps to judge) → a regression
//   naming the rank and its rate; A leaked and B does not → an improvement; both leak → the slopes
//   are compared, the noise from their 95% intervals (kNoiseSigmas × the σ of the difference).
//   Too few steps in B: not judged, named.
// - the checkpoint check: pass → fail is a regression, fail → pass an improvement; "missing" in
//   one (or both) is named with its reason, never judged.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "baseline/diff.h"
#include "mem/memory_baseline.h"

namespace plumb::baseline {

inline constexpr const char* kMemoryDiffSchema = "plumb.memory-diff/1";

// One rank's settled level (allocated bytes after the warm-up).
struct MemoryLevelDiff {
  std::string rank;
  double a_bytes = 0;  // NaN when the rank (or its level) is not in A
  double b_bytes = 0;
  double change = 0;   // (b − a) / a; NaN when either is unknown
  double noise = 0;    // relative: max(kCheckpointShare × a, kCheckpointBytes) / a
  Verdict verdict = Verdict::kSame;
};

// One rank's creep per step.
struct MemoryCreepDiff {
  std::string rank;
  std::string verdict_a;   // "flat", "leak", "too few steps"; "" when the rank is not in A
  std::string verdict_b;
  double slope_a = 0;      // bytes per step; NaN when not judged
  double slope_b = 0;
  double ci_a[2] = {0, 0};  // 95% interval, bytes per step
  double ci_b[2] = {0, 0};
  double change = 0;       // (b − a) / a when both leak; else NaN
  double noise = 0;        // relative, when both leak
  Verdict verdict = Verdict::kSame;
  std::string text;        // "rank 1 leaks +1 MiB per step (95% CI ...) in B, flat in A"; "" when
                           // there is nothing to say
};

struct MemoryCheckpointDiff {
  std::string verdict_a;   // "pass", "fail", "missing"
  std::string verdict_b;
  std::string reason_a;
  std::string reason_b;
  Verdict verdict = Verdict::kSame;  // kOnlyInA / kOnlyInB: taken in one only, not judged
  std::string text;        // "checkpoint check fails in B (...), passed in A"
};

// One sentence of what the diff found, with the verdict it carries (kSame: named, not judged).
struct MemoryFinding {
  Verdict verdict = Verdict::kSame;
  std::string text;
};

struct MemoryDiff {
  double threshold = 0;
  int ranks_a = 0;
  int ranks_b = 0;
  std::vector<MemoryLevelDiff> levels;  // by rank: A's order, then B's ranks A does not have
  std::vector<MemoryCreepDiff> creeps;  // likewise
  MemoryCheckpointDiff checkpoint;

  int regressions() const;   // levels, creeps and the checkpoint check with kRegression
  int too_noisy() const;     // levels and creeps with kTooNoisy
  int improvements() const;
  int exit_code() const;     // 1 on a regression, else kTooNoisyExitCode when too noisy, else 0
  // What decided it, one sentence per finding, the regressions first, then too noisy,
  // improvements and what is named without being judged: "rank 1 leaks +1 MiB per step (95% CI
  // +1023.9 KiB to +1 MiB) in B, flat in A". Empty when nothing changed.
  std::vector<MemoryFinding> findings() const;
};

// Ranks are matched by name (the train-events "rank" field).
MemoryDiff memory_diff(const mem::MemoryBaseline& a, const mem::MemoryBaseline& b,
                       double threshold);

// plumb.memory-diff/1
nlohmann::json memory_diff_json(const MemoryDiff& diff);

}  // namespace plumb::baseline
