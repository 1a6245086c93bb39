// `plumb precision compare --csv`: msprobe's compare result table, column for column, so that the
// spreadsheets and scripts written for msprobe's output read plumb's (docs/precision.md, "CSV").
//
// The columns are msprobe's CompareConst in msprobe/core/common/const.py (mindstudio-probe,
// Ascend/mstt debug/accuracy_tools/msprobe, 2024-2025): COMPARE_RESULT_HEADER (tensor mode) =
// BASIC_INFO + ALL_COMPARE_INDEX + SUMMARY_INFO + [Requires_grad Consistent, Accuracy Reached or
// Not, Err_message] and SUMMARY_COMPARE_RESULT_HEADER (statistics mode) = BASIC_INFO +
// SUMMARY_COMPARE_INDEX + SUMMARY_INFO + [Requires_grad Consistent, Result, Err_message]. The
// cells follow msprobe's compare code (msprobe/core/compare/acc_compare.py, utils.py):
//   - "N/A" where a value is undefined or absent; a pair without a reference ("Bench") side has
//     Bench Name "N/A" and Err_message "No bench data matched.";
//   - tensor mode: Accuracy Reached or Not "Yes" (pass), "No" (fail), "N/A" (unmatched);
//   - statistics mode: Max diff … L2norm diff are NPU − Bench; MaxRelativeErr … NormRelativeErr are
//     |NPU − Bench| / |Bench| × 100 written with a "%" ("N/A" where Bench is 0); Result is
//     "Warning" for a failed pair and empty for a passed one;
//   - the Requires_grad columns are empty: plumb does not read requires_grad;
//   - numbers as Python writes floats (msprobe is pandas): the shortest exact form.
// plumb's own additions are not columns (the JSON has them). RFC 4180 quoting; a text cell that
// begins with = + - @ or a tab is prefixed with ' so that a spreadsheet does not run it as a
// formula (msprobe refuses such names, CSV_BLACK_LIST).
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "precision/tensor.h"
#include "report/precision_reporter.h"
#include "report/step_csv_reporter.h"

namespace plumb::report {
namespace {

using precision::PairResult;
using precision::Verdict;

constexpr std::string_view kNotAvailable = "N/A";            // msprobe's CompareConst.N_A
constexpr std::string_view kNoBench = "No bench data matched.";  // CompareConst.NO_BENCH
constexpr double kPercent = 100;

constexpr std::string_view kBasicInfo =
    "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,"
    "NPU Requires_grad,Bench Requires_grad";
constexpr std::string_view kTensorIndex =
    "Cosine,EucDist,MaxAbsErr,MaxRelativeErr,One Thousandth Err Ratio,Five Thousandths Err Ratio";
constexpr std::string_view kSummaryIndex =
    "Max diff,Min diff,Mean diff,L2norm diff,MaxRelativeErr,MinRelativeErr,MeanRelativeErr,"
    "NormRelativeErr";
constexpr std::string_view kSummaryInfo =
    "NPU max,NPU min,NPU mean,NPU l2norm,Bench max,Bench min,Bench mean,Bench l2norm";

// A text cell: quoted when it must be (RFC 4180), defused when a spreadsheet would read a formula.
std::string text_cell(std::string_view text) {
  std::string cell(text);
  if (!cell.empty() && std::string_view("=+-@\t\r").find(cell.front()) != std::string_view::npos) {
    cell.insert(cell.begin(), '\'');
  }
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string number_cell(double v) {
  return std::isnan(v) ? std::string(kNotAvailable) : python_float(v);
}

// msprobe's relative difference of one statistic, a percentage with its sign dropped.
std::string percent_cell(double rel, double bench) {
  if (std::isnan(rel) || bench == 0) return std::string(kNotAvailable);
  return python_float(std::fabs(rel) * kPercent) + "%";
}

void basic_info(const PairResult& p, std::vector<std::string>& row) {
  const auto side_text = [](const std::optional<precision::Side>& s, auto field) {
    const precision::Side* side = described(s);
    return side ? text_cell(field(*side)) : std::string(kNotAvailable);
  };
  row.push_back(p.a ? text_cell(p.name) : std::string(kNotAvailable));
  row.push_back(p.b ? text_cell(p.name) : std::string(kNotAvailable));
  row.push_back(side_text(p.a, [](const precision::Side& s) { return s.dtype; }));
  row.push_back(side_text(p.b, [](const precision::Side& s) { return s.dtype; }));
  row.push_back(side_text(p.a, [](const precision::Side& s) { return precision::shape_text(s.shape); }));
  row.push_back(side_text(p.b, [](const precision::Side& s) { return precision::shape_text(s.shape); }));
  row.insert(row.end(), {"", ""});  // NPU / Bench Requires_grad: not read
}

void summary_info(const PairResult& p, std::vector<std::string>& row) {
  for (const auto* side : {&p.a, &p.b}) {
    const bool known = side->has_value() && (*side)->stats.has_value();
    const precision::TensorStats s = known ? *(*side)->stats : precision::TensorStats{};
    for (double v : {s.max, s.min, s.mean, s.l2norm}) row.push_back(number_cell(known ? v : NAN));
  }
}

std::string err_message(const PairResult& p) {
  if (!p.b) return std::string(kNoBench);
  return text_cell(p.judgement.why);
}

std::vector<std::string> tensor_csv_row(const PairResult& p) {
  std::vector<std::string> row;
  basic_info(p, row);
  const precision::Metrics m = p.metrics.value_or(precision::Metrics{});
  const bool known = p.metrics.has_value();
  for (double v : {m.cosine, m.euclidean, m.max_abs_err, m.max_rel_err, m.one_thousandth_ratio,
                   m.five_thousandths_ratio}) {
    row.push_back(number_cell(known ? v : NAN));
  }
  summary_info(p, row);
  row.emplace_back("");  // Requires_grad Consistent
  switch (p.judgement.verdict) {
    case Verdict::kPass: row.emplace_back("Yes"); break;
    case Verdict::kFail: row.emplace_back("No"); break;
    case Verdict::kUnmatched: row.emplace_back(kNotAvailable); break;
  }
  row.push_back(err_message(p));
  return row;
}

// StatDiffs holds a − b and |a − b| / |b| (verdict.h), as msprobe's columns: NPU − Bench.
std::vector<std::string> statistics_csv_row(const PairResult& p) {
  std::vector<std::string> row;
  basic_info(p, row);
  if (p.stat_diffs) {
    const precision::StatDiffs& d = *p.stat_diffs;
    for (double v : {d.max_diff, d.min_diff, d.mean_diff, d.norm_diff}) row.push_back(number_cell(v));
    const precision::TensorStats b = p.b && p.b->stats ? *p.b->stats : precision::TensorStats{};
    row.push_back(percent_cell(d.max_rel, b.max));
    row.push_back(percent_cell(d.min_rel, b.min));
    row.push_back(percent_cell(d.mean_rel, b.mean));
    row.push_back(percent_cell(d.norm_rel, b.l2norm));
  } else {
    row.insert(row.end(), 8, std::string(kNotAvailable));
  }
  summary_info(p, row);
  row.emplace_back("");  // Requires_grad Consistent
  switch (p.judgement.verdict) {
    case Verdict::kPass: row.emplace_back(""); break;
    case Verdict::kFail: row.emplace_back("Warning"); break;
    case Verdict::kUnmatched: row.emplace_back(kNotAvailable); break;
  }
  row.push_back(err_message(p));
  return row;
}

}  // namespace

std::string precision_csv_header(bool statistics) {
  return fmt::format("{},{},{},Requires_grad Consistent,{},Err_message", kBasicInfo,
                     statistics ? kSummaryIndex : kTensorIndex, kSummaryInfo,
                     statistics ? "Result" : "Accuracy Reached or Not");
}

void PrecisionCsvReporter::report(const precision::CompareResult& r, std::ostream& out) const {
  const bool statistics = r.mode == "dump-statistics";
  out << precision_csv_header(statistics) << "\n";
  for (const PairResult& p : r.pairs) {
    const std::vector<std::string> row = statistics ? statistics_csv_row(p) : tensor_csv_row(p);
    for (size_t c = 0; c < row.size(); ++c) out << (c > 0 ? "," : "") << row[c];
    out << "\n";
  }
}

}  // namespace plumb::report
