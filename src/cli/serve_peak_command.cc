// plumb serve peak: the highest rate, or concurrency (the batch a card sees), at which every
// --slo bound holds at p99, found as MLPerf LoadGen's FindPeakPerformance (serve/peak.h): each
// probe a run of at least --min-requests requests and --min-duration seconds, judged by early
// stopping; the answer per card (--cards), the cost per million output tokens at each probe
// (--price or --hardware), the Pareto table, and the command that reproduces the best point
// (docs/serve.md). Exit 0 with a peak; 1 when no load met the SLO; 2 for bad usage or input.
#include "cli/serve_options.h"
#include "cli/serve_run.h"
#include "cli/serve_store.h"
#include "cli/serve_subcommands.h"
#include "cli/stop_signal.h"

#include "common/error.h"
#include "common/output_file.h"
#include "common/progress.h"
#include "common/url_redact.h"
#include "report/serve_pareto_html.h"
#include "report/serve_peak_reporter.h"
#include "report/serve_reporter.h"
#include "serve/cost.h"
#include "serve/measure.h"
#include "serve/pareto.h"
#include "serve/peak.h"
#include "serve/workload.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

namespace plumb::cli {
namespace {

// A probe stops early on a confident failure only after this share of its requests (and at
// least kLeastBeforeStop of them) have ended: the first few of a run may meet a cold server.
constexpr double kShareBeforeStop = 0.1;
constexpr std::int64_t kLeastBeforeStop = 50;
constexpr double kNsPerSecond = 1e9;

struct PeakCommandOptions {
  ServeEndpointOptions endpoint;
  ServeLoadOptions load;
  ServeReportOptions report;
  std::string search = "concurrency";
  serve::PeakOptions peak;
  bool no_early_stopping = false;
  std::string html;
};

serve::SearchAxis axis_of(const std::string& search) {
  if (search == "rate") return serve::SearchAxis::rate;
  if (search == "concurrency") return serve::SearchAxis::concurrency;
  throw Error(fmt::format("--search: expected rate or concurrency, got '{}'", search));
}

// The options bench shares that mean nothing to a search, refused with what to use instead.
void check_options(const PeakCommandOptions& o, serve::SearchAxis axis) {
  const auto bad = [](const std::string& m) { throw Error("plumb serve peak: " + m); };
  if (o.load.requests != 0 || o.load.duration_s != 0) {
    bad("--requests and --duration set one run's length; a probe's are --min-requests, "
        "--max-requests and --min-duration");
  }
  if (o.load.repeat != 1) bad("--repeat: a probe is judged by early stopping; repeat the best point with plumb serve bench --repeat");
  if (!o.load.rate.empty()) bad("--rate: the search sets the rate; give --start (and --search rate)");
  if (axis == serve::SearchAxis::concurrency && !o.load.concurrency.empty()) {
    bad("--concurrency: a concurrency search sets it; give --start, or --search rate to cap a rate search");
  }
  if (serve::parse_slo(o.report.slo).empty()) {
    bad("--slo: give the bounds to hold at p99, e.g. --slo ttft=2000ms,tpot=100ms");
  }
}

LoadPoint point_at(const PeakCommandOptions& o, double load) {
  LoadPoint p;
  if (o.peak.axis == serve::SearchAxis::concurrency) {
    p.concurrency = static_cast<int>(load);
    return p;
  }
  p.rate = load;
  const std::vector<int> cap = parse_concurrency_list(o.load.concurrency);
  if (cap.size() > 1) throw Error("plumb serve peak: --concurrency: one cap for a rate search, not a list");
  if (!cap.empty()) p.concurrency = cap.front();
  return p;
}

serve::WorkloadSpec spec_at(const PeakCommandOptions& o, const LoadPoint& point, std::int64_t requests) {
  serve::WorkloadSpec spec = to_workload_spec(o.load, point);
  spec.requests = requests;
  spec.duration_s = 0;
  return spec;
}

struct Prober {
  const PeakCommandOptions& o;
  serve::Slo slo;
  std::optional<serve::Price> price;
  Progress& progress;
  int probe = 0;

  serve::ProbeOutcome operator()(double load, std::int64_t requests) {
    ++probe;
    const LoadPoint point = point_at(o, load);
    const serve::Workload workload = serve::make_workload(spec_at(o, point, requests));
    serve::BoundWatch watch(slo, std::max(kLeastBeforeStop, static_cast<std::int64_t>(kShareBeforeStop * requests)));
    serve::RunControl control = to_run_control(o.endpoint);
    control.stop = &stop_on_signals();
    std::int64_t done = 0;
    const auto warmup_ns = static_cast<serve::Nanos>(std::llround(o.load.warmup_s * kNsPerSecond));
    control.on_done = [&](const serve::RequestRecord& r) {
      if (r.scheduled_ns >= warmup_ns) watch.add(r);  // --warmup's requests are not judged
      progress.update(static_cast<size_t>(++done), workload.requests.size(),
                      fmt::format("probe {}: {} {:g}", probe, search_axis_name(o.peak.axis), load));
      return o.no_early_stopping || !watch.failed();
    };
    serve::RunOutcome out = serve::run_load(to_endpoint(o.endpoint), workload, control);
    progress.clear();
    if (stop_on_signals().load()) throw Error("plumb serve peak: stopped by a signal", ExitCode::kCheckFailed);
    serve::Measured m = serve::exclude_warmup(std::move(out.records), out.duration_ns, warmup_ns);
    serve::ProbeOutcome p;
    p.run.concurrency = point.concurrency;
    p.run.rate = point.rate;
    p.run.summary = serve::summarize(m.records, m.duration_ns, out.not_released, slo);
    p.bounds = serve::tally_bounds(m.records, slo, p.run.summary);
    p.requests = static_cast<std::int64_t>(m.records.size());
    p.errors = p.run.summary.errors;
    if (price) p.run.cost = serve::cost_of(*price, o.report.cards, p.run.summary);
    return p;
  }
};

// A word of a shell command line: quoted when it holds anything but plain characters.
std::string shell_word(const std::string& w) {
  const bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                       "0123456789_./:=,+-@%") == std::string::npos;
  if (plain) return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string reproduce(const PeakCommandOptions& o, const serve::PeakResult& r, std::int64_t requests) {
  if (!r.best) return "";
  const LoadPoint p = point_at(o, *r.best);
  std::vector<std::string> w = {"plumb", "serve", "bench", "--url", redact_url(o.endpoint.url),
                                "--api", o.endpoint.api};
  const auto add = [&](const std::string& flag, const std::string& value) {
    w.push_back(flag);
    w.push_back(value);
  };
  if (!o.endpoint.model.empty()) add("--model", o.endpoint.model);
  if (o.endpoint.http2) w.push_back("--http2");
  if (!o.endpoint.cacert.empty()) add("--cacert", o.endpoint.cacert);
  if (p.concurrency > 0) add("--concurrency", std::to_string(p.concurrency));
  if (p.rate > 0) {
    add("--rate", fmt::format("{:g}", p.rate));
    add("--arrival", o.load.arrival);
    if (o.load.arrival == "gamma") add("--burstiness", fmt::format("{:g}", o.load.burstiness));
  }
  add("--requests", std::to_string(requests));
  if (o.load.dataset.empty()) {
    add("--input-tokens", std::to_string(o.load.input_tokens));
    add("--output-tokens", std::to_string(o.load.output_tokens));
    if (o.load.length_spread != 0) add("--length-spread", fmt::format("{:g}", o.load.length_spread));
  } else {
    add("--dataset", o.load.dataset);
    if (!o.load.dataset_format.empty()) add("--dataset-format", o.load.dataset_format);
  }
  add("--seed", std::to_string(o.load.seed));
  if (o.load.warmup_s > 0) add("--warmup", fmt::format("{:g}", o.load.warmup_s));
  add("--slo", serve::slo_text(serve::parse_slo(o.report.slo)));
  if (o.report.cards != 1) add("--cards", std::to_string(o.report.cards));
  std::string line;
  for (const std::string& word : w) line += (line.empty() ? "" : " ") + shell_word(word);
  return line;
}

serve::ServeSetup make_setup(const PeakCommandOptions& o) {
  serve::ServeSetup s;
  s.url = redact_url(o.endpoint.url);
  s.api = o.endpoint.api;
  s.model = o.endpoint.model;
  s.arrival = o.peak.axis == serve::SearchAxis::concurrency
                  ? "closed"
                  : o.load.arrival == "gamma" ? fmt::format("gamma({:g})", o.load.burstiness) : o.load.arrival;
  s.dataset = o.load.dataset.empty() ? fmt::format("random {}/{}", o.load.input_tokens, o.load.output_tokens)
                                     : o.load.dataset;
  s.seed = o.load.seed;
  s.cards = o.report.cards;
  s.slo = serve::parse_slo(o.report.slo);
  return s;
}

nlohmann::json result_json(const serve::ServeResult& r) {
  nlohmann::json doc = report::serve_json(r);
  for (size_t i = 0; i < r.runs.size() && i < doc["runs"].size(); ++i) {
    if (r.runs[i].cost && !doc["runs"][i].contains("cost")) doc["runs"][i]["cost"] = serve::cost_json(*r.runs[i].cost);
  }
  return doc;  // serve_json writes "peak" and "pareto"
}

int run_peak(PeakCommandOptions o) {
  o.peak.axis = axis_of(o.search);
  check_options(o, o.peak.axis);
  o.peak.cards = o.report.cards;
  o.peak.early_stopping = !o.no_early_stopping;
  serve::check_peak_options(o.peak);
  serve::ServeResult result;
  result.setup = make_setup(o);
  const std::optional<serve::Price> price = serve::price_from(o.report.price, o.report.hardware);
  serve::make_workload(spec_at(o, point_at(o, o.peak.start), o.peak.min_requests));  // bad input first
  std::unique_ptr<OutputFile> json, html;
  if (!o.report.json.empty()) json = std::make_unique<OutputFile>("--json", o.report.json);
  if (!o.html.empty()) html = std::make_unique<OutputFile>("--html", o.html);
  const std::unique_ptr<baseline::Store> store = open_serve_store(o.report);
  ignore_closed_pipes();
  Progress progress(stderr, !o.report.quiet && Progress::is_terminal(stderr));
  Prober prober{o, result.setup.slo, price, progress};
  serve::PeakSearch search = serve::find_peak(o.peak, std::ref(prober));
  result.runs = std::move(search.runs);
  std::int64_t best_requests = 0;
  for (const serve::PeakProbe& p : search.peak.probes) {
    if (search.peak.best && p.load == *search.peak.best) best_requests = p.asked;
  }
  search.peak.reproduce = reproduce(o, search.peak, best_requests);
  result.peak = std::move(search.peak);
  std::ostream& out = json && json->is_stdout() ? std::cerr : std::cout;
  report::print_peak_console(out, result);
  write_all_outputs({[&] {
                       if (!json) return;
                       json->stream() << result_json(result).dump(2) << "\n";
                       json->commit();
                     },
                     [&] {
                       if (!store) return;
                       store_serve_result(*store, result_json(result), o.endpoint.url, o.report,
                                          "plumb serve peak", out);
                     },
                     [&] {
                       if (!html) return;
                       html->stream() << report::pareto_html(serve::pareto_points(result),
                                                             "peak · " + result.setup.url);
                       html->commit();
                     }});
  end_on_closed_stdout();
  return result.peak->best ? 0 : static_cast<int>(ExitCode::kCheckFailed);
}

void add_peak_options(CLI::App& sub, PeakCommandOptions& o) {
  sub.add_option("--search", o.search,
                 "What to raise: concurrency (closed loop: the batch the cards see) or rate "
                 "(open loop, capped by --concurrency if given)")
      ->capture_default_str();
  sub.add_option("--start", o.peak.start, "The first load probed (a concurrency, or requests/s)")
      ->capture_default_str();
  sub.add_option("--growth", o.peak.growth, "Each step up (or down) multiplies the load by this")
      ->capture_default_str();
  sub.add_option("--tolerance", o.peak.tolerance,
                 "A rate search stops when its last pass and first fail are this close (relative)")
      ->capture_default_str();
  sub.add_option("--max-load", o.peak.max_load, "The highest load to try (0: no ceiling)")
      ->capture_default_str();
  sub.add_option("--min-requests", o.peak.min_requests,
                 "Requests per probe at least (459 is the fewest that can show a p99 holds at 99% "
                 "confidence)")
      ->capture_default_str();
  sub.add_option("--max-requests", o.peak.max_requests,
                 "A probe early stopping cannot judge is rerun with more requests, up to this")
      ->capture_default_str();
  sub.add_option("--min-duration", o.peak.min_duration_s,
                 "Seconds per probe at least (a queue that grows slowly near capacity needs time to show)")
      ->capture_default_str();
  sub.add_option("--max-probes", o.peak.max_probes, "Loads to try at most")->capture_default_str();
  sub.add_flag("--no-early-stopping", o.no_early_stopping,
               "Judge each probe on its observed p99 alone (quick, not at 99% confidence)");
  sub.add_option("--html", o.html, "Write the Pareto chart of the probes to FILE (self-contained HTML)");
}

}  // namespace

void setup_serve_peak(CLI::App& serve, std::function<int()>& selected) {
  CLI::App* sub = serve.add_subcommand(
      "peak", "Find the highest concurrency (the batch per card) or rate at which the --slo holds "
              "at p99, as MLPerf LoadGen's FindPeakPerformance, with early stopping");
  auto options = std::make_shared<PeakCommandOptions>();
  options->peak.min_duration_s = serve::kDefaultMinDurationS;
  add_serve_endpoint_options(*sub, options->endpoint);
  add_serve_load_options(*sub, options->load);
  add_serve_report_options(*sub, options->report);
  add_peak_options(*sub, *options);
  sub->callback([options, &selected] { selected = [options] { return run_peak(*options); }; });
}

}  // namespace plumb::cli
