// Issue 31, item 6: serving records in plumb report, and the serving part of a baseline set. The
// real binary: plumb report of stored serving records (one, two, refused beside a step record);
// plumb baseline --workload --serve-url against plumb serve mock with every job part skipped (the
// set is topology, versions and the sweep: seconds), then plumb list, show, report, export and
// diff of it; and the set without --serve-url, its serving part named missing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "baseline/store.h"
#include "common/json.h"
#include "support/browser.h"
#include "support/serve_record.h"
#include "support/service.h"
#include "support/set_record.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

baseline::Record serving_record(double tpot_scale) {
  baseline::Record r;
  r.created = "2026-12-07T04:00:00Z";
  r.source = "plumb serve bench";
  r.hosts = {"127.0.0.1"};
  r.serve = serve_part(tpot_scale);
  return r;
}

TEST(ServeSetCli, ReportOfServingRecords) {
  const std::string dir = temp_dir("serve-report-cli");
  const std::string db = dir + "/plumb.db";
  {
    baseline::Store store(db);
    EXPECT_EQ(store.save(serving_record(1.0)), 1);
    EXPECT_EQ(store.save(serving_record(1.2)), 2);
    EXPECT_EQ(store.save(step_only_record()), 3);
  }
  const test::Run one = run_command(kPlumb + " report 1 --db " + db + " -o " + dir + "/one.html");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "report: " + dir + "/one.html\n");
  const std::string page = read_file(dir + "/one.html");
  EXPECT_NE(page.find("<title>plumb report · serving · baseline 1</title>"), std::string::npos);
  EXPECT_EQ(count(page, "<table class=\"rows serve-runs\">"), 1u);
  EXPECT_EQ(count(page, "<section id=\"pareto\">"), 1u);

  const test::Run two = run_command(kPlumb + " report 1 2 --db " + db + " -o -");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(count(two.out, "<table class=\"rows serve-runs\">"), 2u);
  EXPECT_NE(two.out.find("baseline 2\nc=4\nTPOT (ms) p99: 7.08"), std::string::npos);

  const test::Run mixed = run_command(kPlumb + " report 1 3 --db " + db + " -o -");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(mixed.err, "plumb: error: plumb report draws a serving record beside another serving "
                       "record: 1 is a serving record, 3 is a step record\n");
  EXPECT_EQ(mixed.out, "");
}

// Every part of the job skipped: no job runs (`true` is never started), comm is not swept.
std::string set_command(const std::string& db, const std::string& dir, const std::string& extra) {
  return kPlumb + " baseline --workload --skip comm,model,memory,recovery --label serve-set --db " +
         db + " -o " + dir + " " + extra + " -- true";
}

TEST(ServeSetCli, ABaselineSetWithAServingPartAgainstTheMock) {
  const std::string dir = temp_dir("serve-set-cli");
  const std::string db = dir + "/plumb.db";
  const int port = free_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  Service mock("mock", kPlumb + " serve mock --port " + std::to_string(port) +
                           " --ttft 2ms --itl 1ms --tokens 4",
               dir + "/mock.log");
  ASSERT_TRUE(wait_until_serving(url)) << mock.log();
  const test::Run set = run_command(set_command(db, dir, "--serve-url " + url +
                                                       " --serve-model mock --serve-concurrency "
                                                       "1,2 --serve-requests 4 --serve-slo "
                                                       "ttft=2000ms"));
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_NE(set.err.find("plumb baseline: [6/6] serve: plumb serve bench against " + url +
                         " (openai-completions), --concurrency 1,2, 4 request(s) per point\n"),
            std::string::npos)
      << set.err;
  EXPECT_NE(set.out.find("  serve     2 run(s) at c=1, c=2: 8 request(s), 0 failed; output "),
            std::string::npos)
      << set.out;
  const test::Run exported = run_command(kPlumb + " export 1 --db " + db + " -o -");
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const nlohmann::json doc = parse_json(exported.out, "export");
  EXPECT_EQ(doc["serve"]["schema"], "plumb.serve/1");
  EXPECT_EQ(doc["serve"]["runs"].size(), 2u);
  EXPECT_FALSE(doc["missing"].contains("serve")) << doc["missing"];

  const test::Run list = run_command(kPlumb + " list -n 1 --db " + db);
  EXPECT_NE(list.out.find("topo env -comm -step -memory -recovery serve"), std::string::npos)
      << list.out;
  const test::Run show = run_command(kPlumb + " show 1 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("## serving\nload "), std::string::npos) << show.out;
  const test::Run page = run_command(kPlumb + " report 1 --db " + db + " -o -");
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.out.find("<section id=\"serving\" data-part=\"serve\">"), std::string::npos);
  EXPECT_EQ(count(page.out, "<table class=\"rows serve-runs\">"), 1u);

  // Without --serve-url: the part named missing, and plumb diff names it only in B.
  const test::Run plain = run_command(set_command(db, dir, ""));
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_NE(plain.out.find("missing   serve: not asked for: no --serve-url\n"), std::string::npos)
      << plain.out;
  const test::Run diff = run_command(kPlumb + " diff 2 1 --db " + db);
  EXPECT_NE(diff.out.find("serve     only in B (A: not asked for: no --serve-url)\n"),
            std::string::npos)
      << diff.out << diff.err;
  ASSERT_EQ(run_command(kPlumb + " export 1 --db " + db + " -o " + dir + "/set.json").exit_code, 0);
  const test::Run same = run_command(kPlumb + " diff 1 " + dir + "/set.json --db " + db);
  EXPECT_NE(same.out.find("serve     unchanged: 2 run(s) compared"), std::string::npos)
      << same.out << same.err;
}

TEST(ServeSetCli, ServeOptionsNeedTheUrl) {
  const std::string dir = temp_dir("serve-set-usage");
  const test::Run r = run_command(set_command(dir + "/plumb.db", dir, "--serve-model m"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--serve-model requires --serve-url"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace plumb::test
