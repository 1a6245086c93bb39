// Energy: the trapezoid integral on worked examples, each source's reader on the tools' real
// output, and the sampler with stand-in tools on PATH.
#include "serve/energy.h"

#include "common/error.h"
#include "exporter/http_server.h"
#include "serve/mock_server.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace plumb::serve {
namespace {

const std::string kDir = std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/serve/";

std::string fixture(const std::string& name) {
  std::ifstream in(kDir + "power/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename F>
std::string error_of(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// PATH with the stand-ins first, and the file they print, for one test.
class StandIn {
 public:
  explicit StandIn(const std::string& file) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    setenv("PATH", (kDir + "bin:" + old_).c_str(), 1);
    setenv("PLUMB_FAKE_POWER", (kDir + "power/" + file).c_str(), 1);
  }
  ~StandIn() {
    setenv("PATH", old_.c_str(), 1);
    unsetenv("PLUMB_FAKE_POWER");
  }

 private:
  std::string old_;
};

TEST(Energy, TrapezoidOverTheRunWorkedExample) {
  // 100 W rising to 200 W over the first second, then 200 W: 150 J + 200 J = 350 J in 2 s.
  EnergyReport report;
  report.watts = {{0, 100}, {1, 200}, {2, 200}};
  integrate_energy(report, 2, 700);
  EXPECT_DOUBLE_EQ(report.joules, 350);
  EXPECT_DOUBLE_EQ(report.mean_watts, 175);
  EXPECT_DOUBLE_EQ(report.output_tokens_per_joule, 2);
}

TEST(Energy, HoldsTheEndSamplesAndClipsToTheRun) {
  // Samples inside the run only: 100 W held back to 0 s, 300 W held on to 2 s:
  // 0.5 × 100 + 1 × (100 + 300) / 2 + 0.5 × 300 = 50 + 200 + 150 = 400 J.
  EnergyReport report;
  report.watts = {{1.5, 300}, {0.5, 100}};
  integrate_energy(report, 2, 100);
  EXPECT_DOUBLE_EQ(report.joules, 400);
  EXPECT_DOUBLE_EQ(report.mean_watts, 200);
  EXPECT_DOUBLE_EQ(report.output_tokens_per_joule, 0.25);
  // A sample before the start and one after the end: interpolated at 0 s and at 1 s.
  report.watts = {{-1, 0}, {1, 200}, {3, 0}};
  integrate_energy(report, 1, 0);
  EXPECT_DOUBLE_EQ(report.joules, 150);  // 100 W at 0 s to 200 W at 1 s
  report.watts.clear();
  integrate_energy(report, 1, 10);
  EXPECT_EQ(report.joules, 0);
  EXPECT_EQ(report.output_tokens_per_joule, 0);
}

TEST(Energy, ReadsEachToolsPower) {
  auto nv = read_nvidia_smi_power(fixture("power_draw_2of3.txt"));
  EXPECT_DOUBLE_EQ(nv.watts, 162.0);
  EXPECT_EQ(nv.cards, 2);
  EXPECT_EQ(error_of([] { read_nvidia_smi_power(fixture("power_draw_none.txt")); }),
            "nvidia-smi: no power.draw figure in its output (got '[N/A]')");
  auto npu = read_npu_smi_power(fixture("info_8x910B2_23.0.7_excerpt.txt"));
  EXPECT_DOUBLE_EQ(npu.watts, 96.5 + 98.7);
  EXPECT_EQ(npu.cards, 2);
  auto a3 = read_npu_smi_power(fixture("info_A3_25.2.0_excerpt.txt"));
  EXPECT_DOUBLE_EQ(a3.watts, 162.8);
  EXPECT_EQ(a3.cards, 1);
  std::string dcgm =
      "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\"} 301.5\n"
      "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-b\"} 298.5\n"
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 44\n";
  auto prom = read_prometheus_power(dcgm, "DCGM_FI_DEV_POWER_USAGE", "http://h:9400/metrics");
  EXPECT_DOUBLE_EQ(prom.watts, 600);
  EXPECT_EQ(prom.cards, 2);
  EXPECT_EQ(error_of([&] { read_prometheus_power(dcgm, "plumb_device_power_watts", "u"); }),
            "u: no series named plumb_device_power_watts");
  EXPECT_EQ(error_of([] { make_power_reader("ipmitool", 1); }),
            "--power ipmitool: expected nvidia-smi, npu-smi or prometheus:URL SERIES");
}

TEST(Energy, SamplesAStandInNvidiaSmiThroughTheRun) {
  StandIn tools("power_draw_2of3.txt");
  PowerSampler sampler("nvidia-smi", make_power_reader("nvidia-smi", 5), 0.02);
  sampler.start(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  // Constant power: whatever the sample times, 162 W over 10 s is 1620 J.
  EnergyReport report = sampler.finish(10, 3240);
  EXPECT_EQ(report.problem, "");
  EXPECT_EQ(report.source, "nvidia-smi");
  EXPECT_EQ(report.cards, 2);
  EXPECT_GE(report.watts.size(), 2u);
  EXPECT_DOUBLE_EQ(report.joules, 1620);
  EXPECT_DOUBLE_EQ(report.mean_watts, 162);
  EXPECT_DOUBLE_EQ(report.output_tokens_per_joule, 2);
}

TEST(Energy, SamplesAStandInNpuSmiOnTheRunsOwnClock) {
  StandIn tools("info_8x910B2_23.0.7_excerpt.txt");
  PowerSampler sampler("npu-smi", make_power_reader("npu-smi", 5), 10);
  sampler.start(0);
  // The run's start as run_load reports it, after the fact: the samples are measured from it.
  Nanos origin = MockServer::now_ns() + 1'000'000'000;
  EnergyReport report = sampler.finish(2, 0, origin);
  EXPECT_EQ(report.problem, "");
  ASSERT_EQ(report.watts.size(), 2u);
  EXPECT_LT(report.watts.front().first, -0.9);  // taken about 1 s before that start
  EXPECT_DOUBLE_EQ(report.joules, 2 * (96.5 + 98.7));
}

TEST(Energy, AToolThatFailsIsAProblemAndNoFigures) {
  StandIn tools("exit9.txt");
  PowerSampler sampler("nvidia-smi", make_power_reader("nvidia-smi", 5), 10);
  sampler.start(0);
  EnergyReport report = sampler.finish(2, 100);
  EXPECT_EQ(report.problem, "nvidia-smi: exit 9");
  EXPECT_EQ(report.joules, 0);
  EXPECT_TRUE(report.watts.empty());
  EXPECT_EQ(energy_json(report).dump(),
            R"({"cards":0,"joules":0.0,"mean_watts":0.0,"output_tokens_per_joule":0.0,)"
            R"("problem":"nvidia-smi: exit 9","source":"nvidia-smi","watts":[]})");
}

TEST(Energy, ReadsAPrometheusPageAndAnInstantQuery) {
  exporter::HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  exporter::HttpServer server(options, [](const exporter::HttpRequest& r) {
    exporter::HttpResponse response;
    if (r.path == "/metrics") {
      response.body = "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 250\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\"} 150\n";
    } else {
      response.content_type = "application/json";
      response.body = r.target == "/api/v1/query?query=sum%28DCGM_FI_DEV_POWER_USAGE%29"
                          ? R"({"status":"success","data":{"resultType":"vector","result":)"
                            R"([{"metric":{},"value":[1733.5,"400.5"]}]}})"
                          : R"({"status":"error"})";
    }
    return response;
  });
  server.start();
  std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  auto page = make_power_reader("prometheus:" + base + "/metrics DCGM_FI_DEV_POWER_USAGE", 5)();
  EXPECT_DOUBLE_EQ(page.watts, 400);
  EXPECT_EQ(page.cards, 2);
  auto query =
      make_power_reader("prometheus:" + base + "/api/v1/query sum(DCGM_FI_DEV_POWER_USAGE)", 5)();
  EXPECT_DOUBLE_EQ(query.watts, 400.5);
  server.stop();
}

}  // namespace
}  // namespace plumb::serve
