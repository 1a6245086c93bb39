// plumb serve bench, the real binary, against plumb serve mock with known timings: a concurrency
// sweep whose second run meets an HTTP 500, and a refused connection — each a clear line on
// stderr and a counted error, exit 1 with the last line saying why; and a bad --slo, exit 2
// before any request (docs/serve.md).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/json.h"
#include "support/service.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

// The mock's programmed truth: 20 ms to the first token, 5 ms between tokens, 8 tokens.
constexpr double kTtftMs = 20;
constexpr double kItlMs = 5;

std::string last_line(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

// plumb serve mock on a free port, ready when it answers GET /metrics.
struct Mock {
  int port = free_port();
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  Service service;
  explicit Mock(const std::string& dir, const std::string& extra)
      : service("plumb serve mock",
                kPlumb + " serve mock --port " + std::to_string(port) +
                    " --ttft 20ms --itl 5ms --tokens 8 " + extra,
                dir + "/mock.log") {
    for (int i = 0; i < 100 && http(url + "/metrics").empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
};

TEST(ServeBenchCli, ASweepWithA500InItsSecondRunCountsItAndSaysIt) {
  const std::string dir = temp_dir("serve_bench_sweep");
  Mock mock(dir, "--error 500:8");  // the 9th request to arrive: run c=2's third
  const plumb::test::Run run = run_command(kPlumb + " serve bench -q --url " + mock.url +
                              " --model mock --concurrency 1,2 --requests 6 --input-tokens 16"
                              " --output-tokens 8 --json " + dir + "/out.json");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("plumb serve bench: c=2: 1 request failed (http_status); the first: "
                         "HTTP 500"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(last_line(run.out), "plumb serve bench: 1 of 12 requests failed (http_status 1)");
  const auto doc = parse_json(read_file(dir + "/out.json"), "out.json");
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][0]["concurrency"], 1);
  EXPECT_EQ(doc["runs"][0]["completed"], 6);
  EXPECT_EQ(doc["runs"][0]["errors"], 0);
  EXPECT_EQ(doc["runs"][1]["completed"], 5);
  EXPECT_EQ(doc["runs"][1]["errors_by_kind"]["http_status"], 1);
  // The mock's truth, with room for a loaded 2-core machine (the client's accuracy against the
  // truth is the engine's test, to 0.5 ms).
  const auto& first = doc["runs"][0];
  EXPECT_GE(first["ttft_ms"]["p50"].get<double>(), kTtftMs);
  EXPECT_LT(first["ttft_ms"]["p50"].get<double>(), kTtftMs + 15);
  EXPECT_GE(first["tpot_ms"]["p50"].get<double>(), kItlMs * 0.9);
  EXPECT_LT(first["tpot_ms"]["p50"].get<double>(), kItlMs + 5);
  EXPECT_EQ(first["output_tokens"], 48);
  EXPECT_EQ(first["itl_ms"]["count"], 42);  // 7 gaps a request
}

TEST(ServeBenchCli, ARefusedConnectionIsALineAndCountedErrors) {
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port());
  const plumb::test::Run run = run_command(kPlumb + " serve bench -q --url " + url +
                              " --model mock --concurrency 1 --requests 3 --connect-timeout 5");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("plumb serve bench: c=1: 3 requests failed (connect); the first: "),
            std::string::npos)
      << run.err;
  EXPECT_EQ(last_line(run.out), "plumb serve bench: 3 of 3 requests failed (connect 3)");
}

TEST(ServeBenchCli, BadUsageExitsTwoBeforeAnyRequest) {
  const plumb::test::Run run = run_command(kPlumb + " serve bench --url http://127.0.0.1:1 -c 1 -n 1 "
                              "--slo tfft=2s");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--slo: unknown objective 'tfft' (did you mean 'ttft'?); expected one "
                         "of ttft, itl, tpot, e2e"),
            std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace plumb::test
