#include "baseline/serve_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/stats.h"
#include "common/strings.h"
#include "serve/measure.h"

namespace plumb::baseline {
namespace {

constexpr int kMostRepeatsAdvised = 30;  // beyond, the advice is a quieter server
// Two rates closer than this (relative) are the same load point (written and read back as text).
constexpr double kSameRate = 1e-9;

using serve::ServeRun;
using serve::ServeSummary;

struct ServeFigureSpec {
  const char* figure;
  const char* field;
  const char* unit;
  bool lower_is_better;
  bool needs_slo;  // goodput: only where the record had an SLO
  double (*get)(const ServeSummary&);
};

// A latency of a distribution that measured nothing (no request completed) is missing, never 0 ms.
double measured(const serve::Distribution& d, double figure) { return d.count == 0 ? kNaN : figure; }

constexpr ServeFigureSpec kServeFigures[] = {
    {"ttft p50", "ttft_ms.p50", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.ttft_ms, s.ttft_ms.p50); }},
    {"ttft p99", "ttft_ms.p99", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.ttft_ms, s.ttft_ms.p99); }},
    {"tpot p50", "tpot_ms.p50", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.tpot_ms, s.tpot_ms.p50); }},
    {"tpot p99", "tpot_ms.p99", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.tpot_ms, s.tpot_ms.p99); }},
    {"itl p50", "itl_ms.p50", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.itl_ms, s.itl_ms.p50); }},
    {"itl p99", "itl_ms.p99", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.itl_ms, s.itl_ms.p99); }},
    {"e2e p50", "e2e_ms.p50", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.e2e_ms, s.e2e_ms.p50); }},
    {"e2e p99", "e2e_ms.p99", "ms", true, false,
     [](const ServeSummary& s) { return measured(s.e2e_ms, s.e2e_ms.p99); }},
    {"output tokens/s", "output_tokens_per_second", "tok/s", false, false,
     [](const ServeSummary& s) { return s.output_tokens_per_second; }},
    {"goodput", "goodput_requests_per_second", "req/s", false, true,
     [](const ServeSummary& s) { return s.goodput_requests_per_second; }},
};

bool has_noise(const ServeRun& r) {
  return r.repeats.size() >= static_cast<size_t>(kMinRepeatsForNoise);
}

std::vector<double> repeat_values(const ServeFigureSpec& f, const ServeRun& r) {
  std::vector<double> out;
  for (const ServeSummary& s : r.repeats) out.push_back(f.get(s));
  return out;
}

// The median over the repetitions where there are enough to have a spread, else the pooled run.
double value_of(const ServeFigureSpec& f, const ServeRun& r, bool has_slo) {
  if (f.needs_slo && !has_slo) return kNaN;
  const ServeSummary& s = r.summary;
  if (s.completed == 0 && s.errors == 0 && r.repeats.empty()) return kNaN;
  return has_noise(r) ? median(repeat_values(f, r)) : f.get(s);
}

double noise_of(const ServeFigureSpec& f, const ServeRun& a, const ServeRun& b, double base) {
  if (!has_noise(a) || !has_noise(b) || !(base > 0)) return 0;
  const std::vector<double> va = repeat_values(f, a), vb = repeat_values(f, b);
  const double sa = median_sigma_per_mad_of(static_cast<int>(va.size())) * median_absolute_deviation(va) / base;
  const double sb = median_sigma_per_mad_of(static_cast<int>(vb.size())) * median_absolute_deviation(vb) / base;
  return kNoiseSigmas * std::hypot(sa, sb);
}

ServeFigureDiff figure_diff(const ServeFigureSpec& f, const ServeRun& a, const ServeRun& b,
                            bool slo_a, bool slo_b, double threshold) {
  ServeFigureDiff d{f.figure, f.field, f.unit, f.lower_is_better, value_of(f, a, slo_a),
                    value_of(f, b, slo_b), kNaN, 0, Verdict::kSame};
  // Measured on one side only (every request of the other failed): said so, never judged.
  const bool a_measured = !std::isnan(d.a), b_measured = !std::isnan(d.b);
  if (a_measured != b_measured && !(f.needs_slo && (!slo_a || !slo_b))) {
    d.verdict = a_measured ? Verdict::kOnlyInA : Verdict::kOnlyInB;
    return d;
  }
  if (!(d.a > 0) || std::isnan(d.b)) return d;
  d.change = (d.b - d.a) / d.a;
  d.noise = noise_of(f, a, b, d.a);
  d.verdict = f.lower_is_better ? judge_time_change(d.change, d.noise, threshold)
                                : judge_change(d.change, d.noise, threshold);
  return d;
}

int severity(Verdict v) {
  switch (v) {
    case Verdict::kRegression: return 3;
    case Verdict::kTooNoisy: return 2;
    case Verdict::kImprovement: return 1;
    default: return 0;
  }
}

std::string load_of(const ServeRun& r) {
  if (r.rate > 0 && r.concurrency > 0) return fmt::format("rate {:g}/s, concurrency {}", r.rate, r.concurrency);
  if (r.rate > 0) return fmt::format("rate {:g}/s", r.rate);
  return fmt::format("concurrency {}", r.concurrency);
}

bool same_load(const ServeRun& a, const ServeRun& b) {
  return a.concurrency == b.concurrency &&
         std::abs(a.rate - b.rate) <= kSameRate * std::max(std::abs(a.rate), std::abs(b.rate));
}

ServeRunDiff unmatched(const ServeRun& r, Verdict side) {
  ServeRunDiff d;
  d.load = load_of(r);
  d.concurrency = r.concurrency;
  d.rate = r.rate;
  d.verdict = side;
  return d;
}

ServeRunDiff run_diff(const ServeRun& a, const ServeRun& b, bool slo_a, bool slo_b, double threshold) {
  ServeRunDiff d = unmatched(a, Verdict::kSame);
  d.repeats_a = static_cast<int>(a.repeats.size());
  d.repeats_b = static_cast<int>(b.repeats.size());
  for (const ServeFigureSpec& f : kServeFigures) {
    d.figures.push_back(figure_diff(f, a, b, slo_a, slo_b, threshold));
    if (severity(d.figures.back().verdict) > severity(d.verdict)) d.verdict = d.figures.back().verdict;
  }
  return d;
}

// The SLOs as `plumb serve --slo` takes them (serve::slo_text), "(none)" when there are none.
std::string slo_or_none(const serve::Slo& s) {
  const std::string text = serve::slo_text(s);
  return text.empty() ? "(none)" : text;
}

std::vector<VariableDiff> setup_diffs(const serve::ServeSetup& a, const serve::ServeSetup& b) {
  const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
      {"url", {a.url, b.url}},
      {"api", {a.api, b.api}},
      {"model", {a.model, b.model}},
      {"arrival", {a.arrival, b.arrival}},
      {"dataset", {a.dataset, b.dataset}},
      {"seed", {std::to_string(a.seed), std::to_string(b.seed)}},
      {"cards", {std::to_string(a.cards), std::to_string(b.cards)}},
      {"slo", {slo_or_none(a.slo), slo_or_none(b.slo)}},
  };
  std::vector<VariableDiff> out;
  for (const auto& [name, values] : fields) {
    if (values.first != values.second) out.push_back({"setting", name, values.first, values.second});
  }
  return out;
}

std::string loads_text(const std::vector<ServeRun>& runs) {
  std::vector<std::string> loads;
  for (const ServeRun& r : runs) loads.push_back(load_of(r));
  return join(loads, ", ");
}

void add_notes(ServeDiff& d, const serve::ServeResult& a, const serve::ServeResult& b) {
  for (const auto& [name, result] : {std::pair{&d.a_name, &a}, std::pair{&d.b_name, &b}}) {
    const bool all = std::all_of(result->runs.begin(), result->runs.end(), has_noise);
    if (!all) {
      d.notes.push_back(fmt::format("{} has runs with fewer than {} repetitions (--repeat): no noise "
                                    "estimate for them, only the threshold judges",
                                    *name, kMinRepeatsForNoise));
    }
  }
}

template <class Pred>
int count_figures(const std::vector<ServeRunDiff>& runs, Pred pred) {
  int n = 0;
  for (const ServeRunDiff& r : runs) {
    n += static_cast<int>(std::count_if(r.figures.begin(), r.figures.end(), pred));
  }
  return n;
}

}  // namespace

ServeDiff diff_serve(const serve::ServeResult& a, const serve::ServeResult& b,
                     const DiffOptions& options) {
  ServeDiff d;
  d.a_name = options.a_name.empty() ? "A" : options.a_name;
  d.b_name = options.b_name.empty() ? "B" : options.b_name;
  d.threshold = options.threshold;
  for (const auto& [name, result] : {std::pair{&d.a_name, &a}, std::pair{&d.b_name, &b}}) {
    if (result->runs.empty()) throw Error(fmt::format("{} holds no serving run: nothing to compare", *name));
  }
  const bool slo_a = !a.setup.slo.empty(), slo_b = !b.setup.slo.empty();
  std::vector<bool> matched_b(b.runs.size(), false);
  for (const ServeRun& ra : a.runs) {
    auto it = std::find_if(b.runs.begin(), b.runs.end(), [&](const ServeRun& rb) { return same_load(ra, rb); });
    if (it == b.runs.end()) {
      d.runs.push_back(unmatched(ra, Verdict::kOnlyInA));
      continue;
    }
    matched_b[static_cast<size_t>(it - b.runs.begin())] = true;
    d.runs.push_back(run_diff(ra, *it, slo_a, slo_b, d.threshold));
  }
  for (size_t i = 0; i < b.runs.size(); ++i) {
    if (!matched_b[i]) d.runs.push_back(unmatched(b.runs[i], Verdict::kOnlyInB));
  }
  if (std::none_of(matched_b.begin(), matched_b.end(), [](bool m) { return m; })) {
    throw Error(fmt::format("{} and {} share no load point ({}: {}; {}: {}): nothing to compare",
                            d.a_name, d.b_name, d.a_name, loads_text(a.runs), d.b_name, loads_text(b.runs)));
  }
  d.variables = setup_diffs(a.setup, b.setup);
  add_notes(d, a, b);
  return d;
}

int ServeDiff::regressions() const {
  return count_figures(runs, [](const ServeFigureDiff& f) { return f.verdict == Verdict::kRegression; });
}

int ServeDiff::too_noisy() const {
  return count_figures(runs, [](const ServeFigureDiff& f) { return f.verdict == Verdict::kTooNoisy; });
}

int ServeDiff::exit_code() const {
  if (regressions() > 0) return static_cast<int>(ExitCode::kCheckFailed);
  return too_noisy() > 0 ? kTooNoisyExitCode : 0;
}

std::string ServeDiff::too_noisy_advice() const {
  if (too_noisy() == 0) return "";
  int repeats = 0;
  for (const ServeRunDiff& r : runs) {
    const int n = std::min(r.repeats_a, r.repeats_b);
    for (const ServeFigureDiff& f : r.figures) {
      if (f.verdict != Verdict::kTooNoisy) continue;
      int k = n + 1;
      const double now = median_sigma_per_mad_of(n);
      while (k < kMostRepeatsAdvised && !(f.noise * median_sigma_per_mad_of(k) / now < std::abs(f.change))) ++k;
      repeats = std::max(repeats, k);
    }
  }
  return fmt::format("to judge them, repeat each load point more times: the noise falls about as "
                     "1/√repetitions, so about --repeat {} in both records would bring it under the "
                     "change; or measure when the server is quieter",
                     repeats);
}

std::string ServeDiff::attribution_warning() const {
  if (variables.size() <= 1) return "";
  std::vector<std::string> names;
  for (const VariableDiff& v : variables) names.push_back(v.name);
  return fmt::format("{} settings differ ({}): a change cannot be put down to one of them",
                     variables.size(), join(names, ", "));
}

nlohmann::json serve_diff_json(const ServeDiff& d) {
  using nlohmann::json;
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json runs = json::array();
  for (const ServeRunDiff& r : d.runs) {
    json figures = json::array();
    for (const ServeFigureDiff& f : r.figures) {
      figures.push_back({{"figure", f.figure}, {"field", f.field}, {"unit", f.unit},
                         {"lower_is_better", f.lower_is_better}, {"a", num(f.a)}, {"b", num(f.b)},
                         {"change", num(f.change)}, {"noise", f.noise},
                         {"verdict", verdict_name(f.verdict)}});
    }
    runs.push_back({{"load", r.load}, {"concurrency", r.concurrency}, {"rate", r.rate},
                    {"repeats_a", r.repeats_a}, {"repeats_b", r.repeats_b},
                    {"verdict", verdict_name(r.verdict)}, {"figures", figures}});
  }
  json variables = json::array();
  for (const VariableDiff& v : d.variables) {
    variables.push_back({{"kind", v.kind}, {"name", v.name}, {"a", v.a}, {"b", v.b}});
  }
  const std::string advice = d.too_noisy_advice(), warning = d.attribution_warning();
  return {{"schema", kServeDiffSchema}, {"a", d.a_name}, {"b", d.b_name},
          {"threshold", d.threshold}, {"regressions", d.regressions()},
          {"too_noisy", d.too_noisy()}, {"exit_code", d.exit_code()},
          {"advice", advice.empty() ? json(nullptr) : json(advice)},
          {"warning", warning.empty() ? json(nullptr) : json(warning)},
          {"notes", d.notes}, {"variables", variables}, {"runs", runs}};
}

}  // namespace plumb::baseline
