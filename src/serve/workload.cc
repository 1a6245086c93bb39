#include "serve/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/error.h"
#include "common/input_file.h"
#include "serve/arrivals.h"
#include "serve/datasets.h"
#include "serve/prompts.h"

namespace plumb::serve {
namespace {

// Requests made when neither --requests nor --duration says: vLLM bench serve's --num-prompts
// default.
constexpr std::int64_t kDefaultRequests = 1000;
// The most requests one run prepares (each holds its prompt in memory: 1,000,000 prompts of
// 512 words take about 2.5 GB).
constexpr std::int64_t kMaxRequests = 1'000'000;
// A closed loop with only --duration cannot know how many requests it will send: it prepares
// this many (the run ends at the duration or when they are all sent, whichever is first).
constexpr std::int64_t kClosedLoopDurationRequests = 100'000;
// The prompts' generator is seeded apart from the arrivals' ("prompts" in ASCII), so that a
// change of rate keeps the same prompts.
constexpr std::uint64_t kPromptSeedSalt = 0x70726f6d707473ULL;

void check_spec(const WorkloadSpec& s) {
  if (!(s.rate >= 0)) throw Error(fmt::format("--rate: must be 0 or more, got {}", s.rate));
  if (s.requests < 0) throw Error(fmt::format("--requests: must be 1 or more, got {}", s.requests));
  if (!(s.duration_s >= 0) || std::isinf(s.duration_s)) {
    throw Error(
        fmt::format("--duration: must be a number of seconds above 0, got {}", s.duration_s));
  }
  if (s.concurrency < 0)
    throw Error(fmt::format("--concurrency: must be 1 or more, got {}", s.concurrency));
  if (!(s.length_spread >= 0 && s.length_spread < 1)) {
    throw Error(fmt::format("--length-spread: must be a number from 0 to below 1, got {}",
                            s.length_spread));
  }
  if (!(s.burstiness > 0) || std::isinf(s.burstiness)) {
    throw Error(fmt::format("--burstiness: must be a number above 0, got {}", s.burstiness));
  }
  for (auto [name, value] : {std::pair{"--input-tokens", s.input_tokens},
                             std::pair{"--output-tokens", s.output_tokens}}) {
    if (value < 1 || value > kMaxDatasetTokens) {
      throw Error(fmt::format("{}: must be a whole number from 1 to {}, got {}", name,
                              kMaxDatasetTokens, value));
    }
  }
}

// How many requests to prepare when the arrivals do not decide it.
std::int64_t request_count(const WorkloadSpec& s, std::optional<size_t> dataset_size) {
  if (s.requests > 0) return s.requests;
  if (s.duration_s > 0) return s.rate > 0 ? 0 : kClosedLoopDurationRequests;
  return dataset_size ? static_cast<std::int64_t>(*dataset_size) : kDefaultRequests;
}

void check_size(const WorkloadSpec& s, std::int64_t count) {
  const double expected = count > 0 ? static_cast<double>(count) : s.rate * s.duration_s;
  if (std::isinf(s.rate) && count == 0) {
    throw Error("--rate inf sends every request at once: give --requests N");
  }
  if (expected > static_cast<double>(kMaxRequests)) {
    throw Error(
        fmt::format("plumb serve: this run would prepare about {:.0f} requests; at most {} "
                    "a run (lower --requests, --rate or --duration)",
                    expected, kMaxRequests));
  }
}

std::vector<Nanos> trace_arrivals(const std::vector<DatasetEntry>& entries, std::int64_t limit,
                                  Nanos duration_ns) {
  std::vector<Nanos> times;
  const double first = *entries.front().at_ms;
  for (const auto& e : entries) {
    if (limit > 0 && static_cast<std::int64_t>(times.size()) >= limit) break;
    const auto at = static_cast<Nanos>(std::llround((*e.at_ms - first) * 1e6));
    if (duration_ns > 0 && at >= duration_ns) break;
    times.push_back(at);
  }
  return times;
}

int spread(int n, double s, Random& random) {
  if (s == 0) return n;
  const auto low = std::max<std::int64_t>(1, std::llround(n * (1 - s)));
  const auto high = std::max<std::int64_t>(low, std::llround(n * (1 + s)));
  return static_cast<int>(random.integer(low, high));
}

struct Source {
  std::optional<DatasetFormat> format;
  std::vector<DatasetEntry> entries;
  std::vector<size_t> order;  // the entries' order of use (ShareGPT shuffled by the seed)
};

Source load_dataset(const WorkloadSpec& s, Random& prompts) {
  Source source;
  if (s.dataset.empty()) return source;
  const std::string text = read_whole_file(
      s.dataset, "a dataset (a JSONL of prompts, a ShareGPT JSON or a Mooncake trace)");
  source.format = s.dataset_format.empty() ? guess_dataset_format(text)
                                           : parse_dataset_format(s.dataset_format);
  source.entries = read_dataset(text, s.dataset, *source.format);
  for (size_t i = 0; i < source.entries.size(); ++i) source.order.push_back(i);
  if (*source.format == DatasetFormat::sharegpt) {  // vLLM samples ShareGPT with its seed
    for (size_t i = source.order.size(); i > 1; --i) {
      std::swap(source.order[i - 1], source.order[static_cast<size_t>(prompts.integer(0, i - 1))]);
    }
  }
  return source;
}

void fill_prompt(RequestSpec& r, const WorkloadSpec& s, const Source& source, Random& random) {
  if (source.entries.empty()) {
    r.input_tokens = spread(s.input_tokens, s.length_spread, random);
    r.max_output_tokens = spread(s.output_tokens, s.length_spread, random);
    r.prompt = random_prompt(r.input_tokens, random);
    return;
  }
  const auto& e = source.entries[source.order[static_cast<size_t>(r.index) % source.order.size()]];
  r.input_tokens = e.input_tokens;
  r.max_output_tokens = e.output_tokens > 0 ? e.output_tokens : s.output_tokens;
  r.prompt = e.prompt.empty() ? random_prompt(e.input_tokens, random) : e.prompt;
}

std::vector<Nanos> schedule(const WorkloadSpec& s, const Source& source, std::int64_t count,
                            Random& arrivals) {
  const auto duration_ns = static_cast<Nanos>(std::llround(s.duration_s * 1e9));
  if (source.format == DatasetFormat::trace) {
    if (s.rate > 0) throw Error("--rate: a trace sets its own arrivals; leave --rate out");
    return trace_arrivals(source.entries, s.requests, duration_ns);
  }
  if (s.rate == 0) {
    if (s.concurrency == 0) {
      throw Error(
          "plumb serve: give --rate R (an open loop), --concurrency C (a closed loop), or both");
    }
    return std::vector<Nanos>(static_cast<size_t>(count), 0);
  }
  ArrivalPlan plan{parse_arrival(s.arrival), s.rate, s.burstiness, count, duration_ns};
  return arrival_times(plan, arrivals);
}

}  // namespace

Workload make_workload(const WorkloadSpec& spec) {
  check_spec(spec);
  Random arrivals(spec.seed);
  Random prompts(spec.seed ^ kPromptSeedSalt);
  const Source source = load_dataset(spec, prompts);
  const bool trace = source.format == DatasetFormat::trace;
  const std::int64_t count =
      trace ? 0
            : request_count(spec,
                            source.format ? std::optional(source.entries.size()) : std::nullopt);
  if (!trace) check_size(spec, count);
  const std::vector<Nanos> times = schedule(spec, source, count, arrivals);
  Workload w;
  w.closed_loop = spec.rate == 0 && !trace;
  w.concurrency = spec.concurrency;
  w.duration_ns = static_cast<Nanos>(std::llround(spec.duration_s * 1e9));
  w.requests.resize(times.size());
  for (size_t i = 0; i < times.size(); ++i) {
    w.requests[i].index = static_cast<std::int64_t>(i);
    w.requests[i].scheduled_ns = times[i];
    fill_prompt(w.requests[i], spec, source, prompts);
  }
  return w;
}

}  // namespace plumb::serve
