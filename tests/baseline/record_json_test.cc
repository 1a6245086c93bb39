#include "baseline/record_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "baseline/record_kind.h"
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
  r.time_us = 9.5;
  r.algbw_gbps = 110.4;
  r.busbw_gbps = 123.5;
  r.p50_us = 9.4;
  r.p99_us = std::nan("");
  r.max_us = 12.0;
  r.busbw_spread = 0.04;
  return r;
}

std::string error_of(const nlohmann::json& doc, const std::string& origin) {
  try {
    record_from_json(doc, origin);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A plumb.comm/1 document with one sample row, and the same in a plumb.baseline/1 export.
nlohmann::json comm_doc() {
  return {{"schema", "plumb.comm/1"}, {"hosts", {"h"}}, {"results", {sample_row(), sample_row()}}};
}
nlohmann::json baseline_doc() {
  Record r;
  r.id = 3;
  r.rows = {sample_row(), sample_row()};
  return report::baseline_json(r);
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
  EXPECT_EQ(error_of(bad, "c.json"), "c.json: results[0].group: missing");
  const std::string path = test::temp_dir("record-json") + "/broken.json";
  test::write_file(path, "{\"schema\": ");
  try {
    read_record_file(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": not valid JSON: parse error at line 1, column 12: "
                                            "syntax error while parsing value - unexpected end "
                                            "of input; expected '[', '{', or a literal");
  }
}

// issue 10 group 9: a missing key or a wrongly typed value is an Error naming the file and the
// JSON path, never the JSON library's text; group 6: the importers' checks on every row.
TEST(RecordJson, MissingKeysAndWrongTypesNameTheirJsonPath) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> comm_cases = {
      {[](auto& d) { d["results"][1]["busbw_gbps"] = "fast"; },
       "x.json: results[1].busbw_gbps: expected a number, got \"fast\""},
      {[](auto& d) { d["results"][0].erase("time_us"); }, "x.json: results[0].time_us: missing"},
      {[](auto& d) { d["results"][1]["bytes"] = "1M"; },
       "x.json: results[1].bytes: expected a whole number from 0 to 9223372036854775807, got "
       "\"1M\""},
      {[](auto& d) { d["results"][0]["group_ranks"] = 2.5; },
       "x.json: results[0].group_ranks: expected a whole number from 0 to 2147483647, got 2.5"},
      {[](auto& d) { d["results"][0]["root"] = -5; },
       "x.json: results[0].root: expected a whole number from -1 to 2147483647, got -5"},
      {[](auto& d) { d["results"][0]["wrong"] = "none"; },
       "x.json: results[0].wrong: expected a whole number from 0 to 9223372036854775807, got "
       "\"none\""},
      {[](auto& d) { d["results"][0]["layer"] = nullptr; },
       "x.json: results[0].layer: expected a string, got null"},
      {[](auto& d) { d["results"][1] = 4; }, "x.json: results[1]: expected an object, got 4"},
      {[](auto& d) { d["results"] = {{"a", 1}}; },
       "x.json: results: expected a list, got {\"a\":1}"},
      {[](auto& d) { d.erase("results"); }, "x.json: results: missing"},
      {[](auto& d) { d["hosts"] = 5; }, "x.json: hosts: expected a list, got 5"},
      {[](auto& d) { d["hosts"] = {"a", 5}; }, "x.json: hosts[1]: expected a string, got 5"},
      {[](auto& d) { d["created"] = 2026; }, "x.json: created: expected a string, got 2026"},
  };
  for (const Case& c : comm_cases) {
    nlohmann::json doc = comm_doc();
    c.edit(doc);
    EXPECT_EQ(error_of(doc, "x.json"), c.message);
  }
  const std::vector<Case> baseline_cases = {
      {[](auto& d) { d["comm"]["results"][1]["busbw_gbps"] = "fast"; },
       "b.json: comm.results[1].busbw_gbps: expected a number, got \"fast\""},
      {[](auto& d) { d["comm"] = "x"; }, "b.json: comm: expected an object, got \"x\""},
      {[](auto& d) { d.erase("comm"); }, "b.json: comm: missing"},
      {[](auto& d) { d["label"] = 3; }, "b.json: label: expected a string, got 3"},
      {[](auto& d) { d["id"] = "seven"; },
       "b.json: id: expected a whole number from 0 to 9223372036854775807, got \"seven\""},
  };
  for (const Case& c : baseline_cases) {
    nlohmann::json doc = baseline_doc();
    c.edit(doc);
    EXPECT_EQ(error_of(doc, "b.json"), c.message);
  }
}

TEST(RecordJson, ImpossibleRowsAreRefusedAsImportsAre) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r["busbw_gbps"] = -12.0; },
       "x.json: results[1].busbw_gbps: expected a bandwidth not below 0 GB/s, got -12"},
      {[](auto& r) { r["time_us"] = 0; },
       "x.json: results[1].time_us: expected a time above 0 µs, got 0"},
      {[](auto& r) { r["time_us"] = -9.5; },
       "x.json: results[1].time_us: expected a time above 0 µs, got -9.5"},
      {[](auto& r) { r["busbw_gbps"] = 0; },
       "x.json: results[1].busbw_gbps: expected a busbw above 0 beside an algbw of 110.4 GB/s "
       "(busbw is at least half of algbw from 2 ranks on), got 0"},
      {[](auto& r) { r["bytes"] = 18446744073709551615u; },
       "x.json: results[1].bytes: expected a whole number from 0 to 9223372036854775807, got "
       "18446744073709551615"},
      {[](auto& r) { r["p99_us"] = -1; },
       "x.json: results[1].p99_us: expected a time above 0 µs, got -1"},
      {[](auto& r) { r["collective"] = "frob"; },
       "x.json: results[1].collective: unknown collective 'frob'; expected one of allreduce, "
       "allgather, reducescatter, alltoall, broadcast, reduce, sendrecv"},
      {[](auto& r) { r["op"] = "frob"; },
       "x.json: results[1].op: unknown reduction 'frob'; expected one of sum, prod, max, min, "
       "avg, mulsum, none"},
      {[](auto& r) { r["dtype"] = "quaternion"; },
       "x.json: results[1].dtype: unknown data type 'quaternion'; expected one of float32, "
       "float16, bfloat16, float64, int8, uint8, int32, uint32, int64, uint64, fp8_e4m3, "
       "fp8_e5m2"},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = comm_doc();
    c.edit(doc["results"][1]);
    EXPECT_EQ(error_of(doc, "x.json"), c.message);
  }
}

TEST(RecordJson, EveryBadRowIsReportedInOnePass) {
  nlohmann::json doc = comm_doc();
  doc["results"][0]["time_us"] = -1;
  doc["results"][1]["busbw_gbps"] = "fast";
  EXPECT_EQ(error_of(doc, "x.json"),
            "x.json: results[0].time_us: expected a time above 0 µs, got -1\n"
            "x.json: results[1].busbw_gbps: expected a number, got \"fast\"");
}

TEST(RecordJson, ADirectoryIsNotARecord) {
  const std::string dir = test::temp_dir("record-json-dir");
  try {
    read_record_file(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + ": is a directory; expected a plumb.baseline/1 or plumb.comm/1 JSON file");
  }
}

TEST(RecordJson, ReadsAFileWithAByteOrderMark) {
  const std::string path = test::temp_dir("record-json-bom") + "/comm.json";
  test::write_file(path, "\xEF\xBB\xBF" + comm_doc().dump(2));
  const Record r = read_record_file(path);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.rows[1].busbw_gbps, 123.5);
}

// Issue 28: spreads and counts are range-checked on reading — a spread of −5 or 1e300, or a
// settings.rounds of 0, never reaches plumb diff's noise model.
TEST(RecordJson, SpreadsAndRoundsAreRangeChecked) {
  const std::string spread_range =
      "expected a relative spread from 0 to 1000 (the rounds' median absolute deviation over "
      "their median; none when measured once), got ";
  nlohmann::json doc = comm_doc();
  doc["results"][1]["busbw_spread"] = -5;
  EXPECT_EQ(error_of(doc, "x.json"), "x.json: results[1].busbw_spread: " + spread_range + "-5");
  doc["results"][1]["busbw_spread"] = 1e300;
  EXPECT_EQ(error_of(doc, "x.json"), "x.json: results[1].busbw_spread: " + spread_range + "1e+300");
  doc["results"][1]["busbw_spread"] = 1000;  // rounds of one size 1000× apart: still a figure
  EXPECT_EQ(error_of(doc, "x.json"), "no error");
  doc = comm_doc();
  doc["settings"] = {{"rounds", 0}};
  EXPECT_EQ(error_of(doc, "x.json"),
            "x.json: settings.rounds: expected a whole number from 1 to 100, got 0");
  nlohmann::json exported = baseline_doc();
  exported["comm"]["settings"] = {{"rounds", -2147483647}};
  EXPECT_EQ(error_of(exported, "b.json"),
            "b.json: comm.settings.rounds: expected a whole number from 1 to 100, got -2147483647");
}

// plumb export writes a record's validity; reading it back keeps the issues.
TEST(RecordJson, ValidityRoundTrips) {
  Record r;
  r.id = 4;
  r.rows = {sample_row(), sample_row()};
  r.rows[1].wrong = 8;
  r.validity.push_back(incomplete_sweep("run.log:22", "the test ends without its summary",
                                        SweepPlan{1 << 20, 16 << 20, 2, 0}, 1, 1 << 20));
  const nlohmann::json doc = report::baseline_json(r);
  EXPECT_EQ(doc["validity"]["valid"], false);
  EXPECT_EQ(doc["validity"]["marks"],
            nlohmann::json({"WRONG RESULTS", "INCOMPLETE: sweep ended at 1 MiB of 16 MiB"}));
  EXPECT_EQ(doc["validity"]["wrong_rows"], 1);
  const Record back = record_from_json(doc, "b.json");
  ASSERT_EQ(back.validity.size(), 1u);
  EXPECT_EQ(issue_text(back.validity[0]),
            "run.log:22: incomplete: the test ends without its summary: the sweep ended at 1 MiB "
            "of 16 MiB; missing 2 MiB, 4 MiB, 8 MiB, 16 MiB (4 sizes)");
  EXPECT_EQ(report::baseline_json(back)["validity"], doc["validity"]);
  nlohmann::json bad = doc;
  bad["validity"]["issues"] = 3;
  EXPECT_EQ(error_of(bad, "b.json"), "b.json: validity.issues: expected a list, got 3");
  EXPECT_TRUE(report::baseline_json(Record{})["validity"]["valid"]);
}

// Issue 29: a baseline set exports all six parts, a part not taken null beside its reason, and
// reads back as it was.
TEST(RecordJson, ABaselineSetExportsAllSixPartsAndItsMissingOnes) {
  Record r;
  r.id = 7;
  r.source = "plumb baseline --workload";
  r.env = {{"schema", "plumb.env/1"}};
  r.memory = {{"ranks", nlohmann::json::array()}, {"worst", nullptr}};
  r.missing = {{"comm", "skipped (--skip comm)"}, {"recovery", "skipped (--skip recovery)"}};
  const nlohmann::json doc = report::baseline_json(r);
  for (const char* part : {"topo", "comm", "step", "recovery"}) {
    ASSERT_TRUE(doc.contains(part)) << part;
    EXPECT_TRUE(doc[part].is_null()) << part;
  }
  EXPECT_EQ(doc["memory"], r.memory);
  EXPECT_EQ(doc["missing"]["comm"], "skipped (--skip comm)");
  const Record back = record_from_json(doc, "set.json");
  EXPECT_EQ(back.memory, r.memory);
  EXPECT_EQ(back.missing, r.missing);
  EXPECT_TRUE(back.rows.empty());
  nlohmann::json bad = doc;
  bad["missing"]["step"] = 3;
  EXPECT_EQ(error_of(bad, "set.json"), "set.json: missing.step: expected a string, got 3");
}

// Issue 31: a serving record exports its plumb.serve/1 part and reads it back; a non-object
// serve part names its field.
TEST(RecordJson, AServingRecordRoundTrips) {
  Record r;
  r.id = 9;
  r.source = "plumb serve bench";
  r.serve = {{"schema", "plumb.serve/1"}, {"runs", nlohmann::json::array({{{"rate", 4.0}}})}};
  const nlohmann::json doc = report::baseline_json(r);
  EXPECT_EQ(doc["serve"], r.serve);
  const Record back = record_from_json(doc, "serve.json");
  EXPECT_EQ(back.serve, r.serve);
  EXPECT_EQ(kind_of(back), RecordKind::kServe);
  nlohmann::json bad = doc;
  bad["serve"] = 3;
  EXPECT_EQ(error_of(bad, "serve.json"), "serve.json: serve: expected an object, got 3");
}

}  // namespace
}  // namespace plumb::baseline
