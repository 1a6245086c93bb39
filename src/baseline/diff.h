// `plumb diff`: what changed between two baselines, and whether a change is a regression or noise.
//
// Results are compared per (layer, collective, dtype, requested size) on the slowest group of the
// layer (lowest busbw, highest p99): the group that gates a training step. A change is a
// regression only when it is beyond the threshold and also beyond the spread the two runs showed
// themselves (see docs/diff.md for the noise model). The context — topology, versions, settings —
// is compared too: a comparison explains a change only if exactly one variable differs.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/store.h"

namespace plumb::baseline {

inline constexpr const char* kDiffSchema = "plumb.diff/1";

struct DiffOptions {
  double threshold = 0.10;  // a relative change smaller than this is never a regression
  bool strict = false;      // a single size's regression fails the comparison too
};

enum class Verdict {
  kSame,         // within the threshold
  kNoise,        // beyond the threshold but within the runs' own spread
  kRegression,   // slower beyond both
  kImprovement,  // faster beyond both
  kOnlyInA,      // measured in A only
  kOnlyInB,      // measured in B only
};

std::string_view verdict_name(Verdict verdict);  // "same", "noise", "regression", ...

struct RowDiff {
  std::string layer;
  std::string collective;
  std::string dtype;
  uint64_t bytes = 0;         // requested size
  double busbw_a = 0;         // GB/s of the slowest group; NaN when not measured
  double busbw_b = 0;
  double busbw_change = 0;    // (b − a) / a; NaN when either is missing
  double p99_a = 0;           // µs of the slowest group; NaN when unknown (imported logs)
  double p99_b = 0;
  double p99_change = 0;      // (b − a) / a; NaN when either is missing
  double noise = 0;           // kNoiseSigmas × the standard deviation of the change the two
                              // runs' own spreads imply
  Verdict verdict = Verdict::kSame;
};

// One difference in the context of the two runs.
struct VariableDiff {
  std::string kind;  // "topology", "version" or "setting"
  std::string name;  // e.g. "nccl", "NCCL_ALGO", "hosts", "ranks"
  std::string a;     // "(absent)" when the run does not have it
  std::string b;
};

// One (layer, collective, dtype) over the sizes ≥ 1 MiB both runs measured (the sizes the summary
// averages): a change that every size shows is a regression even when each size alone is within
// its noise, because the noise of a mean of n independent sizes is 1/√n of theirs.
struct GroupDiff {
  std::string layer;
  std::string collective;
  std::string dtype;
  int sizes = 0;              // sizes ≥ 1 MiB in both runs
  double change = 0;          // mean of the sizes' busbw changes; NaN when sizes == 0
  double noise = 0;           // kNoiseSigmas × the standard deviation of that mean
  Verdict verdict = Verdict::kSame;
};

// How many standard deviations a change must exceed to be more than noise.
inline constexpr double kNoiseSigmas = 3.5;

struct RecordRef {
  int64_t id = 0;  // 0 when read from a JSON file
  std::string label;
  std::string created;
  std::string source;
};

struct Diff {
  RecordRef a;
  RecordRef b;
  double threshold = 0;
  bool strict = false;
  std::vector<RowDiff> rows;           // ordered by layer, collective, dtype, size
  std::vector<GroupDiff> groups;       // ordered by layer, collective, dtype
  std::vector<VariableDiff> variables; // every context difference
  // What makes `plumb diff` exit 1: groups with Verdict::kRegression, and with `strict` rows too.
  // Single sizes alone do not by default: on shared machines one size of an unchanged setup can
  // move 2× between runs minutes apart (docs/diff.md), while a link that got slower shows at
  // every bandwidth-bound size.
  int regressions() const;
  int row_regressions() const;  // rows with Verdict::kRegression
  // Empty when at most one variable differs; otherwise a sentence naming them and saying the
  // change cannot be attributed to one of them.
  std::string attribution_warning() const;
};

Diff diff(const Record& a, const Record& b, const DiffOptions& options = {});

// plumb.diff/1
nlohmann::json diff_json(const Diff& diff);

}  // namespace plumb::baseline
