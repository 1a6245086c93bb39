#include "baseline/record_json.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "report/baseline_reporter.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

comm::Row sample_row() {
  comm::Row r;
  r.layer = "node";
  r.group = "n0";
  r.group_ranks = 8;
  r.collective = "allgather";
  r.dtype = "bfloat16";
  r.op = "none";
  r.requested_bytes = r.bytes = 1 << 20;
  r.count = 1 << 19;
  r.busbw_gbps = 123.5;
  r.p99_us = std::nan("");
  r.busbw_spread = 0.04;
  return r;
}

TEST(RecordJson, ReadsWhatExportWrites) {
  Record r;
  r.id = 7;
  r.created = "2026-12-02T10:00:00Z";
  r.label = "after-driver";
  r.hosts = {"a", "b"};
  r.source = "plumb baseline";
  r.env = {{"versions", {{"nccl", "2.28.9"}}}};
  r.comm = {{"backend", "nccl"}};
  r.rows = {sample_row()};
  const Record back = record_from_json(report::baseline_json(r), "x.json");
  EXPECT_EQ(back.id, 7);
  EXPECT_EQ(back.label, "after-driver");
  EXPECT_EQ(back.hosts, r.hosts);
  EXPECT_EQ(back.env["versions"]["nccl"], "2.28.9");
  EXPECT_EQ(back.comm["backend"], "nccl");
  EXPECT_FALSE(back.comm.contains("results"));
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_EQ(back.rows[0].collective, "allgather");
  EXPECT_DOUBLE_EQ(back.rows[0].busbw_gbps, 123.5);
  EXPECT_TRUE(std::isnan(back.rows[0].p99_us));
  EXPECT_DOUBLE_EQ(back.rows[0].busbw_spread, 0.04);
}

TEST(RecordJson, ReadsACommRecordAndItsEnvironment) {
  const nlohmann::json doc = {{"schema", "plumb.comm/1"}, {"created", "t"}, {"hosts", {"h"}},
                              {"env", {{"NCCL_ALGO", "Ring"}}}, {"results", {sample_row()}}};
  const Record r = record_from_json(doc, "comm.json");
  EXPECT_EQ(r.source, "plumb comm comm.json");
  EXPECT_EQ(r.env["env"]["NCCL_ALGO"], "Ring");
  EXPECT_EQ(r.rows.size(), 1u);
}

TEST(RecordJson, ErrorsNameTheFileAndWhatIsWrong) {
  try {
    record_from_json({{"schema", "plumb.env/1"}}, "env.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "env.json: schema 'plumb.env/1' is not a baseline; expected "
                                     "plumb.baseline/1 (plumb export) or plumb.comm/1 (plumb comm "
                                     "--json)");
  }
  nlohmann::json bad = {{"schema", "plumb.comm/1"}, {"results", {{{"layer", "world"}}}}};
  try {
    record_from_json(bad, "c.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c.json: results[0]: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'group' not found"), std::string::npos) << e.what();
  }
  const std::string path = test::temp_dir("record-json") + "/broken.json";
  test::write_file(path, "{\"schema\": ");
  try {
    read_record_file(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": not valid JSON");
  }
}

}  // namespace
}  // namespace plumb::baseline
