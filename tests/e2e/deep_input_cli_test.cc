// Issue 28, end to end: the inputs that crashed plumb by their nesting. A baseline file nested
// 400,000 deep given to diff, report, plan --calibrate and step --baseline (and step --plan) is
// exit 2 naming the file; one HTTP POST nested 100,000 deep to plumb alert-relay is answered 400
// with the reason, the relay keeps serving, and the alert it had queued is still delivered.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/fake_chat_endpoint.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kFixtures = PLUMB_TEST_FIXTURES;
constexpr int kPatienceSeconds = 30;  // "it did not hang" bounds, never timings

// A plumb.comm/1 record whose results are 400,000 arrays deep, and the message naming it: the
// 513th bracket is the 512th '[' ('{' is the first level).
struct DeepRecord {
  std::string path;
  std::string reason;   // "JSON nested deeper than 512 levels (at byte N)"
  std::string message;  // plumb's whole stderr
};

DeepRecord deep_record(const std::string& dir) {
  constexpr int kDepth = 400000;
  const std::string prefix = R"({"schema": "plumb.comm/1", "results": )";
  const std::string path = dir + "/deep.json";
  write_file(path, prefix + std::string(kDepth, '[') + std::string(kDepth, ']') + "}");
  const std::string reason =
      "JSON nested deeper than 512 levels (at byte " + std::to_string(prefix.size() + 511) + ")";
  return {path, reason, "plumb: error: " + path + ": " + reason + "\n"};
}

void expect_refused(const std::string& args, const std::string& message) {
  const Run r = run_command(kPlumb + " " + args);
  EXPECT_EQ(r.exit_code, 2) << args;
  EXPECT_EQ(r.err, message) << args;
}

TEST(DeepInputCli, RecordNested400000DeepIsExitTwoNamingTheFile) {
  const std::string dir = temp_dir("deep-record");
  const DeepRecord deep = deep_record(dir);
  const std::string trace = kFixtures + "/traces/kineto-ddp-rank1-of2";
  expect_refused("diff " + deep.path + " " + deep.path, deep.message);
  expect_refused("report " + deep.path + " -o " + dir + "/r.html", deep.message);
  expect_refused("plan --model llama3-70b --hardware h100-sxm --devices 64 --tp 8 --pp 2 "
                 "--calibrate " + deep.path,
                 deep.message);
  expect_refused("step " + trace + " --baseline " + deep.path, deep.message);
  expect_refused("step " + trace + " --plan " + deep.path,
                 "plumb: error: --plan " + deep.path + ": " + deep.reason +
                     "; expected plumb plan --json output\n");
}

// The relay's port, read from its "listening on" line; 0 when it did not start in time.
int wait_for_port(const std::string& log_path) {
  const std::string listening = "listening on http://127.0.0.1:";
  for (int i = 0; i < kPatienceSeconds * 20; ++i) {
    const std::string log = read_file(log_path);
    if (const size_t at = log.find(listening); at != std::string::npos) {
      const size_t digits = at + listening.size();
      if (log.find("/alertmanager", digits) != std::string::npos) {
        return std::stoi(log.substr(digits));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// POSTs a file with curl; "STATUS BODY".
std::string post(int port, const std::string& file) {
  const Run r = run_command("curl -s -w ' %{http_code}' -H 'Content-Type: application/json' "
                            "--data-binary @" + file + " http://127.0.0.1:" +
                            std::to_string(port) + "/alertmanager");
  const size_t sp = r.out.rfind(' ');
  return r.out.substr(sp + 1) + " " + r.out.substr(0, sp);
}

TEST(DeepInputCli, AlertRelayAnswersANestedPost400AndKeepsServing) {
  // The first delivery is refused, so the alert waits in the queue for its retry (2 s later)
  // while the deep POST comes in.
  FakeChatEndpoint feishu({{503, "busy", "", false},
                           {200, R"({"code":0,"data":{},"msg":"success"})", "", false}});
  const std::string dir = temp_dir("deep-relay");
  const std::string fixture = kFixtures + "/exporter/alertmanager_0.25_firing.json";
  constexpr int kDepth = 100000;
  write_file(dir + "/deep.json", std::string(kDepth, '[') + std::string(kDepth, ']'));
  test::Run relay;
  std::thread runner([&] {
    relay = run_command("sh -c 'echo $$ > " + dir + "/pid; exec " + kPlumb +
                        " alert-relay --to feishu:" + feishu.url() +
                        " --listen 127.0.0.1:0 --backoff 2 2>" + dir + "/log'");
  });
  const int port = wait_for_port(dir + "/log");
  ASSERT_NE(port, 0) << read_file(dir + "/log");

  EXPECT_EQ(post(port, fixture), "200 queued 2 alerts\n");
  ASSERT_TRUE(feishu.wait_for(1, kPatienceSeconds));  // refused: queued for a retry
  const std::string reason = "Alertmanager webhook payload: JSON nested deeper than 512 levels "
                             "(at byte 512)";
  EXPECT_EQ(post(port, dir + "/deep.json"), "400 " + reason + "\n");
  EXPECT_TRUE(feishu.wait_for(2, kPatienceSeconds));  // the queued alert, delivered on its retry
  EXPECT_EQ(post(port, fixture), "200 queued 2 alerts\n");  // and the listener still serves
  EXPECT_TRUE(feishu.wait_for(3, kPatienceSeconds));

  ASSERT_EQ(::kill(std::stoi(read_file(dir + "/pid")), SIGTERM), 0);
  runner.join();
  EXPECT_EQ(relay.exit_code, 0);
  const std::string log = read_file(dir + "/log");
  EXPECT_NE(log.find("plumb alert-relay: answered 400 to a POST /alertmanager: " + reason + "\n"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace plumb::test
