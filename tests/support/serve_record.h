// A serving result for the tests of the serving record's report and of a baseline set's serving
// part: a sweep of plumb serve bench at concurrency 1, 4 and 16 with an SLO, its figures as a
// mock server with 20 ms to the first token and 5 ms between tokens gives them (TPOT and ITL
// `tpot_scale` times that), the last run with two failed requests.
#pragma once

#include <nlohmann/json.hpp>

#include "report/serve_reporter.h"
#include "serve/result.h"

namespace plumb::test {

inline serve::Distribution serve_distribution(double p50, double p99) {
  serve::Distribution d;
  d.count = 40;
  d.mean = p50;
  d.p50 = p50;
  d.p90 = (p50 + p99) / 2;
  d.p99 = p99;
  d.max = p99 * 1.1;
  return d;
}

inline serve::ServeResult serve_sweep(double tpot_scale = 1.0) {
  serve::ServeResult r;
  r.setup.url = "http://127.0.0.1:18200";
  r.setup.api = "openai-completions";
  r.setup.model = "m";
  r.setup.arrival = "closed";
  r.setup.dataset = "random 512/128";
  r.setup.seed = 0;
  r.setup.cards = 1;
  r.setup.slo.ttft_ms = 2000;
  r.setup.slo.tpot_ms = 100;
  for (int c : {1, 4, 16}) {
    serve::ServeRun run;
    run.concurrency = c;
    serve::ServeSummary& s = run.summary;
    s.completed = 40;
    s.duration_s = 40.0 * 0.66 / c;
    s.ttft_ms = serve_distribution(20 + c, 25 + 2 * c);
    s.tpot_ms = serve_distribution(5 * tpot_scale, (5.5 + 0.1 * c) * tpot_scale);
    s.itl_ms = serve_distribution(5 * tpot_scale, (6 + 0.2 * c) * tpot_scale);
    s.e2e_ms = serve_distribution(20 + c + 127 * 5 * tpot_scale, 30 + 2 * c + 127 * 6 * tpot_scale);
    s.dispatch_delay_ms = serve_distribution(0.05, 0.2 + 0.01 * c);
    s.client_lag_ms = serve_distribution(0.04, 0.1);
    s.requests_per_second = s.completed / s.duration_s;
    s.output_tokens_per_second = s.requests_per_second * 128;
    s.total_tokens_per_second = s.requests_per_second * 640;
    s.goodput_requests_per_second = s.requests_per_second;
    s.input_tokens = 40 * 512;
    s.output_tokens = 40 * 128;
    s.token_source = "usage";
    s.keep_up_detail = "client lag p99 0.1 ms under 10 ms: kept up";
    r.runs.push_back(run);
  }
  serve::ServeSummary& last = r.runs.back().summary;
  last.errors = 2;
  last.errors_by_kind = {{"timeout", 2}};
  return r;
}

inline nlohmann::json serve_part(double tpot_scale = 1.0) {
  return report::serve_json(serve_sweep(tpot_scale));
}

}  // namespace plumb::test
