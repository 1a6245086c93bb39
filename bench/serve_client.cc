// bench/serve_client: the limits of plumb serve's own client (issue 31, item 7), side by side
// with a Python asyncio client using aiohttp the way vLLM's bench does (bench/serve_aiohttp.py),
// both against the reference server (serve/mock_server.h) in this process, on its own core.
//
//   1. rate: the highest request rate each client sustains with its dispatch delay (sent minus
//      scheduled) p99 under 1 ms and ≥ 99% of requests answered: doubling from 25 req/s until a
//      rate fails, then 4 bisections (geometric) between the last pass and the first failure.
//      The server answers at once (TTFT 0, gap 0, 4 tokens); both clients get the same Poisson
//      schedule (seeded) of --probe seconds of requests.
//   2. streams: --streams requests due at once against a server that streams 20 tokens 100 ms
//      apart (2 s each, no slot limit): the peak number of streams open together (a sweep over
//      each answered request's [sent, end]) and how many were answered.
//   3. timing error: a server with known delays (TTFT 20 ms, gap 5 ms, 20 tokens) at 100 req/s
//      for 2 s; for each token of each request, (client's token time − client's send time) −
//      (server's write time − server's arrival time) from the server's own truth, matched by
//      the request's prompt ("req-<i> ..."): p99 and max of its absolute value.
// Rounds alternate the two clients (plumb first, then Python); figures are medians over rounds
// of each round's ratio (plumb / Python). Issue 31's targets: ≥ 10× the Python client's rate,
// ≥ 5,000 streams on 2 cores, timing error p99 < 0.5 ms.
//
//   build-release/bench/serve_client [--rounds N] [--probe S] [--streams N] [--bound MS] [--smoke]
//                                     [--python /usr/bin/python3] [--server-core C]
//                                     [--client-core C]
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/stats.h"
#include "serve/client.h"
#include "serve/mock_server.h"

namespace {

using plumb::serve::Nanos;
constexpr double kDispatchP99Ms = 1.0;     // issue 31: dispatch delay p99 under 1 ms (--bound)
constexpr double kAnsweredShare = 0.99;    // a rate passes only if 99% of requests succeed
constexpr double kStartRate = 25;
constexpr double kMaxRate = 400'000;
constexpr double kSmokeMaxRate = 1'600;
constexpr int kBisections = 4;
constexpr std::uint32_t kSeed = 31;

struct Options {
  int rounds = 3;
  double probe_s = 2;
  int streams = 5000;
  bool smoke = false;
  double bound_ms = kDispatchP99Ms;  // --bound MS: a looser bound the Python client can meet too
  std::string python = "/usr/bin/python3";  // Debian's, where python3-aiohttp is installed
  std::string script = PLUMB_BENCH_DIR "/serve_aiohttp.py";
  int server_core = 1;
  int client_core = 0;
};

// What one client did in one run, in seconds on CLOCK_MONOTONIC's scale (relative values only).
struct Request {
  std::string tag;              // "req-<i>"
  double scheduled = 0, sent = -1, end = -1;
  std::vector<double> tokens;   // arrival of each content chunk
  bool ok = false;
};
using Client = std::function<std::vector<Request>(const std::string& url,
                                                  const std::vector<double>& offsets, int tokens)>;

void pin_to(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core % std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)), &set);
  sched_setaffinity(0, sizeof set, &set);  // this thread; threads it starts inherit it
}

std::vector<double> poisson(double rate, int n) {
  std::mt19937_64 rng(kSeed);
  std::exponential_distribution<double> gap(rate);
  std::vector<double> out;
  double t = 0;
  for (int i = 0; i < n; ++i) out.push_back(t += gap(rng));
  return out;
}

// ---- the two clients -----------------------------------------------------------------------

std::vector<Request> run_plumb(const std::string& url, const std::vector<double>& offsets,
                               int tokens) {
  plumb::serve::Workload workload;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    plumb::serve::RequestSpec spec;
    spec.index = static_cast<std::int64_t>(i);
    spec.scheduled_ns = static_cast<Nanos>(offsets[i] * 1e9);
    spec.prompt = fmt::format("req-{} hello", i);
    spec.max_output_tokens = tokens;
    workload.requests.push_back(spec);
  }
  plumb::serve::Endpoint endpoint;
  endpoint.url = url + "/v1/completions";
  endpoint.api = "openai-completions";
  endpoint.model = "mock";
  auto outcome = plumb::serve::run_load(endpoint, workload, plumb::serve::RunControl{});
  std::vector<Request> out;
  for (const auto& r : outcome.records) {
    Request q{fmt::format("req-{}", r.index), r.scheduled_ns / 1e9, r.sent_ns / 1e9,
              r.end_ns / 1e9, {}, r.ok()};
    for (const auto& c : r.chunks) q.tokens.push_back(c.at_ns / 1e9);
    out.push_back(std::move(q));
  }
  return out;
}

std::vector<Request> run_python(const Options& options, const std::string& url,
                                const std::vector<double>& offsets, int tokens) {
  auto dir = std::filesystem::temp_directory_path();
  std::string schedule = (dir / fmt::format("serve_client_{}.txt", getpid())).string();
  std::string result = (dir / fmt::format("serve_client_{}.json", getpid())).string();
  {
    std::ofstream out(schedule);
    for (double t : offsets) out << fmt::format("{:.9f}\n", t);
  }
  std::vector<std::string> argv = {options.python, options.script, "--url", url + "/v1/completions",
                                   "--schedule", schedule, "--output-len", std::to_string(tokens),
                                   "--out", result};
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(result);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(schedule);
  std::filesystem::remove(result);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty())
    throw std::runtime_error(fmt::format("{} {}: exit {}", options.python, options.script,
                                         WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  auto doc = plumb::parse_json(text, result);
  std::vector<Request> out;
  for (const auto& r : doc["requests"]) {
    Request q{fmt::format("req-{}", r["i"].get<int>()), r["scheduled"].get<double>(),
              r["sent"].is_null() ? -1 : r["sent"].get<double>(),
              r["end"].is_null() ? -1 : r["end"].get<double>(), r["tokens"].get<std::vector<double>>(),
              r["ok"].get<bool>()};
    out.push_back(std::move(q));
  }
  return out;
}

// ---- the measures --------------------------------------------------------------------------

double dispatch_p99_ms(const std::vector<Request>& requests) {
  std::vector<double> ms;
  for (const auto& r : requests)
    if (r.sent >= 0) ms.push_back((r.sent - r.scheduled) * 1e3);
  return ms.empty() ? 1e9 : plumb::percentile(ms, 99);
}

int answered(const std::vector<Request>& requests) {
  return static_cast<int>(std::count_if(requests.begin(), requests.end(),
                                        [](const Request& r) { return r.ok; }));
}

bool sustains(const Options& o, const Client& client, const std::string& url, double rate) {
  // At least 200 requests, so that p99 is not simply the slowest one or two (the smoke run, which
  // only shows the harness works, 30).
  int n = std::max(o.smoke ? 30 : 200, static_cast<int>(rate * o.probe_s));
  auto requests = client(url, poisson(rate, n), 4);
  double p99 = dispatch_p99_ms(requests);
  bool pass = p99 < o.bound_ms && answered(requests) >= kAnsweredShare * n;
  fmt::print("    {:>9.0f} req/s: dispatch p99 {:8.3f} ms, answered {}/{} {}\n", rate, p99,
             answered(requests), n, pass ? "pass" : "fail");
  return pass;
}

// A rate fails only when two probes in a row fail it: one hiccup of a shared 2-core VM (a
// probe's p99 of 200 requests is its second-slowest) does not end the search.
bool sustains_twice(const Options& o, const Client& client, const std::string& url, double rate) {
  return sustains(o, client, url, rate) || sustains(o, client, url, rate);
}

double sustained_rate(const Options& o, const Client& client, const std::string& url) {
  double rate = kStartRate;
  // The smoke run only shows the harness works: it stops where a loaded CI machine still passes.
  const double max_rate = o.smoke ? kSmokeMaxRate : kMaxRate;
  while (rate <= max_rate && sustains_twice(o, client, url, rate)) rate *= 2;
  double lo = rate / 2 < kStartRate ? 0 : rate / 2, hi = rate;
  for (int i = 0; i < (o.smoke ? 0 : kBisections) && lo > 0; ++i) {
    double mid = std::sqrt(lo * hi);
    (sustains_twice(o, client, url, mid) ? lo : hi) = mid;
  }
  return lo;
}

struct Streams {
  int peak = 0;
  int answered = 0;
};

Streams held_streams(const Client& client, const std::string& url, int n) {
  auto requests = client(url, std::vector<double>(static_cast<std::size_t>(n), 0.0), 20);
  std::vector<std::pair<double, int>> events;
  for (const auto& r : requests)
    if (r.ok) events.push_back({r.sent, 1}), events.push_back({r.end, -1});
  std::sort(events.begin(), events.end());
  Streams s;
  int open = 0;
  for (const auto& [t, d] : events) s.peak = std::max(s.peak, open += d);
  s.answered = answered(requests);
  return s;
}

struct TimingError {
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::size_t tokens = 0;
};

TimingError timing_error(const Client& client, plumb::serve::MockServer& server,
                         const std::string& url, double probe_s) {
  std::size_t before = server.truth().size();
  auto requests = client(url, poisson(100, std::max(20, static_cast<int>(100 * probe_s))), 20);
  auto truth = server.truth();
  std::map<std::string, const plumb::serve::MockTruth*> by_tag;
  for (std::size_t i = before; i < truth.size(); ++i)
    by_tag[truth[i].prompt_head.substr(0, truth[i].prompt_head.find(' '))] = &truth[i];
  std::vector<double> errors;
  for (const auto& r : requests) {
    auto it = by_tag.find(r.tag);
    if (!r.ok || it == by_tag.end() || it->second->token_ns.size() != r.tokens.size()) continue;
    for (std::size_t k = 0; k < r.tokens.size(); ++k) {
      double client_s = r.tokens[k] - r.sent;
      double server_s = (it->second->token_ns[k] - it->second->arrived_ns) / 1e9;
      errors.push_back(std::abs(client_s - server_s) * 1e3);
    }
  }
  TimingError e;
  e.tokens = errors.size();
  if (!errors.empty()) {
    e.p50_ms = plumb::percentile(errors, 50);
    e.p99_ms = plumb::percentile(errors, 99);
    e.max_ms = *std::max_element(errors.begin(), errors.end());
  }
  return e;
}

// ---- the driver ----------------------------------------------------------------------------

std::unique_ptr<plumb::serve::MockServer> start_server(const Options& o, plumb::serve::MockPlan plan) {
  plumb::serve::MockConfig config;
  config.plan = plan;
  pin_to(o.server_core);
  auto server = std::make_unique<plumb::serve::MockServer>(config);
  server->start();
  pin_to(o.client_core);
  return server;
}

void raise_descriptor_limit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  fmt::print("# descriptors: {} (the hard limit)\n", limit.rlim_cur);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--rounds") o.rounds = std::stoi(next());
    else if (a == "--probe") o.probe_s = std::stod(next());
    else if (a == "--streams") o.streams = std::stoi(next());
    else if (a == "--python") o.python = next();
    else if (a == "--server-core") o.server_core = std::stoi(next());
    else if (a == "--client-core") o.client_core = std::stoi(next());
    else if (a == "--smoke") o.smoke = true;
    else if (a == "--bound") o.bound_ms = std::stod(next());
  }
  if (o.smoke) o.rounds = 1, o.probe_s = 0.3, o.streams = 100;
  return o;
}

double median(std::vector<double> v) { return v.empty() ? 0 : plumb::percentile(v, 50); }

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  raise_descriptor_limit();
  plumb::serve::MockPlan instant;
  instant.tokens = 4;
  plumb::serve::MockPlan streaming;
  streaming.itl_ns = 100'000'000;  // 20 tokens 100 ms apart: 2 s a stream
  plumb::serve::MockPlan known;
  known.ttft_ns = 20'000'000;
  known.itl_ns = 5'000'000;
  auto instant_server = start_server(o, instant);
  // As the aiohttp client's first request: libcurl is opened and its first connection made
  // before any schedule is timed.
  try {
    run_plumb(instant_server->base_url(), {0.0}, 1);
  } catch (const std::exception& e) {
    fmt::print("# plumb warm-up failed: {}\n", e.what());
  }
  auto streaming_server = start_server(o, streaming);
  auto known_server = start_server(o, known);
  std::map<std::string, Client> clients = {
      {"plumb", run_plumb},
      {"aiohttp", [&o](const std::string& u, const std::vector<double>& t, int k) {
         return run_python(o, u, t, k);
       }}};
  std::vector<double> rate_ratios, stream_ratios;
  bool harness_failed = false;  // a client that could not run at all: the exit status says so
  int unbounded = 0;            // rounds where aiohttp sustained no rate and plumb did
  for (int round = 0; round < o.rounds; ++round) {
    std::map<std::string, double> rate;
    std::map<std::string, Streams> streams;
    for (const std::string name : {"plumb", "aiohttp"}) {
      try {
        fmt::print("# round {} {}: rate search\n", round + 1, name);
        rate[name] = sustained_rate(o, clients[name], instant_server->base_url());
        streams[name] = held_streams(clients[name], streaming_server->base_url(), o.streams);
        auto err = timing_error(clients[name], *known_server, known_server->base_url(), o.probe_s);
        fmt::print("# round {} {}: sustained {:.0f} req/s (dispatch p99 < {} ms); streams held "
                   "{} of {} ({} answered); timing error p50 {:.3f} ms, p99 {:.3f} ms, max {:.3f} "
                   "ms over {} tokens\n",
                   round + 1, name, rate[name], o.bound_ms, streams[name].peak, o.streams,
                   streams[name].answered, err.p50_ms, err.p99_ms, err.max_ms, err.tokens);
      } catch (const std::exception& e) {
        fmt::print("# round {} {}: failed: {}\n", round + 1, name, e.what());
        harness_failed = true;
      }
    }
    if (rate["aiohttp"] > 0 && rate["plumb"] > 0) rate_ratios.push_back(rate["plumb"] / rate["aiohttp"]);
    if (rate["aiohttp"] == 0 && rate["plumb"] > 0) ++unbounded;
    if (streams["aiohttp"].peak > 0)
      stream_ratios.push_back(static_cast<double>(streams["plumb"].peak) / streams["aiohttp"].peak);
  }
  fmt::print("# serve client: sustained rate (dispatch p99 < {} ms) plumb/aiohttp median ratio "
             "{:.1f}x over {} rounds (target >= 10x); streams held ratio {:.2f}x\n",
             o.bound_ms, median(rate_ratios), rate_ratios.size(), median(stream_ratios));
  if (unbounded > 0) {
    fmt::print("# serve client: in {} round(s) aiohttp sustained no rate under the bound while "
               "plumb did: no finite ratio\n", unbounded);
  }
  return harness_failed ? 1 : 0;
}
