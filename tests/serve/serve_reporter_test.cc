// plumb.serve/1 written and read back, and the console's two layouts (docs/serve.md,
// "Output").
#include "report/serve_reporter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "cli/serve_options.h"
#include "common/error.h"

namespace plumb::report {
namespace {

serve::ServeSummary summary(double scale) {
  serve::ServeSummary s;
  s.completed = 98;
  s.errors = 2;
  s.errors_by_kind = {{"http_status", 2}};
  s.not_released = 1;
  s.duration_s = 10;
  s.ttft_ms = {98, 50 * scale, 48 * scale, 70, 90.5, 99};
  s.itl_ms = {980, 10, 9, 12, 20, 25};
  s.tpot_ms = {98, 10.5, 10, 11, 12, 13};
  s.e2e_ms = {98, 1000, 990, 1100, 1200, 1300};
  s.dispatch_delay_ms = {100, 0.1, 0.05, 0.2, 0.4, 0.9};
  s.client_lag_ms = {100, 0.01, 0.01, 0.02, 0.03, 0.05};
  s.requests_per_second = 9.8;
  s.output_tokens_per_second = 1254.4;
  s.total_tokens_per_second = 6272;
  s.goodput_requests_per_second = 9.1;
  s.input_tokens = 50176;
  s.output_tokens = 12544;
  s.token_source = "usage";
  s.keep_up_detail = "the client kept up: lag p99 0.03 ms <= 1 ms";
  return s;
}

serve::ServeResult result() {
  serve::ServeResult r;
  r.setup.url = "http://127.0.0.1:8000/v1/completions";
  r.setup.api = "openai-completions";
  r.setup.model = "llama";
  r.setup.arrival = "closed";
  r.setup.dataset = "random 512/128";
  r.setup.seed = 42;
  r.setup.cards = 2;
  r.setup.slo.ttft_ms = 2000;
  for (int c : {1, 4}) {
    serve::ServeRun run;
    run.concurrency = c;
    run.summary = summary(c);
    run.repeats = {summary(c), summary(c)};
    r.runs.push_back(run);
  }
  return r;
}

TEST(ServeReporter, JsonHasTheIssuesNamesAndReadsBackTheSame) {
  const nlohmann::json j = serve_json(result());
  EXPECT_EQ(j["schema"], "plumb.serve/1");
  const auto& run = j["runs"][1];
  EXPECT_EQ(run["concurrency"], 4);
  EXPECT_EQ(run["rate"], 0.0);
  for (const char* key : {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "dispatch_delay_ms"}) {
    for (const char* stat : {"mean", "p50", "p90", "p99", "max"}) {
      EXPECT_TRUE(run[key][stat].is_number()) << key << "." << stat;
    }
  }
  EXPECT_EQ(run["ttft_ms"]["mean"], 200.0);
  for (const char* key : {"requests_per_second", "output_tokens_per_second",
                          "goodput_requests_per_second", "completed", "errors"}) {
    EXPECT_TRUE(run[key].is_number()) << key;
  }
  EXPECT_EQ(run["errors_by_kind"]["http_status"], 2);
  EXPECT_EQ(j["setup"]["slo"]["ttft_ms"], 2000.0);

  const serve::ServeResult back = serve_from_json(nlohmann::json::parse(j.dump()), "r.json");
  EXPECT_EQ(serve_json(back), j);
  EXPECT_EQ(back.runs[1].summary.ttft_ms.p99, 90.5);
  EXPECT_EQ(back.runs[1].repeats.size(), 2u);
  EXPECT_EQ(back.setup.seed, 42u);
}

TEST(ServeReporter, AnInfiniteRateRoundTripsAsInf) {
  serve::ServeResult r = result();
  r.runs.resize(1);
  r.runs[0].rate = INFINITY;
  const nlohmann::json j = serve_json(r);
  EXPECT_EQ(j["runs"][0]["rate"], "inf");
  EXPECT_TRUE(std::isinf(serve_from_json(j, "r.json").runs[0].rate));
}

std::string error_of(const nlohmann::json& doc) {
  try {
    serve_from_json(doc, "r.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ServeReporter, ABadDocumentNamesItsField) {
  nlohmann::json j = serve_json(result());
  j["runs"][0]["ttft_ms"]["p99"] = "x";
  EXPECT_EQ(error_of(j), "r.json: runs[0].ttft_ms.p99: expected a number, got \"x\"");
  j = serve_json(result());
  j["runs"][1]["repeats"][0].erase("completed");
  EXPECT_EQ(error_of(j), "r.json: runs[1].repeats[0].completed: missing");
  j["schema"] = "plumb.comm/1";
  EXPECT_EQ(error_of(j), "r.json: schema: expected \"plumb.serve/1\", got \"plumb.comm/1\"");
  EXPECT_EQ(error_of(nlohmann::json::array()), "r.json: expected a plumb.serve/1 object, got []");
}

// A stored plumb serve peak (issue 31, item 6): its "peak" is read back, so plumb show prints the
// search and its answer and plumb report draws its Pareto with the probes' verdicts.
serve::ServeResult peak_result() {
  serve::ServeResult r = result();
  serve::PeakResult p;
  p.axis = "concurrency";
  p.cards = 2;
  for (int i : {0, 1}) {
    serve::PeakProbe q;
    q.load = r.runs[static_cast<size_t>(i)].concurrency;
    q.requests = q.asked = 98;
    q.passed = i == 0;
    q.why = i == 0 ? "ttft p99 90.5 <= 2000 ms" : "ttft p99 2100 > 2000 ms";
    q.run_index = i;
    q.bounds.push_back({"ttft", 2000, 90.5, 98, i, {serve::Judgement::holds, 0}});
    p.probes.push_back(q);
  }
  p.best = 1;
  p.best_per_card = 0.5;
  p.lowest_failed = 4;
  p.stop_reason = "4 failed";
  p.reproduce = "plumb serve bench --concurrency 1";
  r.peak = p;
  return r;
}

TEST(ServeReporter, APeakSearchIsReadBackAndShown) {
  const nlohmann::json j = serve_json(peak_result());
  EXPECT_EQ(j["peak"]["best"], 1.0);
  EXPECT_EQ(j["pareto"].size(), 2u);
  const serve::ServeResult back = serve_from_json(nlohmann::json::parse(j.dump()), "7");
  ASSERT_TRUE(back.peak.has_value());
  EXPECT_EQ(serve_json(back), j);
  EXPECT_EQ(back.peak->probes[1].bounds[0].misses, 1);
  std::ostringstream out;
  print_serve_console(out, back);
  EXPECT_NE(out.str().find("\npeak: concurrency 1 (0.5 per card on 2 cards: the batch each card "
                           "sees): 4 failed\nreproduce: plumb serve bench --concurrency 1\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("# Pareto: "), std::string::npos) << out.str();
}

TEST(ServeReporter, ABadPeakNamesItsField) {
  nlohmann::json j = serve_json(peak_result());
  j["peak"]["probes"][1]["run_index"] = 2;
  EXPECT_EQ(error_of(j), "r.json: peak.probes[1].run_index: expected a whole number from -1 to 1, got 2");
  j = serve_json(peak_result());
  j["peak"]["probes"][0]["bounds"][0]["judgement"] = "maybe";
  EXPECT_EQ(error_of(j), "r.json: peak.probes[0].bounds[0].judgement: expected \"holds\", "
                         "\"fails\" or \"undecided\", got \"maybe\"");
  j = serve_json(peak_result());
  j["peak"]["axis"] = "batch";
  EXPECT_EQ(error_of(j), "r.json: peak.axis: expected \"rate\" or \"concurrency\", got \"batch\"");
}

TEST(ServeReporter, ASweepIsATableOneLinePerRun) {
  serve::ServeResult r = result();
  r.runs[1].summary.client_kept_up = false;
  r.runs[1].summary.client_lag_ms.p99 = 12.4;
  std::ostringstream out;
  print_serve_console(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("load              req/s  out tok/s  TTFT p50  TTFT p99"), std::string::npos)
      << text;
  EXPECT_NE(text.find("c=1                9.80     1254.4     48.00     90.50     10.00     12.00  "
                      "   20.00   1200.00     9.10  2 (http_status 2)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 (http_status 2); client behind: lag p99 12.4 ms"), std::string::npos)
      << text;
  EXPECT_NE(text.find("goodput: req/s meeting ttft=2000ms"), std::string::npos);
}

TEST(ServeReporter, OneRunIsVllmsSummaryBlock) {
  serve::ServeResult r = result();
  r.runs.resize(1);
  std::ostringstream out;
  print_serve_console(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("=========== Serving Benchmark Result ============"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Request throughput (req/s):              9.80\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Failed requests:                         2 (http_status 2)\n"),
            std::string::npos);
  EXPECT_NE(text.find("Keep-up: the client kept up: lag p99 0.03 ms <= 1 ms\n"), std::string::npos);
}

// Nothing measured is never a 0 ms latency: null in plumb.serve/1, "-" on the console, read back
// as a distribution of no request.
TEST(ServeReporter, ARunWithoutACompletedRequestHasNoLatencies) {
  serve::ServeResult r = result();
  r.runs.resize(1);
  r.runs[0].repeats.clear();
  r.runs[0].summary.ttft_ms = {};
  r.runs[0].summary.tpot_ms = {};
  const nlohmann::json j = serve_json(r);
  EXPECT_EQ(j["runs"][0]["ttft_ms"],
            nlohmann::json({{"count", 0}, {"mean", nullptr}, {"p50", nullptr}, {"p90", nullptr},
                            {"p99", nullptr}, {"max", nullptr}}));
  const serve::ServeResult back = serve_from_json(j, "x.json");
  EXPECT_EQ(back.runs[0].summary.ttft_ms.count, 0);
  EXPECT_EQ(back.runs[0].summary.e2e_ms.count, 98);
  std::ostringstream block;
  print_serve_console(block, r);
  EXPECT_NE(block.str().find("------------ Time to First Token (ms) ------------\n"
                             "Mean / Median:                           - (none measured)\n"),
            std::string::npos)
      << block.str();
  r.runs.push_back(r.runs[0]);
  r.runs[1].concurrency = 8;
  std::ostringstream table;
  print_serve_console(table, r);
  EXPECT_NE(table.str().find("c=8                9.80     1254.4         -         -         -"),
            std::string::npos)
      << table.str();
}

TEST(ServeReporter, RunLabelsSayTheLoadPoint) {
  serve::ServeRun run;
  run.concurrency = 8;
  EXPECT_EQ(serve_run_label(run), "c=8");
  run.rate = 2.5;
  EXPECT_EQ(serve_run_label(run), "r=2.5/s c=8");
  run.concurrency = 0;
  EXPECT_EQ(serve_run_label(run), "r=2.5/s");
  run.rate = 0;
  EXPECT_EQ(serve_run_label(run), "trace");
}

std::string option_error(const cli::ServeLoadOptions& o) {
  try {
    cli::load_points(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ServeSweeps, ConcurrencyAndRateListsInOrder) {
  EXPECT_EQ(cli::parse_concurrency_list("1,2,4, 8"), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(cli::parse_rate_list("0.5:1.5:0.5"), (std::vector<double>{0.5, 1.0, 1.5}));
  EXPECT_EQ(cli::parse_rate_list("0.1:0.3:0.1").size(), 3u);
  EXPECT_EQ(cli::parse_rate_list("7"), (std::vector<double>{7}));
  cli::ServeLoadOptions o;
  o.rate = "2:6:2";
  o.concurrency = "16";
  const auto points = cli::load_points(o);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].rate, 6);
  EXPECT_EQ(points[2].concurrency, 16);
  o.rate = "";
  o.concurrency = "1,2";
  EXPECT_EQ(cli::load_points(o).size(), 2u);
  o.rate = "1:2:1";
  EXPECT_EQ(option_error(o),
            "--concurrency and --rate: sweep one of them (give the other a single value)");
  o.concurrency = "0";
  EXPECT_EQ(option_error(o), "--concurrency: must be a whole number from 1 to 1000000, got '0'");
  o.concurrency = "";
  o.rate = "5:1:1";
  EXPECT_EQ(option_error(o), "--rate: 'A:B:STEP' needs A <= B, got '5:1:1'");
  o.rate = "1:2";
  EXPECT_EQ(option_error(o), "--rate: expected R, inf or A:B:STEP (e.g. 2:20:2), got '1:2'");
  o.rate = "1:5000:1";
  EXPECT_EQ(option_error(o), "--rate: '1:5000:1' makes 5000 steps; at most 1000");
  o.rate = "fast";
  EXPECT_EQ(option_error(o), "--rate: must be a number above 0 and at most 1e+09, got 'fast'");
}

}  // namespace
}  // namespace plumb::report
