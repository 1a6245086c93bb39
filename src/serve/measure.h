// What plumb serve bench needs around summarize(): the --slo parser, --warmup, and the bound of
// the client's keep-up verdict (docs/serve.md, "Metrics").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "serve/request.h"
#include "serve/summary.h"

namespace plumb::serve {

// The client kept up when its own lag (ready -> sent) is at most this at p99: 1 ms, the bound
// issue 31 sets for the client's sustained rate (bench/serve_client). Above it, the client's
// delay is a visible part of every latency, which counts from the scheduled time.
inline constexpr double kKeepUpLagP99Ms = 1.0;

// "ttft=2000ms,tpot=100ms": keys ttft, itl, tpot, e2e; values a positive number with the unit
// ms or s. Throws plumb::Error (exit 2):
//   "--slo: unknown objective 'tfft' (did you mean 'ttft'?); expected one of ttft, itl, tpot, e2e"
//   "--slo: 'ttft2000ms': expected KEY=VALUE, e.g. ttft=2000ms"
//   "--slo: ttft=2000: expected a number above 0 with its unit, ms or s (e.g. 2000ms)"
//   "--slo: ttft is given twice"
Slo parse_slo(std::string_view text);
// "ttft=2000ms,tpot=100ms" (ms, the shortest exact form), "" for none.
std::string slo_text(const Slo& slo);

// --warmup: requests scheduled before `warmup_ns` dropped, and the duration the throughputs
// divide by shortened by the warmup (latencies count from each request's own scheduled time).
struct Measured {
  std::vector<RequestRecord> records;
  Nanos duration_ns = 0;
};
Measured exclude_warmup(std::vector<RequestRecord> records, Nanos duration_ns, Nanos warmup_ns);

}  // namespace plumb::serve
