// JSON plumb.precision/1 (`plumb precision compare --json`) and plumb.precision-stats/1
// (`plumb precision stats --json`). The keys of each pair named by issue 16 — name, dtype, shape,
// cosine, max_abs_err, max_rel_err, mean_abs_err, rmse, euclidean, one_thousandth_ratio,
// five_thousandths_ratio, nan_a, nan_b, verdict — are fixed: tests and other tools read them.
// Every other key is an addition (docs/precision.md, "JSON"). An undefined number is null.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "precision/tensor.h"
#include "report/precision_reporter.h"

namespace plumb::report {
namespace {

using ordered_json = nlohmann::ordered_json;
using precision::PairResult;

ordered_json number_json(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}

// A count that is known only where something was read: metrics, else the side's statistics.
ordered_json nan_count(const PairResult& p, bool a_side) {
  if (p.metrics) return a_side ? p.metrics->nan_a : p.metrics->nan_b;
  const std::optional<precision::Side>& side = a_side ? p.a : p.b;
  if (side && side->stats) return side->stats->nan;
  return nullptr;
}

std::string_view role_name(precision::PairRole role) {
  switch (role) {
    case precision::PairRole::kTensor: return "tensor";
    case precision::PairRole::kInput: return "input";
    case precision::PairRole::kOutput: return "output";
    case precision::PairRole::kParameter: return "parameter";
  }
  return "tensor";
}

ordered_json stats_json(const precision::TensorStats& s) {
  return {{"elements", s.elements},
          {"nan", s.nan},
          {"inf", s.inf},
          {"min", number_json(s.min)},
          {"max", number_json(s.max)},
          {"mean", number_json(s.mean)},
          {"std", number_json(s.std)},
          {"l2norm", number_json(s.l2norm)}};
}

ordered_json stat_diffs_json(const precision::StatDiffs& d) {
  return {{"max_diff", number_json(d.max_diff)},   {"min_diff", number_json(d.min_diff)},
          {"mean_diff", number_json(d.mean_diff)}, {"norm_diff", number_json(d.norm_diff)},
          {"max_rel", number_json(d.max_rel)},     {"min_rel", number_json(d.min_rel)},
          {"mean_rel", number_json(d.mean_rel)},   {"norm_rel", number_json(d.norm_rel)}};
}

// The keys first, each present in every pair.
ordered_json fixed_keys(const PairResult& p) {
  const precision::Side* side = described(p.a) ? described(p.a) : described(p.b);
  const std::optional<precision::Metrics>& m = p.metrics;
  auto metric = [&m](double precision::Metrics::*field) {
    return m ? number_json((*m).*field) : ordered_json(nullptr);
  };
  ordered_json j;
  j["name"] = p.name;
  j["dtype"] = side ? ordered_json(side->dtype) : ordered_json(nullptr);
  j["shape"] = side ? ordered_json(side->shape) : ordered_json(nullptr);
  j["cosine"] = metric(&precision::Metrics::cosine);
  j["max_abs_err"] = metric(&precision::Metrics::max_abs_err);
  j["max_rel_err"] = metric(&precision::Metrics::max_rel_err);
  j["mean_abs_err"] = metric(&precision::Metrics::mean_abs_err);
  j["rmse"] = metric(&precision::Metrics::rmse);
  j["euclidean"] = metric(&precision::Metrics::euclidean);
  j["one_thousandth_ratio"] = metric(&precision::Metrics::one_thousandth_ratio);
  j["five_thousandths_ratio"] = metric(&precision::Metrics::five_thousandths_ratio);
  j["nan_a"] = nan_count(p, true);
  j["nan_b"] = nan_count(p, false);
  j["verdict"] = precision::verdict_name(p.judgement.verdict);
  return j;
}

void add_extras(const PairResult& p, bool first_divergence, ordered_json& j) {
  j["why"] = p.judgement.why;
  j["api"] = p.api;
  j["role"] = role_name(p.role);
  j["order"] = p.order;
  j["first_divergence"] = first_divergence;
  j["a_source"] = p.a ? ordered_json(p.a->source) : ordered_json(nullptr);
  j["b_source"] = p.b ? ordered_json(p.b->source) : ordered_json(nullptr);
  const precision::Side* b = described(p.b);
  j["b_dtype"] = b ? ordered_json(b->dtype) : ordered_json(nullptr);
  j["b_shape"] = b ? ordered_json(b->shape) : ordered_json(nullptr);
  if (p.metrics) {
    const precision::Metrics& m = *p.metrics;
    j["elements"] = m.elements;
    j["max_ulp"] = m.max_ulp;
    j["ulp_beyond_share"] = number_json(m.ulp_beyond_share);
    j["not_close"] = m.not_close;
    j["inf_a"] = m.inf_a;
    j["inf_b"] = m.inf_b;
  }
  if (p.a && p.a->stats) j["stats_a"] = stats_json(*p.a->stats);
  if (p.b && p.b->stats) j["stats_b"] = stats_json(*p.b->stats);
  if (p.stat_diffs) j["stat_diffs"] = stat_diffs_json(*p.stat_diffs);
}

std::vector<bool> divergent_pairs(const precision::CompareResult& r) {
  std::vector<bool> divergent(r.pairs.size(), false);
  for (size_t i : r.first_divergence) {
    if (i < r.pairs.size()) divergent[i] = true;
  }
  return divergent;
}

ordered_json pair_json(const PairResult& p, bool divergent) {
  ordered_json j = fixed_keys(p);
  add_extras(p, divergent, j);
  return j;
}

// Every key but "pairs", in the order the reporter writes them.
std::vector<std::pair<std::string, ordered_json>> head(const precision::CompareResult& r) {
  ordered_json first = ordered_json::array();
  for (size_t i : r.first_divergence) {
    if (i < r.pairs.size()) first.push_back(r.pairs[i].name);
  }
  const size_t failed = r.failed();
  const size_t unmatched = r.unmatched();
  return {{"schema", kPrecisionSchema},
          {"a", r.a},
          {"b", r.b},
          {"mode", r.mode},
          {"rule", r.rule},
          {"summary",
           {{"pairs", r.pairs.size()},
            {"passed", r.pairs.size() - failed - unmatched},
            {"failed", failed},
            {"unmatched", unmatched}}},
          {"first_divergence", first}};
}

std::string compact(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace

ordered_json precision_to_json(const precision::CompareResult& r) {
  ordered_json doc;
  for (auto& [key, value] : head(r)) doc[key] = std::move(value);
  const std::vector<bool> divergent = divergent_pairs(r);
  ordered_json pairs = ordered_json::array();
  for (size_t i = 0; i < r.pairs.size(); ++i) pairs.push_back(pair_json(r.pairs[i], divergent[i]));
  doc["pairs"] = std::move(pairs);
  return doc;
}

// The same document as precision_to_json, written as it is made: the head's keys one per line,
// then each pair on a line of its own (a dump of 10,000 calls has 30,000 pairs: indented, they
// were 53 MB and the document held 300 MB while it was written).
void PrecisionJsonReporter::report(const precision::CompareResult& r, std::ostream& out) const {
  out << "{\n";
  for (const auto& [key, value] : head(r)) out << "  " << compact(key) << ": " << compact(value) << ",\n";
  out << "  \"pairs\": [";
  const std::vector<bool> divergent = divergent_pairs(r);
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ") << compact(pair_json(r.pairs[i], divergent[i]));
  }
  out << (r.pairs.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

ordered_json precision_stats_json(const StatsReport& report) {
  ordered_json tensors = ordered_json::array();
  for (const TensorStatsRow& t : report.tensors) {
    ordered_json j = {{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}};
    const ordered_json stats = stats_json(t.stats);
    for (auto it = stats.begin(); it != stats.end(); ++it) j[it.key()] = *it;
    tensors.push_back(std::move(j));
  }
  return {{"schema", kPrecisionStatsSchema}, {"file", report.file}, {"tensors", tensors}};
}

}  // namespace plumb::report
