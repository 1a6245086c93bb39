#include "report/serve_reporter.h"

#include "report/serve_parts.h"
#include "report/serve_peak_reporter.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/json.h"
#include "serve/measure.h"

namespace plumb::report {
namespace {

using nlohmann::json;
using serve::Distribution;
using serve::ServeSummary;

// The latency distributions in the order they are written and printed.
struct DistributionField {
  const char* key;
  const char* title;  // the console's section
  Distribution ServeSummary::*field;
};
constexpr DistributionField kDistributions[] = {
    {"ttft_ms", "Time to First Token", &ServeSummary::ttft_ms},
    {"tpot_ms", "Time per Output Token (excl. 1st token)", &ServeSummary::tpot_ms},
    {"itl_ms", "Inter-token Latency", &ServeSummary::itl_ms},
    {"e2e_ms", "End-to-end Latency", &ServeSummary::e2e_ms},
    {"dispatch_delay_ms", "Dispatch delay (scheduled to sent)", &ServeSummary::dispatch_delay_ms},
    {"client_lag_ms", "Client lag (ready to sent)", &ServeSummary::client_lag_ms},
};

struct RateField {
  const char* key;
  double ServeSummary::*field;
};
constexpr RateField kRates[] = {
    {"duration_s", &ServeSummary::duration_s},
    {"requests_per_second", &ServeSummary::requests_per_second},
    {"output_tokens_per_second", &ServeSummary::output_tokens_per_second},
    {"total_tokens_per_second", &ServeSummary::total_tokens_per_second},
    {"goodput_requests_per_second", &ServeSummary::goodput_requests_per_second},
};

struct CountField {
  const char* key;
  std::int64_t ServeSummary::*field;
};
constexpr CountField kCounts[] = {
    {"completed", &ServeSummary::completed},         {"errors", &ServeSummary::errors},
    {"not_released", &ServeSummary::not_released},   {"input_tokens", &ServeSummary::input_tokens},
    {"output_tokens", &ServeSummary::output_tokens},
};

// Nothing measured (no completed request, no second token): null figures, never a 0 ms latency.
json distribution_json(const Distribution& d) {
  if (d.count == 0) {
    return {{"count", 0},      {"mean", nullptr}, {"p50", nullptr},
            {"p90", nullptr},  {"p99", nullptr},  {"max", nullptr}};
  }
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99},   {"max", d.max}};
}

json summary_json(const ServeSummary& s) {
  json j = json::object();
  for (const auto& c : kCounts) j[c.key] = s.*c.field;
  j["errors_by_kind"] = s.errors_by_kind;
  for (const auto& r : kRates) j[r.key] = s.*r.field;
  for (const auto& d : kDistributions) j[d.key] = distribution_json(s.*d.field);
  j["token_source"] = s.token_source;
  j["client_kept_up"] = s.client_kept_up;
  j["keep_up_detail"] = s.keep_up_detail;
  return j;
}

json slo_json(const serve::Slo& slo) {
  json j = json::object();
  if (slo.ttft_ms) j["ttft_ms"] = *slo.ttft_ms;
  if (slo.itl_ms) j["itl_ms"] = *slo.itl_ms;
  if (slo.tpot_ms) j["tpot_ms"] = *slo.tpot_ms;
  if (slo.e2e_ms) j["e2e_ms"] = *slo.e2e_ms;
  return j;
}

json setup_json(const serve::ServeSetup& s) {
  return {{"url", s.url},         {"api", s.api},   {"model", s.model}, {"arrival", s.arrival},
          {"dataset", s.dataset}, {"seed", s.seed}, {"cards", s.cards}, {"slo", slo_json(s.slo)}};
}

json run_json(const serve::ServeRun& run) {
  json j = summary_json(run.summary);
  j["concurrency"] = run.concurrency;
  j["rate"] = std::isinf(run.rate) ? json("inf") : json(run.rate);
  j["repeats"] = json::array();
  for (const auto& r : run.repeats) j["repeats"].push_back(summary_json(r));
  serve_parts_json(run, j);  // "server", "energy", "cost" when taken
  return j;
}

// ---- reading back ----

Distribution distribution_from(const JsonFields& f, const json& parent, const std::string& path,
                               const char* key) {
  const json& o = f.object(parent, path, key);
  const std::string at = JsonFields::at(path, key);
  Distribution d;
  d.count = f.integer(o, at, "count", 0, kMaxJsonCount);
  if (d.count == 0) return d;  // its figures are null: nothing was measured
  d.mean = f.number(o, at, "mean");
  d.p50 = f.number(o, at, "p50");
  d.p90 = f.number(o, at, "p90");
  d.p99 = f.number(o, at, "p99");
  d.max = f.number(o, at, "max");
  return d;
}

ServeSummary summary_from(const JsonFields& f, const json& o, const std::string& path) {
  ServeSummary s;
  for (const auto& c : kCounts) s.*c.field = f.integer(o, path, c.key, 0, kMaxJsonCount);
  const json& kinds = f.object(o, path, "errors_by_kind");
  const std::string kinds_path = JsonFields::at(path, "errors_by_kind");
  for (const auto& [kind, _] : kinds.items()) {
    s.errors_by_kind[kind] = f.integer(kinds, kinds_path, kind.c_str(), 0, kMaxJsonCount);
  }
  for (const auto& r : kRates) s.*r.field = f.number(o, path, r.key);
  for (const auto& d : kDistributions) s.*d.field = distribution_from(f, o, path, d.key);
  s.token_source = f.text(o, path, "token_source");
  const json& kept = f.member(o, path, "client_kept_up");
  if (!kept.is_boolean())
    f.fail(JsonFields::at(path, "client_kept_up"),
           "expected true or false, got " + JsonFields::shown(kept));
  s.client_kept_up = kept.get<bool>();
  s.keep_up_detail = f.text(o, path, "keep_up_detail");
  return s;
}

serve::Slo slo_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::Slo slo;
  for (auto [key, field] :
       {std::pair{"ttft_ms", &serve::Slo::ttft_ms}, std::pair{"itl_ms", &serve::Slo::itl_ms},
        std::pair{"tpot_ms", &serve::Slo::tpot_ms}, std::pair{"e2e_ms", &serve::Slo::e2e_ms}}) {
    if (o.contains(key)) slo.*field = f.number(o, path, key);
  }
  return slo;
}

serve::ServeSetup setup_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::ServeSetup s;
  s.url = f.text(o, path, "url");
  s.api = f.text(o, path, "api");
  s.model = f.text(o, path, "model");
  s.arrival = f.text(o, path, "arrival");
  s.dataset = f.text(o, path, "dataset");
  s.seed = f.whole(o, path, "seed");
  s.cards = static_cast<int>(f.integer(o, path, "cards", 1, 1'000'000));
  s.slo = slo_from(f, f.object(o, path, "slo"), JsonFields::at(path, "slo"));
  return s;
}

double rate_from(const JsonFields& f, const json& o, const std::string& path) {
  const json& v = f.member(o, path, "rate");
  if (v.is_string() && v.get<std::string>() == "inf")
    return std::numeric_limits<double>::infinity();
  const double rate = f.number(o, path, "rate");
  if (rate < 0)
    f.fail(JsonFields::at(path, "rate"), fmt::format("expected 0 or more, got {}", rate));
  return rate;
}

serve::ServeRun run_from(const JsonFields& f, const json& o, const std::string& path) {
  serve::ServeRun run;
  run.summary = summary_from(f, o, path);
  run.concurrency = static_cast<int>(f.integer(o, path, "concurrency", 0, 100'000'000));
  run.rate = rate_from(f, o, path);
  const json& repeats = f.array(o, path, "repeats");
  for (size_t i = 0; i < repeats.size(); ++i) {
    run.repeats.push_back(summary_from(f, repeats[i], fmt::format("{}.repeats[{}]", path, i)));
  }
  serve_parts_from(f, o, path, run);
  return run;
}

// ---- the console ----

std::string errors_text(const ServeSummary& s) {
  if (s.errors == 0) return "0";
  std::string text = fmt::format("{} (", s.errors);
  const char* sep = "";
  for (const auto& [kind, n] : s.errors_by_kind) {
    text += fmt::format("{}{} {}", sep, kind, n);
    sep = ", ";
  }
  return text + ")";
}

void print_block(std::ostream& out, const serve::ServeRun& run, const serve::ServeSetup& setup) {
  const ServeSummary& s = run.summary;
  auto line = [&out](std::string_view name, const std::string& value) {
    out << fmt::format("{:<40} {}\n", name, value);
  };
  out << fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  line("Load:", serve_run_label(run));
  line("Successful requests:", std::to_string(s.completed));
  line("Failed requests:", errors_text(s));
  if (s.not_released > 0) line("Not sent (duration or stop):", std::to_string(s.not_released));
  line("Benchmark duration (s):", fmt::format("{:.2f}", s.duration_s));
  line("Total input tokens:", std::to_string(s.input_tokens));
  line("Total generated tokens:",
       fmt::format("{} (counted from {})", s.output_tokens, s.token_source));
  line("Request throughput (req/s):", fmt::format("{:.2f}", s.requests_per_second));
  line("Output token throughput (tok/s):", fmt::format("{:.2f}", s.output_tokens_per_second));
  line("Total token throughput (tok/s):", fmt::format("{:.2f}", s.total_tokens_per_second));
  if (!setup.slo.empty()) {
    line(fmt::format("Goodput (req/s, {}):", serve::slo_text(setup.slo)),
         fmt::format("{:.2f}", s.goodput_requests_per_second));
  }
  for (const auto& d : kDistributions) {
    const Distribution& v = s.*d.field;
    out << fmt::format("{:-^50}\n", fmt::format(" {} (ms) ", d.title));
    if (v.count == 0) {
      line("Mean / Median:", "- (none measured)");
      continue;
    }
    line("Mean / Median:", fmt::format("{:.2f} / {:.2f}", v.mean, v.p50));
    line("P90 / P99 / Max:", fmt::format("{:.2f} / {:.2f} / {:.2f}", v.p90, v.p99, v.max));
  }
  out << fmt::format("{:=^50}\n", "");
  out << "Keep-up: " << s.keep_up_detail << "\n";
  for (const std::string& part : serve_part_lines(run)) out << part << "\n";
}

// A table cell: the figure, or "-" when its distribution measured nothing.
std::string ms_or_dash(const Distribution& d, double figure) {
  return d.count == 0 ? std::string("-") : fmt::format("{:.2f}", figure);
}

void print_table(std::ostream& out, const serve::ServeResult& result) {
  constexpr const char* kRow =
      "{:<14} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  {}\n";
  out << fmt::format(kRow, "load", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50",
                     "TPOT p99", "ITL p99", "E2E p99", "goodput", "errors");
  for (const auto& run : result.runs) {
    const ServeSummary& s = run.summary;
    std::string errors = errors_text(s);
    if (!s.client_kept_up)
      errors += "; client behind: lag p99 " + fmt::format("{:.3g} ms", s.client_lag_ms.p99);
    out << fmt::format(kRow, serve_run_label(run), fmt::format("{:.2f}", s.requests_per_second),
                       fmt::format("{:.1f}", s.output_tokens_per_second),
                       ms_or_dash(s.ttft_ms, s.ttft_ms.p50), ms_or_dash(s.ttft_ms, s.ttft_ms.p99),
                       ms_or_dash(s.tpot_ms, s.tpot_ms.p50), ms_or_dash(s.tpot_ms, s.tpot_ms.p99),
                       ms_or_dash(s.itl_ms, s.itl_ms.p99), ms_or_dash(s.e2e_ms, s.e2e_ms.p99),
                       fmt::format("{:.2f}", s.goodput_requests_per_second), errors);
  }
  for (const auto& run : result.runs) {
    for (const std::string& part : serve_part_lines(run)) out << serve_run_label(run) << ": " << part << "\n";
  }
  out << "(latencies in ms from each request's scheduled time";
  if (!result.setup.slo.empty())
    out << "; goodput: req/s meeting " << serve::slo_text(result.setup.slo);
  out << ")\n";
}

}  // namespace

std::string serve_run_label(const serve::ServeRun& run) {
  std::string label;
  if (std::isinf(run.rate))
    label = "r=inf";
  else if (run.rate > 0)
    label = fmt::format("r={:g}/s", run.rate);
  if (run.concurrency > 0)
    label += fmt::format("{}c={}", label.empty() ? "" : " ", run.concurrency);
  return label.empty() ? "trace" : label;
}

void print_serve_console(std::ostream& out, const serve::ServeResult& result) {
  if (result.runs.size() == 1) {
    print_block(out, result.runs.front(), result.setup);
  } else {
    print_table(out, result);
  }
  if (result.peak) {  // a stored plumb serve peak: its probes, its answer and the Pareto table
    out << "\n";
    print_peak_console(out, result);
  }
}

json serve_json(const serve::ServeResult& result) {
  json j = {{"schema", kServeSchema}, {"setup", setup_json(result.setup)}, {"runs", json::array()}};
  for (const auto& run : result.runs) j["runs"].push_back(run_json(run));
  if (result.peak) {
    j["peak"] = peak_json(*result.peak);
    j["pareto"] = pareto_json(serve::pareto_points(result));
  }
  return j;
}

serve::ServeResult serve_from_json(const json& doc, const std::string& where) {
  const JsonFields f(where);
  if (!doc.is_object())
    throw Error(where + ": expected a plumb.serve/1 object, got " + JsonFields::shown(doc));
  const std::string schema = f.text(doc, "", "schema");
  if (schema != kServeSchema)
    f.fail("schema", fmt::format("expected \"{}\", got \"{}\"", kServeSchema, schema));
  serve::ServeResult result;
  result.setup = setup_from(f, f.object(doc, "", "setup"), "setup");
  const json& runs = f.array(doc, "", "runs");
  for (size_t i = 0; i < runs.size(); ++i) {
    result.runs.push_back(run_from(f, runs[i], fmt::format("runs[{}]", i)));
  }
  if (doc.contains("peak") && !doc["peak"].is_null()) {
    result.peak = peak_from_json(f, doc["peak"], "peak", result.runs.size());
  }
  return result;
}

}  // namespace plumb::report
