// plumb serve as a new user meets it (issue 31, "bad input gets a clear error and loses
// nothing"): the real binary against the reference server (plumb serve mock), with a reader that
// closes the pipe early, a full disk, a store that cannot be written, and a stored peak search read
// back by plumb show and plumb report. Each run sends a few short requests: seconds in all.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "support/service.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

class ServeNewUser : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("serve_newuser");
    port_ = free_port();
    url_ = "http://127.0.0.1:" + std::to_string(port_);
    mock_ = std::make_unique<Service>(
        "mock", kPlumb + " serve mock --port " + std::to_string(port_) + " --ttft 1ms --itl 1ms --tokens 2",
        dir_ + "/mock.log");
    ASSERT_TRUE(wait_until_serving(url_)) << mock_->log();
  }
  std::string bench(const std::string& extra) const {
    return kPlumb + " serve bench --url " + url_ + " --model m --concurrency 1 -n 4 --input-tokens 8 "
                    "--output-tokens 2 " + extra;
  }
  std::string dir_;
  int port_ = 0;
  std::string url_;
  std::unique_ptr<Service> mock_;
};

// The reader is gone before the console is written: the run still writes its --json file and its
// record, says nothing about the pipe, and ends with its own verdict.
TEST_F(ServeNewUser, AClosedPipeLosesNeitherTheJsonNorTheRecord) {
  const test::Run r = run_command("{ " + bench("--json " + dir_ + "/b.json --store --db " + dir_ +
                                         "/s.db") + "; echo $? > " + dir_ + "/rc; } | true");
  EXPECT_EQ(read_file(dir_ + "/rc"), "0\n");
  EXPECT_EQ(r.err, "");
  EXPECT_NE(read_file(dir_ + "/b.json").find("\"plumb.serve/1\""), std::string::npos);
  const test::Run list = run_command(kPlumb + " list --db " + dir_ + "/s.db");
  EXPECT_NE(list.out.find("plumb serve bench"), std::string::npos) << list.out << list.err;
}

// A full disk: the file and the reason, exit 2, the console printed, the record still stored.
TEST_F(ServeNewUser, AFullDiskNamesTheFileAndKeepsTheConsoleAndTheRecord) {
  const test::Run r = run_command(bench("--json /dev/full --store --db " + dir_ + "/s.db"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --json /dev/full: writing failed: No space left on device; the "
                   "previous file, if any, is unchanged\n");
  EXPECT_NE(r.out.find("Serving Benchmark Result"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plumb serve bench: stored as baseline 1 in " + dir_ + "/s.db\n"),
            std::string::npos)
      << r.out;
}

// A store that cannot be written fails before the first request, saying why.
TEST_F(ServeNewUser, AStoreThatCannotBeWrittenFailsBeforeTheRun) {
  const test::Run r = run_command(bench("--store --db /dev/null/plumb/s.db"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --store: cannot create the store's folder /dev/null/plumb (Not a "
                   "directory); give --db FILE in a folder you can write\n");
  EXPECT_EQ(r.out, "");
}

// A stored peak search keeps its answer: plumb show prints it, plumb report draws its Pareto.
TEST_F(ServeNewUser, AStoredPeakIsShownAndReportedWithItsAnswer) {
  const std::string db = " --db " + dir_ + "/s.db";
  const test::Run peak = run_command(kPlumb + " serve peak --url " + url_ + " --model m --input-tokens 8 "
                               "--output-tokens 2 --slo ttft=1000ms --start 1 --max-load 2 "
                               "--min-requests 10 --min-duration 0 --store -q" + db);
  ASSERT_EQ(peak.exit_code, 0) << peak.out << peak.err;
  const test::Run show = run_command(kPlumb + " show 1" + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("\npeak: concurrency 2: "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("\n# Pareto: "), std::string::npos) << show.out;
  const test::Run report = run_command(kPlumb + " report 1 -o " + dir_ + "/r.html" + db);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = read_file(dir_ + "/r.html");
  EXPECT_NE(page.find("<section id=\"pareto\">"), std::string::npos);
  EXPECT_NE(page.find("\nmet the SLO"), std::string::npos);  // the probes coloured by their verdict
}

}  // namespace
}  // namespace plumb::test
