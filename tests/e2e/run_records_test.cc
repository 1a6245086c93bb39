// plumb run --metrics and --save end to end: the Prometheus textfile a crash leaves (checked by the
// real promtool) and the recovery baseline in the store, read back by plumb list, show and diff
// (issue 12, point 5).
#include <gtest/gtest.h>

#include <string>

#include "support/run_supervised.h"

namespace plumb::test {
namespace {

const std::string kBin = std::string(PLUMB_TEST_FIXTURES) + "/run/bin";

TEST(RunRecords, TheMetricsFileCountsTheFailureAndPromtoolAcceptsIt) {
  const std::string dir = temp_dir("run-metrics");
  const Supervised s = supervise("run-metrics-run", "--metrics " + dir + "/plumb_run.prom",
                                 "--steps 3 --crash-at 2");
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  const std::string prom = read_file(dir + "/plumb_run.prom");
  for (const char* line : {"plumb_run_attempts{job_name=\"python3\"} 2\n",
                           "plumb_run_restarts_total{job_name=\"python3\"} 1\n",
                           "plumb_run_failures_total{job_name=\"python3\",kind=\"exit\"} 1\n",
                           "plumb_run_failures_total{job_name=\"python3\",kind=\"hang\"} 0\n",
                           "plumb_run_steps_lost_total{job_name=\"python3\"} 2\n",
                           "plumb_run_result{job_name=\"python3\",result=\"finished\"} 1\n",
                           "plumb_run_result{job_name=\"python3\",result=\"running\"} 0\n"}) {
    EXPECT_NE(prom.find(line), std::string::npos) << line << prom;
  }
  const test::Run check = run_command("promtool check metrics < " + dir + "/plumb_run.prom");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(RunRecords, AMetricsFileThatCannotBeWrittenIsOneLineBeforeTheJobStarts) {
  const std::string dir = temp_dir("run-metrics-bad");
  const test::Run r = run_command(kPlumb + " run --metrics " + dir + "/no/such/m.prom -- touch " +
                                  dir + "/started");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("plumb: error: --metrics " + dir + "/no/such/m.prom: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(run_command("test -e " + dir + "/started").exit_code, 1) << "the job was started";
}

// Two runs with one crash each, the second's device reset 0.8 s slower: stored, listed, shown,
// and the diff finds the slower recovery.
TEST(RunRecords, SavedRunsAreListedShownAndCompared) {
  const std::string dir = temp_dir("run-save");
  const std::string db = dir + "/plumb.db";
  for (const char* sleep : {"0.05", "0.85"}) {
    const std::string env = "env PATH=" + kBin + ":$PATH PLUMB_STANDIN_GPUS=1 "
                            "PLUMB_STANDIN_RESET_SLEEP=" + std::string(sleep) + " ";
    const test::Run r = run_command(env + kPlumb + " run --backoff 0.1 --vendor nvidia --recover "
                                    "reset-device --save --label reset-" + sleep + " --db " + db +
                                    " -- " + kTrainer + " --steps 3 --crash-at 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("plumb run: saved as baseline "), std::string::npos) << r.err;
  }
  const test::Run list = run_command(kPlumb + " list --db " + db);
  EXPECT_NE(list.out.find("reset-0.05"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("recovery 1 failure, down "), std::string::npos) << list.out;
  const test::Run show = run_command(kPlumb + " show 2 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("failure 1: exit (exit 3) in attempt 1\n"), std::string::npos) << show.out;
  const size_t at = show.out.find("; recovery ");
  ASSERT_NE(at, std::string::npos) << show.out;
  EXPECT_GE(std::stod(show.out.substr(at + 11)), 0.85) << "the stand-in's reset sleeps 0.85 s";
  EXPECT_NE(show.out.find(" s: reset-device "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("steps lost 2 (last step 2, checkpoint -, first step after 1)"),
            std::string::npos)
      << show.out;
  const test::Run diff = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(diff.exit_code, 1) << diff.out << diff.err;
  EXPECT_NE(diff.out.find("recovery"), std::string::npos) << diff.out;
}

}  // namespace
}  // namespace plumb::test
