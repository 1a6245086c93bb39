// Reporters for precision::CompareResult (`plumb precision compare`) and for one file's tensor
// statistics (`plumb precision stats`): each one format, each writing to a stream it is handed
// (the CommReporter shape, comm_reporter.h). The comparison never prints; these never compare.
//
//   PrecisionConsoleReporter  the table sorted by severity, the summary line, the first divergence
//   PrecisionCsvReporter      msprobe's compare_result columns (precision_csv.cc names its source)
//   PrecisionJsonReporter     plumb.precision/1
//   write_precision_html      the page: per-operator bars of cosine and max abs error, the table
//
// docs/precision.md shows each output.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "precision/compare.h"
#include "precision/metrics.h"
#include "precision/verdict.h"

namespace plumb::report {

inline constexpr std::string_view kPrecisionSchema = "plumb.precision/1";
inline constexpr std::string_view kPrecisionStatsSchema = "plumb.precision-stats/1";

class PrecisionReporter {
 public:
  virtual ~PrecisionReporter() = default;
  virtual void report(const precision::CompareResult& result, std::ostream& out) const = 0;
};

// ---- the console ----------------------------------------------------------------------------

// The most passing pairs the console lists after every failed and unmatched one (the CSV, the
// JSON and the page have all of them).
inline constexpr size_t kConsolePassRows = 20;

struct PrecisionConsoleOptions {
  bool first_divergence = false;  // list the first-divergence calls after the summary
  size_t pass_rows = kConsolePassRows;
};

class PrecisionConsoleReporter final : public PrecisionReporter {
 public:
  explicit PrecisionConsoleReporter(PrecisionConsoleOptions options = {}) : options_(options) {}
  void report(const precision::CompareResult& result, std::ostream& out) const override;

 private:
  PrecisionConsoleOptions options_;
};

// The pairs' indices by severity: failed, then unmatched, then passed; within each, cosine
// ascending (an undefined cosine first), then max abs error descending (statistics mode: the
// L2 norm's relative difference descending, the figure its rule judges), then execution order. Shared by the console and page.
std::vector<size_t> severity_order(const precision::CompareResult& result);

// "12 pairs: 9 passed, 2 failed, 1 unmatched".
std::string summary_line(const precision::CompareResult& result);

// How the console and the page write a figure; "n/a" where it is undefined (NaN) or was not
// computed (an unmatched pair, a statistics-mode pair's cosine).
std::string cosine_text(double v);  // "0.999871"
std::string error_text(double v);   // "2.345e-03", "0", "inf"
std::string ratio_text(double v);   // "0.9981"
// The pair's dtype and shape as a column shows them: a's, then b's after " vs " where they differ
// ("float16 vs float32", "[2, 3] vs [3, 2]"); one side's alone when the other is absent or was not
// read (a file only in one directory: its dtype is empty); "" when neither is known.
std::string pair_dtype(const precision::PairResult& pair);
std::string pair_shape(const precision::PairResult& pair);
// The side when it is there and was read (its dtype and shape are known), else null.
const precision::Side* described(const std::optional<precision::Side>& side);

// ---- CSV --------------------------------------------------------------------------------------

class PrecisionCsvReporter final : public PrecisionReporter {
 public:
  void report(const precision::CompareResult& result, std::ostream& out) const override;
};

// The header row of the tensor-mode and the statistics-mode tables (msprobe's
// COMPARE_RESULT_HEADER and SUMMARY_COMPARE_RESULT_HEADER), comma-joined.
std::string precision_csv_header(bool statistics);

// ---- JSON ---------------------------------------------------------------------------------------

// The document: schema, a, b, mode, rule, summary {pairs, passed, failed, unmatched},
// first_divergence [names], pairs[] (the fixed keys, then why, api, role, order,
// first_divergence, b_dtype, b_shape, elements, the ULP and inf counts, stats_a/stats_b and
// stat_diffs where known). Undefined numbers are null. Keys in that order (ordered_json).
nlohmann::ordered_json precision_to_json(const precision::CompareResult& result);

class PrecisionJsonReporter final : public PrecisionReporter {
 public:
  void report(const precision::CompareResult& result, std::ostream& out) const override;
};

// ---- HTML -------------------------------------------------------------------------------------

// The most bars each chart draws (execution order); beyond, the first ones and a note.
inline constexpr size_t kMaxPrecisionBars = 4000;
// The most rows of the page's table (failed and unmatched first, as on the console).
inline constexpr size_t kMaxPrecisionTableRows = 2000;

struct PrecisionHtmlOptions {
  // Drawn as lines on the charts when the rule is msprobe's (its cosine and max-abs thresholds).
  precision::Thresholds thresholds;
};

// The page: the facts (A, B, mode, rule, summary); per-operator bars in execution order of the
// cosine and of the max abs error (statistics mode: of the L2 norm's relative difference), failed
// pairs red with a mark above, unmatched ones a grey mark; the first divergence; the table of
// pairs by severity. CSS inline, SVG drawn here, no script, nothing by URL; every name escaped.
void write_precision_html(const precision::CompareResult& result,
                          const PrecisionHtmlOptions& options, std::ostream& out);

// ---- plumb precision stats ---------------------------------------------------------------------

struct TensorStatsRow {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  precision::TensorStats stats;
};

struct StatsReport {
  std::string file;
  std::vector<TensorStatsRow> tensors;
};

void print_precision_stats(const StatsReport& report, std::ostream& out);
nlohmann::ordered_json precision_stats_json(const StatsReport& report);

// Whether the comparison read msprobe's statistics dumps (no tensors): its tables show the
// statistics' differences instead of the metrics.
bool statistics_mode(const precision::CompareResult& r);

}  // namespace plumb::report
