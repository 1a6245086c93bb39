// plumb serve peak, the real binary against the reference server (plumb serve mock) whose
// capacity under the TPOT bound is known: its per-token gap is 10 ms + 10 ms per other active
// generation, and a 2-token answer's TPOT is its one gap, so a closed loop of C requests (C
// generations active) has TPOT 10 × C ms. Under --slo tpot=78ms the highest concurrency is 7
// (70 ms; 8 gives 80 ms). The bound sits 8 ms above 7's TPOT because the client's measure of a
// gap on a loaded 2-core machine runs late by up to ~5 ms at p99 (timers and threads wait for a
// core), and only 2 ms below 8's, where nearly every gap is over it whatever the jitter. --warmup
// leaves out the first requests, which meet a cold client and server. And the options a search
// refuses, each with its message.
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

TEST(ServePeakCli, FindsTheReferenceServersCapacityWithinFivePercent) {
  const std::string dir = temp_dir("serve_peak_capacity");
  const int port = free_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  Service mock("mock",
               kPlumb + " serve mock --port " + std::to_string(port) +
                   " --slots 64 --ttft 1ms --itl 10ms --itl-per-active 10ms --tokens 2",
               dir + "/mock.log");
  ASSERT_TRUE(wait_until_serving(url)) << mock.log();
  const test::Run r = run_command(kPlumb + " serve peak --url " + url + " --model mock --slo tpot=78ms "
                            "--input-tokens 8 --output-tokens 2 --min-duration 0 --warmup 0.3 --start 6 "
                            "--cards 7 --price 2 --json " + dir + "/peak.json --html " + dir +
                            "/peak.html -q");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = parse_json(read_file(dir + "/peak.json"), "peak.json");
  const double best = j["peak"]["best"].get<double>();
  EXPECT_NEAR(best, 7, 7 * 0.05) << r.out;
  EXPECT_EQ(j["peak"]["axis"], "concurrency");
  EXPECT_EQ(j["peak"]["best_per_card"].get<double>(), best / 7);
  EXPECT_EQ(j["peak"]["reproduce"].get<std::string>().rfind(
                "plumb serve bench --url " + url + " --api openai-completions --model mock "
                "--concurrency " + std::to_string(static_cast<int>(best)), 0), 0u)
      << j["peak"]["reproduce"];
  EXPECT_NE(r.out.find("peak: concurrency " + std::to_string(static_cast<int>(best))), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Pareto: "), std::string::npos);
  EXPECT_NE(r.out.find("cost at the peak: "), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir + "/peak.html").find("<svg"), std::string::npos);
}

struct Refusal {
  const char* args;
  const char* message;
};

TEST(ServePeakCli, RefusesWhatASearchCannotUse) {
  const Refusal cases[] = {
      {"--slo tpot=50ms --requests 100",
       "plumb serve peak: --requests and --duration set one run's length; a probe's are "
       "--min-requests, --max-requests and --min-duration\n"},
      {"--slo tpot=50ms --rate 5",
       "plumb serve peak: --rate: the search sets the rate; give --start (and --search rate)\n"},
      {"--slo tpot=50ms --concurrency 8",
       "plumb serve peak: --concurrency: a concurrency search sets it; give --start, or --search "
       "rate to cap a rate search\n"},
      {"", "plumb serve peak: --slo: give the bounds to hold at p99, e.g. --slo ttft=2000ms,tpot=100ms\n"},
      {"--slo tpot=50ms --search batch", "--search: expected rate or concurrency, got 'batch'\n"},
      {"--slo tpot=50ms --start 0.5",
       "plumb serve peak: --start 0.5: a concurrency search starts at a whole number of requests, "
       "1 or more\n"},
      {"--slo tpot=50ms --price 2 --hardware h100-sxm",
       "--price 2 and --hardware h100-sxm both give a price per card-hour: give one\n"},
  };
  for (const Refusal& c : cases) {
    const test::Run r = run_command(kPlumb + " serve peak --url http://127.0.0.1:9 " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace plumb::test
