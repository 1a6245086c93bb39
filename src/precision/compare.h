// plumb precision compare: pairs of tensors from two files, two directories (matched by relative
// path and key) or two msprobe dumps (matched by API call name, e.g.
// "Functional.layer_norm.3.forward.output.0"), each compared and judged; and the first
// divergence: in execution order, the API calls whose inputs pass but whose outputs fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "precision/metrics.h"
#include "precision/readers.h"
#include "precision/verdict.h"

namespace plumb::precision {

enum class PairRole : uint8_t { kTensor, kInput, kOutput, kParameter };  // kTensor: files, not dumps

// One side of a pair as found (absent when the name exists only on the other side).
struct Side {
  std::string source;  // the file (and key) or the dump entry it came from
  std::string dtype;   // as the input names it ("float32", "torch.bfloat16")
  std::vector<int64_t> shape;
  std::optional<TensorStats> stats;  // from the tensor, or the dump's summary in statistics mode
};

struct PairResult {
  std::string name;   // the matched name
  std::string api;    // dumps: the API call ("Functional.layer_norm.3.forward"); else empty
  PairRole role = PairRole::kTensor;
  size_t order = 0;   // execution order (dumps), else the order of listing
  std::optional<Side> a, b;
  std::optional<Metrics> metrics;      // tensor mode, when compared
  std::optional<StatDiffs> stat_diffs;  // statistics mode, when compared
  Judgement judgement;                 // kUnmatched with why: "shape unmatched", "only in B" ...
};

struct CompareOptions {
  std::string rule = "msprobe";
  Thresholds thresholds;
  MetricOptions metrics;
  ReadOptions read;
  bool statistics = false;  // dumps: compare the summaries even where tensors exist
  int threads = 0;          // 0: every core
};

struct CompareResult {
  std::string a, b;         // the two inputs as given
  std::string mode;         // "files", "directories", "dump-tensors", "dump-statistics"
  std::string rule;
  std::vector<PairResult> pairs;  // in execution / listing order
  // Indices into pairs of the first divergence's output pairs (see above), in execution order.
  std::vector<size_t> first_divergence;
  size_t failed() const;
  size_t unmatched() const;
};

// Tells what a and b are and compares them; an Error (exit 2) for bad input: unreadable paths, a
// file against a directory, a dump against a plain directory, two dumps of different modes.
CompareResult compare(const std::string& a, const std::string& b, const CompareOptions& options);

}  // namespace plumb::precision
