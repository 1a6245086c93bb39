// plumb precision: a ported model's operator outputs against a reference (docs/precision.md).
// `plumb precision compare A B`: two tensor files, two directories (matched by relative path and
// key) or two msprobe dumps (matched by API call); the verdict of each pair by a rule, the table
// by severity, --first-divergence, CSV in msprobe's columns, JSON plumb.precision/1, an HTML page.
// `plumb precision stats FILE`: each tensor's shape, dtype, min/max/mean/std and NaN/Inf counts.
// Exit 1 when a pair fails, 2 on bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "precision/compare.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

enum class PrecisionMode { kNone, kCompare, kStats };

struct PrecisionOptions {
  PrecisionMode mode = PrecisionMode::kNone;
  std::string a, b;  // compare: under test (msprobe's NPU side), reference (Bench)
  std::string file;  // stats
  std::string rule = "msprobe";
  // msprobe rule: --cosine, --max-abs (the pair that fails together), --cosine-fail, --max-abs-fail.
  std::optional<double> cosine, max_abs, cosine_fail, max_abs_fail;
  std::optional<double> stats_rel;   // statistics mode, both rules
  std::optional<double> rtol, atol;  // assert-close rule
  std::optional<uint64_t> ulp;       // the N of "share of elements beyond N ULP"
  bool first_divergence = false;
  bool statistics = false;
  std::string dtype;  // raw .bin
  std::string shape;  // raw .bin: "1024,4096"
  std::string json;   // plumb.precision/1 ("-": standard output)
  std::string csv;    // msprobe's columns ("-": standard output)
  std::string html;
  int threads = 0;    // 0: every core
};

void setup_precision(CLI::App& app, PrecisionOptions& options);
int run_precision(const PrecisionOptions& options);

// The comparison's options from the command's, every problem of the flags in one Error (exit 2):
// a threshold of the other rule, an unknown --dtype, a bad --shape. For tests.
precision::CompareOptions compare_options(const PrecisionOptions& options);

}  // namespace plumb::cli
