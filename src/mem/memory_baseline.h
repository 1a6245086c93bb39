// The memory baseline of a training run (issue 29, docs/mem.md "Creep from train-events"): per
// rank, the level memory.allocated_bytes settles at after its warm-up, its creep per step with a
// 95% confidence interval (the fit and the leak rule of mem/steps, one definition for every input
// of plumb mem), and the checkpoint check: the level right before a save, right after it and right
// after a load, within a tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mem/steps.h"
#include "mem/train_memory.h"

namespace plumb::mem {

// The checkpoint check's tolerance: max(kCheckpointShare × the level before the save,
// kCheckpointBytes). Why these two: docs/mem.md, "The checkpoint check".
inline constexpr double kCheckpointShare = 0.01;
inline constexpr double kCheckpointBytes = 16.0 * 1024 * 1024;

struct CheckpointCheck {
  std::string rank;                          // whose lines (the baseline's: the decisive rank)
  std::optional<int64_t> save_step;          // the step of the first "saved" line
  std::optional<int64_t> load_step;          // the step of the "loaded" line used
  std::optional<double> before_save_bytes;   // allocated on the rank's line before "saved"
  std::optional<double> after_save_bytes;    // allocated on the "saved" line
  std::optional<double> after_load_bytes;    // allocated on the "loaded" line
  double tolerance_bytes = 0;                // 0 without a level before the save
  double departure_bytes = 0;                // the larger |after − before| of the two
  std::string verdict;                       // "pass", "fail" or "missing"
  std::string reason;                        // for "fail" and "missing": why, in words

  bool operator==(const CheckpointCheck&) const = default;
};

// How the warm-up was set: detected (MSER, docs/mem.md) or --warmup N.
enum class WarmupSource { kDetected, kOption };

struct RankMemory {
  std::string rank;
  size_t steps = 0;                          // lines with memory of this rank
  size_t warmup_steps = 0;                   // the first lines left out of the level and the fit
  std::optional<double> settled_bytes;       // median allocated after the warm-up
  std::optional<double> settled_reserved_bytes;  // the same of reserved, where every line has it
  std::optional<double> peak_bytes;          // the largest peak_bytes (else allocated) of all lines
  Creep creep;                               // OLS over (step, allocated) after the warm-up
  std::string verdict;                       // "flat", "leak" or "too few steps"
  CheckpointCheck checkpoint;

  bool operator==(const RankMemory&) const = default;
};

struct MemoryBaseline {
  std::string source;
  WarmupSource warmup = WarmupSource::kDetected;
  std::vector<RankMemory> ranks;
  std::optional<size_t> worst;               // index into ranks: the largest creep of those fitted
  CheckpointCheck checkpoint;                // the decisive rank's (docs/mem.md)
  size_t lines = 0, without_memory = 0, unmarked_checkpoints = 0;  // from MemorySeries

  bool leaks() const;                        // a rank's verdict is "leak"
};

// MSER (White 1997): the d in [0, n/2] minimising Σ_{i>d}(y_i − ȳ_d)² / (n − d)², the smallest
// such d on a tie. The first d values are the warm-up.
size_t mser_warmup(const std::vector<double>& y);

// The checkpoint check of one rank's lines (rank left empty: the caller names it).
CheckpointCheck check_checkpoint(const std::vector<MemoryPoint>& points);

// `warmup`: the first N lines of every rank, else detected per rank.
RankMemory rank_memory(const RankSeries& series, std::optional<size_t> warmup);
MemoryBaseline memory_baseline(const MemorySeries& series, std::optional<size_t> warmup);

}  // namespace plumb::mem
