#include "report/serve_peak_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/json.h"
#include "common/strings.h"

namespace plumb::report {
namespace {

using nlohmann::json;

std::string load_text(const serve::PeakResult& p, double load) {
  return p.axis == "rate" ? fmt::format("{:.4g}/s", load) : fmt::format("{:g}", load);
}

std::string verdict_text(const serve::PeakProbe& p) {
  return std::string(p.passed ? "pass" : "fail") + (p.confident ? "" : "*");
}

void print_probes(std::ostream& out, const serve::ServeResult& r) {
  const serve::PeakResult& p = *r.peak;
  std::string head = fmt::format("{:>5} {:>12} {:>9}", "probe", p.axis, "requests");
  if (!p.probes.empty()) {
    for (const serve::BoundTally& b : p.probes.front().bounds) {
      head += fmt::format(" {:>13}", b.metric + " p99 ms");
    }
  }
  fmt::print(out, "{} {:>7}  {}\n", head, "verdict", "why");
  for (size_t i = 0; i < p.probes.size(); ++i) {
    const serve::PeakProbe& q = p.probes[i];
    std::string line = fmt::format("{:>5} {:>12} {:>9}", i + 1, load_text(p, q.load), q.requests);
    for (const serve::BoundTally& b : q.bounds) line += fmt::format(" {:>13.4g}", b.p99_ms);
    fmt::print(out, "{} {:>7}  {}\n", line, verdict_text(q), terminal_safe(q.why));
  }
  const bool unsure = std::any_of(p.probes.begin(), p.probes.end(),
                                  [](const serve::PeakProbe& q) { return !q.confident; });
  if (unsure) {
    fmt::print(out, "# * judged on the observed p99 alone, not at 99% confidence{}\n",
               p.early_stopping ? " (undecided at --max-requests)" : " (--no-early-stopping)");
  }
}

void print_answer(std::ostream& out, const serve::ServeResult& r) {
  const serve::PeakResult& p = *r.peak;
  if (!p.best) {
    fmt::print(out, "peak: none: {}\n", p.stop_reason);
    return;
  }
  const std::string per_card =
      p.cards == 1 ? std::string()
                   : fmt::format(" ({} per card on {} cards{})", load_text(p, p.best_per_card), p.cards,
                                 p.axis == "concurrency" ? ": the batch each card sees" : "");
  fmt::print(out, "peak: {} {}{}: {}\n", p.axis, load_text(p, *p.best), per_card, p.stop_reason);
  for (const serve::PeakProbe& q : p.probes) {
    if (q.load != *p.best || !q.passed || q.run_index < 0) continue;
    const serve::ServeRun& run = r.runs[static_cast<size_t>(q.run_index)];
    if (run.cost && std::isfinite(run.cost->cost_per_million_output_tokens)) {
      fmt::print(out, "cost at the peak: {:.4g} per million output tokens ({:g} per card-hour, {})\n",
                 run.cost->cost_per_million_output_tokens, run.cost->price_per_card_hour,
                 run.cost->price_source);
    }
    break;
  }
  if (!p.reproduce.empty()) fmt::print(out, "reproduce: {}\n", terminal_safe(p.reproduce));
}

std::string cost_cell(const serve::ParetoPoint& p) {
  return p.cost_per_million_output_tokens ? fmt::format("{:.4g}", *p.cost_per_million_output_tokens)
                                          : std::string("-");
}


// ---- reading back (a stored or exported peak search) ----

bool flag_from(const JsonFields& f, const json& o, const std::string& path, const char* key) {
  const json& v = f.member(o, path, key);
  if (!v.is_boolean()) f.fail(JsonFields::at(path, key), "expected true or false, got " + JsonFields::shown(v));
  return v.get<bool>();
}

serve::Judgement judgement_from(const JsonFields& f, const json& o, const std::string& path) {
  const std::string name = f.text(o, path, "judgement");
  for (serve::Judgement j : {serve::Judgement::holds, serve::Judgement::fails, serve::Judgement::undecided}) {
    if (serve::judgement_name(j) == name) return j;
  }
  f.fail(JsonFields::at(path, "judgement"),
         fmt::format("expected \"holds\", \"fails\" or \"undecided\", got \"{}\"", name));
}

serve::BoundTally bound_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::BoundTally b;
  b.metric = f.text(o, path, "metric");
  b.bound_ms = f.number(o, path, "bound_ms");
  b.p99_ms = f.number_or_null(o, path, "p99_ms");
  b.samples = f.integer(o, path, "samples", 0, kMaxJsonCount);
  b.misses = f.integer(o, path, "misses", 0, kMaxJsonCount);
  b.judged.judgement = judgement_from(f, o, path);
  b.judged.more_needed = f.integer(o, path, "more_needed", 0, kMaxJsonCount);
  return b;
}

serve::PeakProbe probe_from(const JsonFields& f, const json& o, const std::string& path, size_t runs) {
  serve::PeakProbe q;
  q.load = f.number(o, path, "load");
  q.requests = f.integer(o, path, "requests", 0, kMaxJsonCount);
  q.asked = f.integer(o, path, "asked", 0, kMaxJsonCount);
  q.runs = static_cast<int>(f.integer(o, path, "runs", 1, kMaxJsonCount));
  q.errors = f.integer(o, path, "errors", 0, kMaxJsonCount);
  q.passed = flag_from(f, o, path, "passed");
  q.confident = flag_from(f, o, path, "confident");
  q.why = f.text(o, path, "why");
  // An index into runs[]: the console and the Pareto look the run up by it.
  q.run_index = static_cast<int>(f.integer(o, path, "run_index", -1, static_cast<int64_t>(runs) - 1));
  const json& bounds = f.array(o, path, "bounds");
  for (size_t i = 0; i < bounds.size(); ++i) {
    q.bounds.push_back(bound_from(f, bounds[i], fmt::format("{}.bounds[{}]", path, i)));
  }
  return q;
}

}  // namespace

void print_pareto_table(std::ostream& out, const std::vector<serve::ParetoPoint>& points) {
  if (points.empty()) return;
  std::vector<serve::ParetoPoint> sorted = points;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
  });
  fmt::print(out, "# Pareto: tokens/s per user (1000 / mean TPOT) against output tokens/s per "
                  "card; * on the frontier (no other run is better on both)\n");
  fmt::print(out, "{:<16} {:>12} {:>12} {:>10} {:>6} {:>10}\n", "load", "tok/s/user", "tok/s/card",
             "tpot mean", "SLO", "cost/Mtok");
  for (const serve::ParetoPoint& p : sorted) {
    const std::string slo = !p.met_slo ? "-" : *p.met_slo ? "met" : "missed";
    fmt::print(out, "{:<16} {:>12.4g} {:>12.4g} {:>10.4g} {:>6} {:>10}\n",
               (p.on_frontier ? "* " : "  ") + p.label, p.tokens_per_s_per_user,
               p.tokens_per_s_per_card, p.tpot_mean_ms, slo, cost_cell(p));
  }
}

void print_peak_console(std::ostream& out, const serve::ServeResult& r) {
  const serve::PeakResult& p = *r.peak;
  fmt::print(out, "# plumb serve peak · the highest {} at which every SLO bound holds at p99 · {} "
                  "card(s) · {}\n",
             p.axis, p.cards,
             p.early_stopping ? "each probe judged at 99% confidence (early stopping)"
                              : "each probe judged on its observed p99 (--no-early-stopping)");
  print_probes(out, r);
  print_answer(out, r);
  print_pareto_table(out, serve::pareto_points(r));
}

json peak_json(const serve::PeakResult& p) {
  json probes = json::array();
  for (const serve::PeakProbe& q : p.probes) {
    json bounds = json::array();
    for (const serve::BoundTally& b : q.bounds) {
      bounds.push_back({{"metric", b.metric}, {"bound_ms", b.bound_ms}, {"p99_ms", b.p99_ms},
                        {"samples", b.samples}, {"misses", b.misses},
                        {"judgement", serve::judgement_name(b.judged.judgement)},
                        {"more_needed", b.judged.more_needed}});
    }
    probes.push_back({{"load", q.load}, {"requests", q.requests}, {"asked", q.asked}, {"runs", q.runs},
                      {"errors", q.errors}, {"passed", q.passed}, {"confident", q.confident},
                      {"why", q.why}, {"run_index", q.run_index}, {"bounds", bounds}});
  }
  return {{"axis", p.axis}, {"cards", p.cards}, {"early_stopping", p.early_stopping},
          {"best", p.best ? json(*p.best) : json(nullptr)},
          {"best_per_card", p.best ? json(p.best_per_card) : json(nullptr)},
          {"lowest_failed", p.lowest_failed > 0 ? json(p.lowest_failed) : json(nullptr)},
          {"stop_reason", p.stop_reason}, {"reproduce", p.reproduce}, {"probes", probes}};
}

json pareto_json(const std::vector<serve::ParetoPoint>& points) {
  json out = json::array();
  for (const serve::ParetoPoint& p : points) {
    out.push_back({{"label", p.label}, {"concurrency", p.concurrency}, {"rate", p.rate},
                   {"tokens_per_second_per_user", p.tokens_per_s_per_user},
                   {"output_tokens_per_second_per_card", p.tokens_per_s_per_card},
                   {"tpot_mean_ms", p.tpot_mean_ms}, {"on_frontier", p.on_frontier},
                   {"met_slo", p.met_slo ? json(*p.met_slo) : json(nullptr)},
                   {"cost_per_million_output_tokens",
                    p.cost_per_million_output_tokens ? json(*p.cost_per_million_output_tokens)
                                                     : json(nullptr)}});
  }
  return out;
}

}  // namespace plumb::report

namespace plumb::report {

serve::PeakResult peak_from_json(const JsonFields& f, const json& o, const std::string& path,
                                 size_t runs) {
  serve::PeakResult p;
  p.axis = f.text(o, path, "axis");
  if (p.axis != "rate" && p.axis != "concurrency") {
    f.fail(JsonFields::at(path, "axis"), fmt::format("expected \"rate\" or \"concurrency\", got \"{}\"", p.axis));
  }
  p.cards = static_cast<int>(f.integer(o, path, "cards", 1, 1'000'000));
  p.early_stopping = flag_from(f, o, path, "early_stopping");
  if (!f.member(o, path, "best").is_null()) {
    p.best = f.number(o, path, "best");
    p.best_per_card = f.number(o, path, "best_per_card");
  }
  const double lowest = f.number_or_null(o, path, "lowest_failed");
  p.lowest_failed = std::isfinite(lowest) ? lowest : 0;
  p.stop_reason = f.text(o, path, "stop_reason");
  p.reproduce = f.text(o, path, "reproduce");
  const json& probes = f.array(o, path, "probes");
  for (size_t i = 0; i < probes.size(); ++i) {
    p.probes.push_back(probe_from(f, probes[i], fmt::format("{}.probes[{}]", path, i), runs));
  }
  return p;
}

}  // namespace plumb::report
