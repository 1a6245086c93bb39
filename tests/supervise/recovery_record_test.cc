// The recovery baseline's records: plumb.recovery/1 JSON both ways and the Prometheus textfile,
// on a worked example of two failures (a crash, then a hang whose link check failed).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "supervise/recovery_json.h"
#include "supervise/recovery_metrics.h"
#include "support/subprocess.h"

namespace plumb::supervise {
namespace {

using nlohmann::json;

// Crash at step 150 (checkpoint 100, resumed at 101), then a hang at step 260 (checkpoint 200,
// resumed at 201): recovery 1.5 + 20.25 + 4.25 = 26 s and 2.5 + 30 + 10 = 42.5 s.
RecoveryBaseline worked_example() {
  RecoveryBaseline b;
  b.command = {"/opt/venv/bin/torchrun", "--nproc-per-node", "8", "train.py"};
  b.host = "gpu-001";
  b.started = "2026-12-03T10:00:00Z";
  b.wall_seconds = 1800.5;
  b.attempts = 3;
  b.result = "finished";
  b.failures_by_kind = {{"exit", 1}, {"hang", 1}};
  Recovery crash;
  crash.attempt = 1;
  crash.kind = "exit";
  crash.detail = "exit 3";
  crash.detect_seconds = 0.5;
  crash.steps = {{"clear-cache", 1.5, true, ""},
                 {"reset-device", 20.25, true, "reset 8 devices"},
                 {"link-check", 4.25, true, "8 links up"}};
  crash.backoff_seconds = 5;
  crash.restart_to_first_step_seconds = 58.25;
  crash.downtime_seconds = 90;
  crash.last_step = 150;
  crash.checkpoint_step = 100;
  crash.first_step_after = 101;
  crash.steps_lost = 50;
  crash.resumed_after_checkpoint = true;
  Recovery hang = crash;
  hang.attempt = 2;
  hang.kind = "hang";
  hang.detail = "no progress for 300 s";
  hang.detect_seconds = 300.5;
  hang.steps = {{"clear-cache", 2.5, true, ""},
                {"reset-device", 30, true, "reset 8 devices"},
                {"link-check", 10, false, "device 3: link status: DOWN"}};
  hang.backoff_seconds = 10;
  hang.restart_to_first_step_seconds = 47;
  hang.downtime_seconds = 400;
  hang.last_step = 260;
  hang.checkpoint_step = 200;
  hang.first_step_after = 201;
  hang.steps_lost = 60;
  b.recoveries = {crash, hang};
  return b;
}

// The worked example as Prometheus text: medians (0.5 + 300.5) / 2 = 150.5 s detection,
// (26 + 42.5) / 2 = 34.25 s recovery, (90 + 400) / 2 = 245 s downtime; 50 + 60 steps lost; the
// steps' last durations are the hang's.
const std::string kWorkedExampleText =
    "# HELP plumb_run_attempts Attempts of the job started so far (1 + restarts).\n"
    "# TYPE plumb_run_attempts gauge\n"
    "plumb_run_attempts{job_name=\"torchrun\"} 3\n"
    "# HELP plumb_run_restarts_total Restarts of the job after a failure.\n"
    "# TYPE plumb_run_restarts_total counter\n"
    "plumb_run_restarts_total{job_name=\"torchrun\"} 2\n"
    "# HELP plumb_run_failures_total Failures of the job by kind: exit (non-zero exit), "
    "signal, hang (no progress for --hang-timeout), fatal_line (a --fatal-regex line).\n"
    "# TYPE plumb_run_failures_total counter\n"
    "plumb_run_failures_total{job_name=\"torchrun\",kind=\"exit\"} 1\n"
    "plumb_run_failures_total{job_name=\"torchrun\",kind=\"fatal_line\"} 0\n"
    "plumb_run_failures_total{job_name=\"torchrun\",kind=\"hang\"} 1\n"
    "plumb_run_failures_total{job_name=\"torchrun\",kind=\"signal\"} 0\n"
    "# HELP plumb_run_detect_seconds Failure to plumb acting on it, over the run's "
    "failures (0.5: median, 1: maximum).\n"
    "# TYPE plumb_run_detect_seconds summary\n"
    "plumb_run_detect_seconds{job_name=\"torchrun\",quantile=\"0.5\"} 150.5\n"
    "plumb_run_detect_seconds{job_name=\"torchrun\",quantile=\"1\"} 300.5\n"
    "plumb_run_detect_seconds_sum{job_name=\"torchrun\"} 301\n"
    "plumb_run_detect_seconds_count{job_name=\"torchrun\"} 2\n"
    "# HELP plumb_run_recovery_seconds The recovery steps' time after a failure, over "
    "the run's failures (0.5: median, 1: maximum).\n"
    "# TYPE plumb_run_recovery_seconds summary\n"
    "plumb_run_recovery_seconds{job_name=\"torchrun\",quantile=\"0.5\"} 34.25\n"
    "plumb_run_recovery_seconds{job_name=\"torchrun\",quantile=\"1\"} 42.5\n"
    "plumb_run_recovery_seconds_sum{job_name=\"torchrun\"} 68.5\n"
    "plumb_run_recovery_seconds_count{job_name=\"torchrun\"} 2\n"
    "# HELP plumb_run_downtime_seconds Failure noticed to the restarted job's first "
    "progress, over the failures after which it progressed again (0.5: median, 1: "
    "maximum).\n"
    "# TYPE plumb_run_downtime_seconds summary\n"
    "plumb_run_downtime_seconds{job_name=\"torchrun\",quantile=\"0.5\"} 245\n"
    "plumb_run_downtime_seconds{job_name=\"torchrun\",quantile=\"1\"} 400\n"
    "plumb_run_downtime_seconds_sum{job_name=\"torchrun\"} 490\n"
    "plumb_run_downtime_seconds_count{job_name=\"torchrun\"} 2\n"
    "# HELP plumb_run_recovery_step_seconds The last run of each recovery step "
    "(clear-cache, reset-device, link-check, on-failure): its seconds.\n"
    "# TYPE plumb_run_recovery_step_seconds gauge\n"
    "plumb_run_recovery_step_seconds{job_name=\"torchrun\",step=\"clear-cache\"} 2.5\n"
    "plumb_run_recovery_step_seconds{job_name=\"torchrun\",step=\"link-check\"} 10\n"
    "plumb_run_recovery_step_seconds{job_name=\"torchrun\",step=\"reset-device\"} 30\n"
    "# HELP plumb_run_recovery_step_failures_total Recovery steps that failed (a device "
    "that did not reset, a link that stayed down).\n"
    "# TYPE plumb_run_recovery_step_failures_total counter\n"
    "plumb_run_recovery_step_failures_total{job_name=\"torchrun\",step=\"clear-cache\"} 0\n"
    "plumb_run_recovery_step_failures_total{job_name=\"torchrun\",step=\"link-check\"} 1\n"
    "plumb_run_recovery_step_failures_total{job_name=\"torchrun\",step=\"reset-device\"} 0\n"
    "# HELP plumb_run_steps_lost_total Training steps done again after restarts (last "
    "step reported minus the checkpoint's step).\n"
    "# TYPE plumb_run_steps_lost_total counter\n"
    "plumb_run_steps_lost_total{job_name=\"torchrun\"} 110\n"
    "# HELP plumb_run_result 1 for the run's state (running, finished, gave_up, "
    "stopped), 0 for the others.\n"
    "# TYPE plumb_run_result gauge\n"
    "plumb_run_result{job_name=\"torchrun\",result=\"running\"} 0\n"
    "plumb_run_result{job_name=\"torchrun\",result=\"finished\"} 1\n"
    "plumb_run_result{job_name=\"torchrun\",result=\"gave_up\"} 0\n"
    "plumb_run_result{job_name=\"torchrun\",result=\"stopped\"} 0\n"
    "# HELP plumb_run_wall_seconds Time since plumb run started the job.\n"
    "# TYPE plumb_run_wall_seconds gauge\n"
    "plumb_run_wall_seconds{job_name=\"torchrun\"} 1800.5\n";

TEST(RecoveryJson, WorkedExampleWithTotals) {
  const json j = recovery_to_json(worked_example());
  EXPECT_EQ(j["schema"], "plumb.recovery/1");
  EXPECT_EQ(j["recoveries"][1]["recovery_seconds"], 42.5);
  EXPECT_EQ(j["recoveries"][1]["steps"][2],
            json({{"name", "link-check"}, {"seconds", 10.0}, {"ok", false},
                  {"detail", "device 3: link status: DOWN"}}));
  EXPECT_EQ(j["totals"], json({{"failures", 2},
                               {"restarts", 2},
                               {"detect_seconds_median", 150.5},
                               {"detect_seconds_max", 300.5},
                               {"recovery_seconds_median", 34.25},
                               {"recovery_seconds_max", 42.5},
                               {"downtime_seconds_median", 245.0},
                               {"downtime_seconds_max", 400.0},
                               {"steps_lost", 110},
                               {"resumed_after_checkpoint_ratio", 1.0}}));
}

TEST(RecoveryJson, RoundTrip) {
  const RecoveryBaseline b = worked_example();
  const RecoveryBaseline back = recovery_from_json(recovery_to_json(b), "x.json");
  EXPECT_EQ(back.command, b.command);
  EXPECT_EQ(back.failures_by_kind, b.failures_by_kind);
  ASSERT_EQ(back.recoveries.size(), 2u);
  EXPECT_EQ(back.recoveries[1].steps[2].detail, "device 3: link status: DOWN");
  EXPECT_FALSE(back.recoveries[1].steps[2].ok);
  EXPECT_EQ(back.recoveries[0].first_step_after, 101);
  EXPECT_EQ(recovery_to_json(back), recovery_to_json(b));
}

// A run that gave up: the last failure never made progress again and reported no step.
TEST(RecoveryJson, AbsentValuesAreNullAndReadBackAbsent) {
  RecoveryBaseline b;
  b.command = {"python", "train.py"};
  b.attempts = 1;
  b.result = "gave_up";
  b.failures_by_kind = {{"signal", 1}};
  Recovery killed;
  killed.attempt = 1;
  killed.kind = "signal";
  killed.detail = "SIGKILL";
  killed.detect_seconds = 0.25;
  b.recoveries.push_back(killed);
  const json j = recovery_to_json(b);
  for (const char* key : {"restart_to_first_step_seconds", "downtime_seconds", "last_step",
                          "checkpoint_step", "first_step_after", "steps_lost",
                          "resumed_after_checkpoint"}) {
    EXPECT_TRUE(j["recoveries"][0][key].is_null()) << key;
  }
  EXPECT_TRUE(j["totals"]["downtime_seconds_median"].is_null());
  EXPECT_TRUE(j["totals"]["resumed_after_checkpoint_ratio"].is_null());
  EXPECT_EQ(j["totals"]["recovery_seconds_max"], 0.0);
  EXPECT_EQ(j["totals"]["restarts"], 0);
  const RecoveryBaseline back = recovery_from_json(j, "x.json");
  EXPECT_FALSE(back.recoveries[0].downtime_seconds.has_value());
  EXPECT_FALSE(back.recoveries[0].resumed_after_checkpoint.has_value());
  EXPECT_EQ(recovery_to_json(back), j);
}

TEST(RecoveryJson, BadFieldsAreNamed) {
  const json good = recovery_to_json(worked_example());
  const auto message = [&](const std::function<void(json&)>& change) {
    json doc = good;
    change(doc);
    return test::error_message([&] { recovery_from_json(doc, "baseline 3"); });
  };
  EXPECT_EQ(message([](json& d) { d["recoveries"][1]["detect_seconds"] = "slow"; }),
            "baseline 3: recoveries[1].detect_seconds: expected a number, got \"slow\"");
  EXPECT_EQ(message([](json& d) { d["schema"] = "plumb.step/1"; }),
            "baseline 3: schema: expected \"plumb.recovery/1\", got \"plumb.step/1\"");
  EXPECT_EQ(message([](json& d) { d.erase("attempts"); }), "baseline 3: attempts: missing");
  EXPECT_EQ(message([](json& d) { d["attempts"] = -1; }),
            "baseline 3: attempts: expected a whole number from 0 to 2147483647, got -1");
  EXPECT_EQ(message([](json& d) { d["recoveries"][0]["steps"][1]["ok"] = "yes"; }),
            "baseline 3: recoveries[0].steps[1].ok: expected true or false, got \"yes\"");
  EXPECT_EQ(message([](json& d) { d["recoveries"][0]["steps_lost"] = 1.5; }),
            "baseline 3: recoveries[0].steps_lost: expected a whole number from "
            "-9223372036854775808 to 9223372036854775807, got 1.5");
  EXPECT_EQ(message([](json& d) { d["recoveries"][1]["resumed_after_checkpoint"] = 1; }),
            "baseline 3: recoveries[1].resumed_after_checkpoint: expected true or false, got 1");
  EXPECT_EQ(message([](json& d) { d["failures_by_kind"]["hang"] = "one"; }),
            "baseline 3: failures_by_kind.hang: expected a whole number from 0 to 2147483647, "
            "got \"one\"");
  EXPECT_EQ(message([](json& d) { d["command"][1] = 8; }),
            "baseline 3: command[1]: expected a string, got 8");
  EXPECT_EQ(message([](json& d) { d["recoveries"] = json::object(); }),
            "baseline 3: recoveries: expected a list, got {}");
  EXPECT_EQ(message([](json& d) { d = 5; }),
            "baseline 3: plumb.recovery/1: expected an object, got 5");
}

// A run still going (result ""), no failure yet: every kind at 0, the summaries empty (NaN).
RecoveryBaseline running_without_failure() {
  RecoveryBaseline b;
  b.command = {"python3", "-u", "train.py"};
  b.attempts = 1;
  b.wall_seconds = 12.5;
  return b;
}

TEST(RecoveryMetrics, WorkedExample) {
  EXPECT_EQ(prometheus_textfile(worked_example()), kWorkedExampleText);
}

TEST(RecoveryMetrics, NoFailureYet) {
  const std::string text = prometheus_textfile(running_without_failure());
  for (const char* line : {
           "plumb_run_failures_total{job_name=\"python3\",kind=\"fatal_line\"} 0\n",
           "plumb_run_failures_total{job_name=\"python3\",kind=\"hang\"} 0\n",
           "plumb_run_detect_seconds{job_name=\"python3\",quantile=\"0.5\"} NaN\n",
           "plumb_run_detect_seconds_count{job_name=\"python3\"} 0\n",
           "plumb_run_result{job_name=\"python3\",result=\"running\"} 1\n",
           "plumb_run_restarts_total{job_name=\"python3\"} 0\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("step=\""), std::string::npos) << text;
}

TEST(RecoveryMetrics, LabelValuesAreEscaped) {
  RecoveryBaseline b = running_without_failure();
  b.command = {"/opt/my \"job\"\\x"};
  EXPECT_NE(prometheus_textfile(b).find("plumb_run_attempts{job_name=\"my \\\"job\\\"\\\\x\"} 1\n"),
            std::string::npos) << prometheus_textfile(b);
}

// The real parser and linter: node_exporter reads the file with the same text-format parser.
TEST(RecoveryMetrics, PromtoolChecksTheTextfile) {
  ASSERT_EQ(test::run_command("command -v promtool").exit_code, 0)
      << "promtool is not installed: it comes with Debian's prometheus package "
         "(scripts/install-deps installs it); this test checks the textfile with the real parser "
         "and does not skip";
  const std::string dir = test::temp_dir("recovery-promtool");
  RecoveryBaseline escaped = running_without_failure();
  escaped.command = {"my \"job\"\n"};
  for (const RecoveryBaseline& b : {worked_example(), running_without_failure(), escaped}) {
    write_metrics_file(dir + "/plumb.prom", b);
    const test::Run check = test::run_command("promtool check metrics < " + dir + "/plumb.prom");
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_EQ(check.out + check.err, "");
  }
}

// Written through a temporary file renamed over the target: no other file is left in the folder,
// and a folder that does not exist is one clear error naming the option.
TEST(RecoveryMetrics, WriteLeavesOnlyTheFileAndNamesTheOption) {
  const std::string dir = test::temp_dir("recovery-metrics");
  write_metrics_file(dir + "/plumb.prom", running_without_failure());
  write_metrics_file(dir + "/plumb.prom", worked_example());
  EXPECT_EQ(test::read_file(dir + "/plumb.prom"), kWorkedExampleText);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  EXPECT_EQ(test::error_message([&] { write_metrics_file(dir + "/no/plumb.prom", worked_example()); }),
            "--metrics " + dir + "/no/plumb.prom: cannot write: folder " + dir + "/no does not exist");
}

}  // namespace
}  // namespace plumb::supervise
