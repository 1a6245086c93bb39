#include "serve/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "common/stats.h"
#include "serve/measure.h"

namespace plumb::serve {
namespace {

Distribution distribution(std::vector<double> values) {
  Distribution d;
  d.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = mean(values);
  d.p50 = percentile_sorted(values, 50);
  d.p90 = percentile_sorted(values, 90);
  d.p99 = percentile_sorted(values, 99);
  d.max = values.back();
  return d;
}

// One request's figures (completed requests only). A request that completed without a content
// chunk (zero tokens) has no TTFT, TPOT or ITL, only its E2E.
struct Latencies {
  std::optional<double> ttft;
  double e2e = 0;
  std::optional<double> tpot;  // none for a single token
  std::vector<double> itl;     // a gap before a chunk of k tokens counts as k gaps of gap/k
};

Latencies latencies(const RequestRecord& r) {
  Latencies l;
  l.e2e = ms(r.end_ns - r.scheduled_ns);
  if (r.first_token_ns == kNoTime) return l;
  l.ttft = ms(r.first_token_ns - r.scheduled_ns);
  if (r.output_tokens > 1) l.tpot = ms(r.end_ns - r.first_token_ns) / (r.output_tokens - 1);
  for (size_t i = 1; i < r.chunks.size(); ++i) {
    const int k = std::max(1, r.chunks[i].tokens);
    const double gap = ms(r.chunks[i].at_ns - r.chunks[i - 1].at_ns) / k;
    l.itl.insert(l.itl.end(), static_cast<size_t>(k), gap);
  }
  return l;
}

bool meets(const Latencies& l, const Slo& slo) {
  if (slo.ttft_ms && (!l.ttft || *l.ttft > *slo.ttft_ms)) return false;
  if (slo.e2e_ms && l.e2e > *slo.e2e_ms) return false;
  if (slo.tpot_ms && l.tpot && *l.tpot > *slo.tpot_ms) return false;
  if (slo.itl_ms &&
      std::any_of(l.itl.begin(), l.itl.end(), [&](double g) { return g > *slo.itl_ms; })) {
    return false;
  }
  return true;
}

std::string token_source(bool usage, bool chunks) {
  if (usage && chunks) return "mixed";
  if (usage) return "usage";
  return chunks ? "chunks" : "none";
}

void keep_up(ServeSummary& s) {
  if (s.client_lag_ms.count == 0) {
    s.keep_up_detail = "no request was sent";
    return;
  }
  const double p99 = s.client_lag_ms.p99;
  s.client_kept_up = p99 <= kKeepUpLagP99Ms;
  s.keep_up_detail =
      s.client_kept_up
          ? fmt::format("the client kept up: lag p99 {:.3g} ms <= {:g} ms", p99, kKeepUpLagP99Ms)
          : fmt::format(
                "the client fell behind: lag p99 {:.3g} ms > {:g} ms; these latencies "
                "include the client's delay",
                p99, kKeepUpLagP99Ms);
}

struct Pools {
  std::vector<double> ttft, itl, tpot, e2e, dispatch, lag;
};

void add_sent(const RequestRecord& r, Pools& p) {
  if (r.sent_ns == kNoTime) return;
  p.dispatch.push_back(ms(r.sent_ns - r.scheduled_ns));
  p.lag.push_back(ms(r.sent_ns - r.ready_ns));
}

}  // namespace

ServeSummary summarize(const std::vector<RequestRecord>& records, Nanos duration_ns,
                       std::int64_t not_released, const Slo& slo) {
  ServeSummary s;
  s.not_released = not_released;
  s.duration_s = static_cast<double>(duration_ns) / 1e9;
  Pools p;
  std::int64_t good = 0;
  bool usage = false, chunks = false;
  for (const auto& r : records) {
    add_sent(r, p);
    if (!r.ok()) {
      ++s.errors;
      ++s.errors_by_kind[std::string(error_kind_name(r.error))];
      continue;
    }
    ++s.completed;
    const Latencies l = latencies(r);
    if (l.ttft) p.ttft.push_back(*l.ttft);
    p.e2e.push_back(l.e2e);
    if (l.tpot) p.tpot.push_back(*l.tpot);
    p.itl.insert(p.itl.end(), l.itl.begin(), l.itl.end());
    good += meets(l, slo) ? 1 : 0;
    s.input_tokens += r.input_tokens;
    s.output_tokens += r.output_tokens;
    (r.token_source == TokenSource::usage ? usage : chunks) = true;
  }
  s.ttft_ms = distribution(std::move(p.ttft));
  s.itl_ms = distribution(std::move(p.itl));
  s.tpot_ms = distribution(std::move(p.tpot));
  s.e2e_ms = distribution(std::move(p.e2e));
  s.dispatch_delay_ms = distribution(std::move(p.dispatch));
  s.client_lag_ms = distribution(std::move(p.lag));
  if (s.duration_s > 0) {
    s.requests_per_second = static_cast<double>(s.completed) / s.duration_s;
    s.output_tokens_per_second = static_cast<double>(s.output_tokens) / s.duration_s;
    s.total_tokens_per_second =
        static_cast<double>(s.input_tokens + s.output_tokens) / s.duration_s;
    s.goodput_requests_per_second = static_cast<double>(good) / s.duration_s;
  }
  s.token_source = token_source(usage, chunks);
  keep_up(s);
  return s;
}

}  // namespace plumb::serve
