// The console table of `plumb precision compare` and `plumb precision stats` (docs/precision.md,
// "Reading the table"): every failed and unmatched pair first, then the closest passes, one row
// each; the summary line; with --first-divergence the calls that introduced the error.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "precision/tensor.h"
#include "report/precision_reporter.h"

namespace plumb::report {
namespace {

using precision::PairResult;
using precision::Verdict;

int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::kFail: return 0;
    case Verdict::kUnmatched: return 1;
    case Verdict::kPass: return 2;
  }
  return 2;
}

std::string_view verdict_label(Verdict v) {
  switch (v) {
    case Verdict::kFail: return "FAIL";
    case Verdict::kUnmatched: return "UNMATCHED";
    case Verdict::kPass: return "pass";
  }
  return "pass";
}

// NaN sorts first (an undefined cosine is the least trustworthy), then ascending.
double cosine_key(const PairResult& p) {
  if (!p.metrics) return 2;  // nothing computed: after every computed cosine
  return std::isnan(p.metrics->cosine) ? -2 : p.metrics->cosine;
}

// Larger is worse; NaN counts as the worst.
double error_key(const PairResult& p) {
  double v = -1;
  if (p.metrics) v = p.metrics->max_abs_err;
  else if (p.stat_diffs) v = p.stat_diffs->norm_rel;
  return std::isnan(v) ? HUGE_VAL : v;
}

// One table: a header, rows of cells, each column left- or right-aligned; the last column is
// written without padding (it holds the reason, of any length).
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;

  void print(std::ostream& out) const {
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) width[c] = columns(header[c]);
    for (const auto& row : rows) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], columns(row[c]));
    }
    print_row(header, width, out);
    for (const auto& row : rows) print_row(row, width, out);
  }

 private:
  static size_t columns(const std::string& s) {  // code points, not bytes ("‰")
    return static_cast<size_t>(
        std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
  }
  void print_row(const std::vector<std::string>& row, const std::vector<size_t>& width,
                 std::ostream& out) const {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const std::string pad(width[c] - columns(row[c]), ' ');
      if (c > 0) line += "  ";
      if (right[c]) line += pad + row[c];
      else line += last ? row[c] : row[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
};

std::string why_of(const PairResult& p) { return p.judgement.why; }

Table tensor_table() {
  return {{"verdict", "name", "dtype", "shape", "cosine", "max abs err", "max rel err",
           "1‰ ratio", "5‰ ratio", "why"},
          {false, false, false, false, true, true, true, true, true, false},
          {}};
}

std::vector<std::string> tensor_row(const PairResult& p) {
  const bool m = p.metrics.has_value();
  const double nan = precision::kUndefined;
  return {std::string(verdict_label(p.judgement.verdict)),
          p.name,
          pair_dtype(p),
          pair_shape(p),
          cosine_text(m ? p.metrics->cosine : nan),
          error_text(m ? p.metrics->max_abs_err : nan),
          error_text(m ? p.metrics->max_rel_err : nan),
          ratio_text(m ? p.metrics->one_thousandth_ratio : nan),
          ratio_text(m ? p.metrics->five_thousandths_ratio : nan),
          why_of(p)};
}

Table statistics_table() {
  return {{"verdict", "name", "dtype", "shape", "max diff", "min diff", "mean diff",
           "l2norm diff", "l2norm rel", "why"},
          {false, false, false, false, true, true, true, true, true, false},
          {}};
}

std::vector<std::string> statistics_row(const PairResult& p) {
  const precision::StatDiffs* d = p.stat_diffs ? &*p.stat_diffs : nullptr;
  const double nan = precision::kUndefined;
  return {std::string(verdict_label(p.judgement.verdict)),
          p.name,
          pair_dtype(p),
          pair_shape(p),
          error_text(d ? d->max_diff : nan),
          error_text(d ? d->min_diff : nan),
          error_text(d ? d->mean_diff : nan),
          error_text(d ? d->norm_diff : nan),
          ratio_text(d ? d->norm_rel : nan),
          why_of(p)};
}

void print_first_divergence(const precision::CompareResult& r, std::ostream& out) {
  if (r.mode != "dump-tensors" && r.mode != "dump-statistics") {
    fmt::print(out,
               "first divergence: only between two dumps (API calls with inputs and outputs); "
               "this comparison is of {}\n",
               r.mode);
    return;
  }
  if (r.first_divergence.empty()) {
    out << "first divergence: none (no API call whose inputs pass has an output that fails)\n";
    return;
  }
  out << "first divergence (inputs pass, outputs fail), in execution order:\n";
  for (size_t i : r.first_divergence) {
    const PairResult& p = r.pairs.at(i);
    fmt::print(out, "  {}  {}\n", p.name, p.judgement.why);
  }
}

}  // namespace

std::string cosine_text(double v) { return std::isnan(v) ? "n/a" : fmt::format("{:.6f}", v); }

std::string error_text(double v) {
  if (std::isnan(v)) return "n/a";
  if (v == 0) return "0";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3e}", v);
}

std::string ratio_text(double v) { return std::isnan(v) ? "n/a" : fmt::format("{:.4f}", v); }

const precision::Side* described(const std::optional<precision::Side>& side) {
  return side && !side->dtype.empty() ? &*side : nullptr;
}

std::string pair_dtype(const PairResult& p) {
  const precision::Side* a = described(p.a);
  const precision::Side* b = described(p.b);
  if (a && b && a->dtype != b->dtype) return a->dtype + " vs " + b->dtype;
  if (a) return a->dtype;
  return b ? b->dtype : "";
}

std::string pair_shape(const PairResult& p) {
  const precision::Side* a = described(p.a);
  const precision::Side* b = described(p.b);
  if (a && b && a->shape != b->shape) {
    return precision::shape_text(a->shape) + " vs " + precision::shape_text(b->shape);
  }
  if (a) return precision::shape_text(a->shape);
  return b ? precision::shape_text(b->shape) : "";
}

std::vector<size_t> severity_order(const precision::CompareResult& r) {
  std::vector<size_t> order(r.pairs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto key = [&r](size_t i) {
    const PairResult& p = r.pairs[i];
    return std::make_tuple(verdict_rank(p.judgement.verdict), cosine_key(p), -error_key(p),
                           p.order, i);
  };
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return key(x) < key(y); });
  return order;
}

std::string summary_line(const precision::CompareResult& r) {
  const size_t failed = r.failed();
  const size_t unmatched = r.unmatched();
  return fmt::format("{} pair{}: {} passed, {} failed, {} unmatched", r.pairs.size(),
                     r.pairs.size() == 1 ? "" : "s", r.pairs.size() - failed - unmatched, failed,
                     unmatched);
}

void PrecisionConsoleReporter::report(const precision::CompareResult& r, std::ostream& out) const {
  fmt::print(out, "A (under test): {}\nB (reference):  {}\nmode {}, rule {}\n\n", r.a, r.b, r.mode,
             r.rule);
  const bool stats = statistics_mode(r);
  Table table = stats ? statistics_table() : tensor_table();
  size_t passes_shown = 0;
  size_t passes_left = 0;
  for (size_t i : severity_order(r)) {
    const PairResult& p = r.pairs[i];
    if (p.judgement.verdict == Verdict::kPass && passes_shown++ >= options_.pass_rows) {
      ++passes_left;
      continue;
    }
    table.rows.push_back(stats ? statistics_row(p) : tensor_row(p));
  }
  if (table.rows.empty()) out << "no pair to compare\n";
  else table.print(out);
  if (passes_left > 0) {
    fmt::print(out, "... {} more passed pair{} (--csv, --json and --html list every pair)\n",
               passes_left, passes_left == 1 ? "" : "s");
  }
  fmt::print(out, "\n{}\n", summary_line(r));
  if (options_.first_divergence) print_first_divergence(r, out);
}

// ---- plumb precision stats --------------------------------------------------------------------

void print_precision_stats(const StatsReport& report, std::ostream& out) {
  fmt::print(out, "{}: {} tensor{}\n\n", report.file, report.tensors.size(),
             report.tensors.size() == 1 ? "" : "s");
  Table table{{"name", "dtype", "shape", "elements", "min", "max", "mean", "std", "NaN", "Inf"},
              {false, false, false, true, true, true, true, true, true, true},
              {}};
  for (const TensorStatsRow& t : report.tensors) {
    const precision::TensorStats& s = t.stats;
    auto number = [](double v) { return std::isnan(v) ? std::string("n/a") : fmt::format("{:.6g}", v); };
    table.rows.push_back({t.name, t.dtype, precision::shape_text(t.shape),
                          fmt::format("{}", s.elements), number(s.min), number(s.max),
                          number(s.mean), number(s.std), fmt::format("{}", s.nan),
                          fmt::format("{}", s.inf)});
  }
  table.print(out);
}

bool statistics_mode(const precision::CompareResult& r) { return r.mode == "dump-statistics"; }

}  // namespace plumb::report
