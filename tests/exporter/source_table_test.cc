// The source table: the options as `plumb exporter` declares them, their checks, and which
// sources make_sources() builds (auto picks by PATH and says which).
#include "exporter/source_table.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const std::string kBin = std::string(PLUMB_TEST_FIXTURES) + "/exporter/bin";

// Parses `args` as the exporter command would; returns CLI11's message for a refused value.
std::string parse(SourceOptions& o, std::vector<std::string> args) {
  CLI::App app("exporter");
  add_source_options(app, o);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> names(const std::vector<std::unique_ptr<Source>>& sources) {
  std::vector<std::string> out;
  for (const auto& s : sources) out.push_back(s->name() + "@" + std::to_string(s->interval_seconds()));
  return out;
}

// Sets PATH for one test.
class Path {
 public:
  explicit Path(const std::string& value) : old_(getenv("PATH") ? getenv("PATH") : "") {
    setenv("PATH", value.c_str(), 1);
  }
  ~Path() { setenv("PATH", old_.c_str(), 1); }

 private:
  std::string old_;
};

TEST(SourceTable, OptionsAndTheirDefaults) {
  SourceOptions o;
  EXPECT_EQ(parse(o, {"--host", "n1", "--device-source", "npu-smi", "--npu-smi", kBin + "/npu-smi",
                      "--device-interval", "2.5", "--tool-timeout", "1", "--events", "e.jsonl",
                      "--events-interval", "0.5", "--median-window", "50", "--probe-interval",
                      "600", "--probe-command", "cat x.json", "--probe-timeout", "30"}),
            "");
  EXPECT_EQ(o.host, "n1");
  EXPECT_EQ(o.device_interval_seconds, 2.5);
  EXPECT_EQ(o.tool_timeout_seconds, 1);
  EXPECT_EQ(o.median_window, 50);
  EXPECT_EQ(o.probe_interval_seconds, 600);
  EXPECT_EQ(o.probe_timeout_seconds, 30);
  EXPECT_EQ(names(make_sources(o)),
            (std::vector<std::string>{"npu-smi@2.500000", "events@0.500000", "probe@600.000000"}));
  CLI::App app("exporter");
  SourceOptions d;
  add_source_options(app, d);
  const std::string help = app.help();
  EXPECT_NE(help.find("--median-window"), std::string::npos);
  EXPECT_NE(help.find("100"), std::string::npos);
  EXPECT_NE(help.find("auto"), std::string::npos);
}

TEST(SourceTable, NumbersOutOfRangeAreRefusedNamingTheOption) {
  SourceOptions o;
  EXPECT_EQ(parse(o, {"--median-window", "0"}),
            "--median-window: must be a whole number from 1 to 100000, got '0'");
  EXPECT_EQ(parse(o, {"--tool-timeout", "0"}),
            "--tool-timeout: must be a number above 0 and at most 3600, got '0'");
  EXPECT_EQ(parse(o, {"--probe-interval", "-1"}),
            "--probe-interval: must be a number from 0 to 86400, got '-1'");
}

TEST(SourceTable, AnUnknownDeviceSourceSuggestsTheNearestName) {
  SourceOptions o;
  o.device_source = "nvidia_smi";
  EXPECT_EQ(plumb::test::error_message([&] { make_sources(o); }),
            "--device-source: unknown device source 'nvidia_smi' (did you mean 'nvidia-smi'?); "
            "expected one of auto, nvidia-smi, npu-smi, none");
}

TEST(SourceTable, AToolGivenByPathMustExist) {
  SourceOptions o;
  o.nvidia_smi = "/nonexistent/nvidia-smi";
  EXPECT_EQ(plumb::test::error_message([&] { make_sources(o); }),
            "--nvidia-smi /nonexistent/nvidia-smi: no such executable file");
  o.device_source = "npu-smi";
  o.npu_smi = "npu-smi-not-installed";
  EXPECT_EQ(plumb::test::error_message([&] { make_sources(o); }),
            "--npu-smi npu-smi-not-installed: not found in PATH (give its path with --npu-smi)");
}

TEST(SourceTable, AutoPicksNvidiaSmiThenNpuSmiThenNoneAndSaysWhich) {
  std::vector<std::string> logged;
  SourceOptions o;
  o.log = [&](const std::string& line) { logged.push_back(line); };
  {
    Path path(kBin + ":/usr/bin:/bin");
    EXPECT_EQ(names(make_sources(o)), (std::vector<std::string>{"nvidia-smi@5.000000"}));
  }
  o.nvidia_smi = "nvidia-smi-not-installed";
  {
    Path path(kBin + ":/usr/bin:/bin");
    EXPECT_EQ(names(make_sources(o)), (std::vector<std::string>{"npu-smi@5.000000"}));
  }
  o.npu_smi = "npu-smi-not-installed";
  EXPECT_TRUE(make_sources(o).empty());
  ASSERT_EQ(logged.size(), 3u);
  EXPECT_EQ(logged[0], "--device-source auto: nvidia-smi (" + kBin + "/nvidia-smi)");
  EXPECT_EQ(logged[1], "--device-source auto: npu-smi (" + kBin + "/npu-smi)");
  EXPECT_EQ(logged[2], "--device-source auto: neither nvidia-smi-not-installed nor "
                       "npu-smi-not-installed found: no device source");
}

TEST(SourceTable, NoneAndNothingElseIsNoSource) {
  SourceOptions o;
  o.device_source = "none";
  EXPECT_TRUE(make_sources(o).empty());
}

}  // namespace
}  // namespace plumb::exporter
