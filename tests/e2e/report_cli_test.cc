// plumb report: from the store and from JSON files, its output line, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "baseline/store.h"
#include "report/baseline_reporter.h"
#include "support/set_record.h"
#include "support/step_record.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kPlumb = PLUMB_BIN;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

baseline::Record record(const std::string& label, double busbw) {
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = "plumb baseline";
  for (const char* layer : {"node", "world"}) {
    for (uint64_t bytes = 1 << 20; bytes <= (1 << 26); bytes *= 4) {
      comm::Row row;
      row.layer = layer;
      row.group = layer;
      row.group_ranks = 8;
      row.collective = "allreduce";
      row.dtype = "float32";
      row.op = "sum";
      row.requested_bytes = row.bytes = bytes;
      row.busbw_gbps = busbw;
      row.algbw_gbps = busbw / 1.75;
      row.time_us = static_cast<double>(bytes) / (row.algbw_gbps * 1e3);
      row.p50_us = row.time_us;
      row.p99_us = row.time_us * 1.05;
      row.max_us = row.time_us * 1.1;
      r.rows.push_back(row);
    }
  }
  return r;
}

// A store with baseline 1 (100 GB/s) and 2 (50 GB/s: a regression everywhere).
std::string make_store(const std::string& dir) {
  const std::string db = dir + "/plumb.db";
  baseline::Store store(db);
  store.save(record("before", 100));
  store.save(record("after", 50));
  return db;
}

TEST(ReportCli, TwoStoredBaselines) {
  const std::string dir = test::temp_dir("report-cli-two");
  const std::string db = make_store(dir);
  const test::Run run =
      test::run_command(kPlumb + " report 1 latest --db " + db + " -o " + dir + "/r.html");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "report: " + dir + "/r.html\n");
  const std::string html = test::read_file(dir + "/r.html");
  EXPECT_EQ(count(html, "class=\"chart\""), 2u);
  // Both collectives over their sizes ≥ 1 MiB, and each of the 8 sizes on its own.
  EXPECT_NE(html.find("<b>2 regressions</b>"), std::string::npos);
  EXPECT_NE(html.find("8 single size(s) beyond their own noise"), std::string::npos);
  EXPECT_NE(html.find("B: id 2 · after"), std::string::npos);
}

TEST(ReportCli, OneBaselineFromAJsonFileToTheDefaultFile) {
  const std::string dir = test::temp_dir("report-cli-json");
  std::ofstream(dir + "/a.json") << report::baseline_json(record("exported", 80)).dump();
  const test::Run run = test::run_command("cd " + dir + " && " + kPlumb + " report a.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "report: plumb-report.html\n");
  const std::string html = test::read_file(dir + "/plumb-report.html");
  EXPECT_EQ(count(html, "class=\"chart\""), 2u);
  EXPECT_EQ(html.find("id=\"diff\""), std::string::npos);
}

TEST(ReportCli, UnwritableOutputIsCheckedFirst) {
  const std::string dir = test::temp_dir("report-cli-errors");
  // The output is checked before the baselines are read: the message names the path.
  const test::Run missing_dir =
      test::run_command(kPlumb + " report 7 --db " + dir + "/none.db -o " + dir + "/no/r.html");
  EXPECT_EQ(missing_dir.exit_code, 2);
  EXPECT_EQ(missing_dir.err, "plumb: error: -o " + dir + "/no/r.html: cannot write: folder " + dir +
                                 "/no does not exist\n");
  const test::Run is_dir = test::run_command(kPlumb + " report 1 -o " + dir);
  EXPECT_EQ(is_dir.exit_code, 2);
  EXPECT_EQ(is_dir.err, "plumb: error: -o " + dir + ": cannot write: is a directory\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/none.db"));

  const std::string db = make_store(dir);
  const test::Run bad_id =
      test::run_command(kPlumb + " report 9 --db " + db + " -o " + dir + "/r.html");
  EXPECT_EQ(bad_id.exit_code, 2);
  EXPECT_NE(bad_id.err.find("9"), std::string::npos) << bad_id.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.html"));
}

// A step record (plumb step --save) holds no comm measurement to draw: refused, as A or as B, from
// the store or from its export, in one line, before any report is written.
TEST(ReportCli, AStepRecordIsRefused) {
  const std::string dir = test::temp_dir("report-cli-step");
  const std::string db = make_store(dir);
  EXPECT_EQ(baseline::Store(db).save(test::step_only_record()), 3);
  const std::string why = " holds a step record (plumb step), not comm measurements: plumb report "
                          "draws comm baselines, baseline sets and serving records; compare step "
                          "records with plumb diff\n";
  for (const std::string args : {" report 3", " report 1 3", " report latest 2"}) {
    const test::Run r = test::run_command(kPlumb + args + " --db " + db + " -o " + dir + "/r.html");
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, "plumb: error: baseline 3" + why) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_FALSE(std::filesystem::exists(dir + "/r.html")) << args;
  }
  ASSERT_EQ(test::run_command(kPlumb + " export 3 --db " + db + " -o " + dir + "/step.json")
                .exit_code, 0);
  const test::Run file = test::run_command(kPlumb + " report " + dir + "/step.json -o -");
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_EQ(file.err, "plumb: error: file " + dir + "/step.json" + why);
  EXPECT_EQ(file.out, "");
}

// Issue 29: a baseline set is one page with a section per part, from the store and from its
// export; two sets side by side, comm overlaid and judged; a set beside a comm baseline too.
TEST(ReportCli, BaselineSets) {
  const std::string dir = test::temp_dir("report-cli-sets");
  const std::string db = make_store(dir);  // 1, 2: comm baselines
  baseline::Store store(db);
  EXPECT_EQ(store.save(test::full_set("before")), 3);
  EXPECT_EQ(store.save(test::set_without_recovery("after")), 4);
  const test::Run one = test::run_command(kPlumb + " report 3 --db " + db + " -o " + dir + "/s.html");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "report: " + dir + "/s.html\n");
  const std::string html = test::read_file(dir + "/s.html");
  for (const char* id :
       {"topology", "versions", "communication", "step", "memory", "recovery", "serving"}) {
    EXPECT_EQ(count(html, std::string("<section id=\"") + id + "\""), 1u) << id;
  }
  EXPECT_EQ(count(html, "<td class=\"held\">held</td>"), 7u);
  EXPECT_EQ(html.find("id=\"diff\""), std::string::npos);

  ASSERT_EQ(test::run_command(kPlumb + " export 4 --db " + db + " -o " + dir + "/set.json")
                .exit_code, 0);
  const test::Run two = test::run_command(kPlumb + " report 3 " + dir + "/set.json --db " + db +
                                          " -o " + dir + "/two.html");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const std::string pair = test::read_file(dir + "/two.html");
  EXPECT_EQ(count(pair, "<div class=\"pair\">"), 5u);  // topology, step, memory, recovery, serving
  EXPECT_EQ(count(pair, "<table class=\"rows mem-ranks\">"), 2u);
  EXPECT_NE(pair.find("id=\"diff\""), std::string::npos);
  EXPECT_NE(pair.find("recovery: missing — --skip recovery: the drill was not run"),
            std::string::npos);

  // A comm baseline beside a set: the set's page, the comm baseline's other parts named as such.
  const test::Run mixed = test::run_command(kPlumb + " report 1 3 --db " + db + " -o -");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_NE(mixed.out.find("memory: missing — not part of this record (it is not a baseline set)"),
            std::string::npos);
  EXPECT_NE(mixed.out.find("id=\"diff\""), std::string::npos);
}

}  // namespace
}  // namespace plumb
