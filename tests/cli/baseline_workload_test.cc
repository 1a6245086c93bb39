#include <gtest/gtest.h>

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>

#include "cli/baseline_workload.h"
#include "common/environment.h"
#include "common/error.h"
#include "report/serve_reporter.h"
#include "serve/measure.h"
#include "serve/mock_server.h"

namespace plumb::cli {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "(no error)";
}

TEST(BaselineWorkload, SkipTakesThePartsOfTheSet) {
  EXPECT_EQ(parse_skip(""), std::set<std::string>());
  EXPECT_EQ(parse_skip("recovery"), std::set<std::string>({"recovery"}));
  EXPECT_EQ(parse_skip("comm,model,memory,recovery"),
            std::set<std::string>({"comm", "model", "memory", "recovery"}));
}

TEST(BaselineWorkload, AnUnknownPartNamesTheValidOnes) {
  EXPECT_EQ(error_of([] { parse_skip("comm,topo"); }),
            "--skip 'comm,topo': unknown part 'topo'; the parts are comm, model, memory, recovery, "
            "serve");
}

// ---- the serving part (issue 31, item 6) -------------------------------------------------------

BaselineOptions serve_options(const std::string& url) {
  BaselineOptions o;
  o.quiet = true;
  o.serve.endpoint.url = url;
  o.serve.endpoint.model = "mock";
  o.serve.load.concurrency = "1,2";
  o.serve.load.requests = 4;
  o.serve.load.input_tokens = 16;
  o.serve.load.output_tokens = 8;
  o.serve.report.slo = "ttft=2000ms";
  return o;
}

TEST(BaselineWorkload, ServeSkippedOrNotAskedForIsNamedMissing) {
  baseline::Record r;
  EXPECT_EQ(take_serve_part(serve_options(""), {}, r), "");
  EXPECT_EQ(r.missing, nlohmann::json({{"serve", "not asked for: no --serve-url"}}));
  EXPECT_TRUE(r.serve.is_null());
  baseline::Record skipped;
  EXPECT_EQ(take_serve_part(serve_options("http://127.0.0.1:1"), {"serve"}, skipped), "");
  EXPECT_EQ(skipped.missing, nlohmann::json({{"serve", "skipped (--skip serve)"}}));
}

// Against plumb serve mock's server (1 ms to the first token, 1 ms between tokens): the sweep's
// plumb.serve/1 in the record, one run per concurrency, every request counted.
TEST(BaselineWorkload, ServeTakesTheSweepIntoTheRecord) {
  serve::MockConfig config;
  config.plan.ttft_ns = 1'000'000;
  config.plan.itl_ns = 1'000'000;
  serve::MockServer server(config);
  server.start();
  baseline::Record r;
  EXPECT_EQ(take_serve_part(serve_options(server.base_url()), {}, r), "");
  server.stop();
  EXPECT_TRUE(r.missing.is_null()) << r.missing.dump();
  ASSERT_TRUE(r.serve.is_object());
  EXPECT_EQ(r.serve["schema"], "plumb.serve/1");
  const serve::ServeResult s = report::serve_from_json(r.serve, "the part");
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].concurrency, 1);
  EXPECT_EQ(s.runs[1].concurrency, 2);
  for (const serve::ServeRun& run : s.runs) {
    EXPECT_EQ(run.summary.completed, 4);
    EXPECT_EQ(run.summary.errors, 0);
    EXPECT_EQ(run.summary.output_tokens, 4 * 8);
  }
  EXPECT_EQ(s.setup.model, "mock");
  EXPECT_EQ(s.setup.dataset, "random 16/8");
  EXPECT_EQ(serve::slo_text(s.setup.slo), "ttft=2000ms");
}

// A server that answers every request with 503: nothing to keep, the part missing with why.
TEST(BaselineWorkload, ServeWithNoRequestCompletedIsMissingWithTheErrors) {
  serve::MockConfig config;
  config.plan.status = 503;
  serve::MockServer server(config);
  server.start();
  baseline::Record r;
  EXPECT_EQ(take_serve_part(serve_options(server.base_url()), {}, r), "");
  server.stop();
  EXPECT_TRUE(r.serve.is_null());
  EXPECT_EQ(r.missing["serve"], "no request to " + server.base_url() +
                                    " completed: 8 of 8 requests failed (http_status 8)");
}

TEST(BaselineWorkload, ProfileWindowInsideTheSteps) {
  const ProfileWindow w = parse_profile_steps("10:3", 20);
  EXPECT_EQ(w.start, 10);
  EXPECT_EQ(w.count, 3);
  EXPECT_EQ(parse_profile_steps("18:3", 20).count, 3);
}

TEST(BaselineWorkload, BadProfileWindows) {
  EXPECT_EQ(error_of([] { parse_profile_steps("10", 20); }),
            "--profile-steps '10': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("a:3", 20); }),
            "--profile-steps 'a:3': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("3:2x", 20); }),
            "--profile-steps '3:2x': expected START:COUNT, two whole numbers, e.g. 10:3");
  EXPECT_EQ(error_of([] { parse_profile_steps("0:3", 20); }),
            "--profile-steps '0:3': START and COUNT must be at least 1");
  EXPECT_EQ(error_of([] { parse_profile_steps("19:3", 20); }),
            "--profile-steps '19:3': the window ends at step 21, after --steps 20");
}

// The port is free: it can be bound again at once.
TEST(BaselineWorkload, FreePortCanBeBound) {
  const int port = free_port();
  ASSERT_GT(port, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
}

TEST(BaselineWorkload, MasterAddress) {
  const char* saved = getenv("MASTER_ADDR");
  const std::string before = saved ? saved : "";
  unsetenv("MASTER_ADDR");
  BaselineOptions o;
  EXPECT_EQ(master_address(o), "127.0.0.1");  // the ranks on this host alone
  o.launcher = "srun -N 2";
  EXPECT_EQ(master_address(o), host_name());  // ranks elsewhere meet at this host
  setenv("MASTER_ADDR", "node7", 1);
  EXPECT_EQ(master_address(o), "");           // the environment's, left as it is
  if (saved) {
    setenv("MASTER_ADDR", before.c_str(), 1);
  } else {
    unsetenv("MASTER_ADDR");
  }
}

}  // namespace
}  // namespace plumb::cli
