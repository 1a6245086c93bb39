// Records carry their own validity (issue 28, step 4): what each importer keeps of a log's own
// checks — wrong elements, failed checks, a missing end marker, a sweep cut short — with the exact
// issue each becomes, on the real fixtures and damaged copies of them.
#include "baseline/validity.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <sstream>

#include "baseline/importers/importer.h"
#include "baseline/importers/log_rounds.h"
#include "common/error.h"
#include "common/json.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

using json = nlohmann::json;

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/" + name);
}

// `text` with each line passed through `edit(number, line)`; a line edited to "\x01" is dropped.
std::string edited(const std::string& text,
                   const std::function<std::string(int, const std::string&)>& edit) {
  std::istringstream in(text);
  std::string out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string changed = edit(number, line);
    if (changed != "\x01") out += changed + "\n";
  }
  return out;
}

// The first `lines` lines of `text`.
std::string head(const std::string& text, int lines) {
  return edited(text, [&](int n, const std::string& l) { return n <= lines ? l : "\x01"; });
}

// Word `index` of a whitespace-separated row set to `value`.
std::string with_word(const std::string& row, size_t index, const std::string& value) {
  std::istringstream in(row);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  words.at(index) = value;
  std::string out;
  for (const std::string& w : words) out += "  " + w;
  return out;
}

std::vector<std::string> texts(const Validity& validity) {
  std::vector<std::string> out;
  for (const Issue& i : validity) out.push_back(issue_text(i));
  return out;
}

ImportedTest one(const Importer& importer, const std::string& text, ImportOptions options = {},
                 const std::string& file = "log.txt") {
  const std::vector<ImportedTest> tests = importer.parse(text, file, options);
  EXPECT_EQ(tests.size(), 1u);
  return tests.at(0);
}

std::string error_of(const Importer& importer, const std::string& text, ImportOptions options) {
  try {
    importer.parse(text, "log.txt", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const std::string kAllReduce = "nccl-tests/all_reduce_8xH100_v2.17.8.log";  // rows at lines 20-29

TEST(ImportValidity, CleanFixturesHaveNoIssues) {
  EXPECT_TRUE(one(nccl_tests_text_importer(), fixture(kAllReduce)).validity.empty());
  for (const ImportedTest& t : nccl_tests_text_importer().parse(
           fixture("nccl-tests/alltoall_sendrecv_4ranks_2nodes_mid2025.log"), "f", {})) {
    EXPECT_TRUE(t.validity.empty());
  }
  EXPECT_TRUE(one(nccl_tests_json_importer(), fixture("nccl-tests/all_reduce_8ranks_2hosts_v2.json"))
                  .validity.empty());
  ImportOptions options;
  options.ranks = 8;
  options.collective = "allreduce";
  EXPECT_TRUE(one(hccl_test_importer(), fixture("hccl_test/all_reduce_doc_example.log"), options)
                  .validity.empty());
  EXPECT_TRUE(one(hccl_test_importer(), fixture("hccl_test/current_format_line.log"), options)
                  .validity.empty());
  EXPECT_TRUE(one(osu_importer(), fixture("osu/osu_allreduce_v7.1_default.log"), options)
                  .validity.empty());
}

// The issue's case: #wrong on every row, and "Out of bounds values : N FAILED".
TEST(ImportValidity, NcclTestsWrongOnEveryRowAndOutOfBounds) {
  const std::string log = edited(fixture(kAllReduce), [](int n, const std::string& l) {
    if (n >= 20 && n <= 29) return with_word(with_word(l, 8, "3"), 12, "3");
    return n == 30 ? std::string("# Out of bounds values : 20 FAILED") : l;
  });
  const ImportedTest t = one(nccl_tests_text_importer(), log);
  EXPECT_EQ(t.rows.size(), 10u);
  EXPECT_EQ(t.rows[9].wrong, 3);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:20: wrong results: 10 of 10 rows have wrong elements in the out-of-place "
                "half, the first at 32 MiB (#wrong 3; 30 in all)",
                "log.txt:20: wrong results: 10 of 10 rows have wrong elements in the in-place "
                "half, the first at 32 MiB (#wrong 3; 30 in all)",
                "log.txt:30: wrong results: nccl-tests says '# Out of bounds values : 20 FAILED'"}));
  const ValiditySummary s = summarize_validity(t.validity, t.rows);
  EXPECT_EQ(s.marks, (std::vector<std::string>{"WRONG RESULTS"}));
  EXPECT_FALSE(s.valid());
}

// Only the footer says so (an in-place half of a collective whose #wrong nobody kept).
TEST(ImportValidity, NcclTestsOutOfBoundsLineAlone) {
  const std::string log = edited(fixture(kAllReduce), [](int n, const std::string& l) {
    return n == 30 ? std::string("# Out of bounds values : 2 FAILED") : l;
  });
  EXPECT_EQ(texts(one(nccl_tests_text_importer(), log).validity),
            (std::vector<std::string>{
                "log.txt:30: wrong results: nccl-tests says '# Out of bounds values : 2 FAILED'"}));
}

TEST(ImportValidity, NcclTestsPre213ErrorAboveTheTypesBound) {
  ImportOptions options;
  options.collective = "allgather";
  const ImportedTest t =
      one(nccl_tests_text_importer(), fixture("nccl-tests/all_gather_12xV100_pre2.13_failed.log"),
          options);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:49: wrong results: 2 of 31 rows have wrong elements in the out-of-place "
                "half, the first at 4.0 GiB (error 1e+00, above nccl-tests' bound of 1e-05 for "
                "float32)",
                "log.txt:49: wrong results: 2 of 31 rows have wrong elements in the in-place half, "
                "the first at 4.0 GiB (error 1e+00, above nccl-tests' bound of 1e-05 for float32)",
                "log.txt:51: wrong results: nccl-tests says '# Out of bounds values : 4 FAILED'"}));
  // An error within float's bound (nccl-tests' own rounding of a sum) is no wrong result.
  const std::string within = edited(fixture("nccl-tests/all_gather_12xV100_pre2.13_failed.log"),
                                    [](int n, const std::string& l) {
                                      if (n == 49 || n == 50) return with_word(with_word(l, 6, "5e-07"), 10, "5e-07");
                                      return n == 51 ? std::string("# Out of bounds values : 0 OK") : l;
                                    });
  const ImportedTest ok = one(nccl_tests_text_importer(), within, options);
  EXPECT_TRUE(ok.validity.empty());
  EXPECT_EQ(ok.rows[29].wrong, 0);
}

// The issue's case: a log cut after 3 of its 10 sizes (the run died).
TEST(ImportValidity, NcclTestsLogCutAfterThreeSizes) {
  const ImportedTest t = one(nccl_tests_text_importer(), head(fixture(kAllReduce), 22));
  EXPECT_EQ(t.rows.size(), 3u);
  ASSERT_EQ(t.validity.size(), 1u);
  EXPECT_EQ(issue_text(t.validity[0]),
            "log.txt:22: incomplete: the test ends without nccl-tests' '# Avg bus bandwidth' line "
            "(the run stopped before its summary): the sweep ended at 128 MiB of 16 GiB; missing "
            "256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB, 16 GiB (7 sizes)");
  EXPECT_EQ(t.validity[0].last_bytes, 134217728u);
  EXPECT_EQ(t.validity[0].planned_bytes, 17179869184u);  // maxBytes reduced to 26549638485
  EXPECT_EQ(t.validity[0].missing_count, 7u);
  EXPECT_EQ(summarize_validity(t.validity, t.rows).marks,
            (std::vector<std::string>{"INCOMPLETE: sweep ended at 128 MiB of 16 GiB"}));
}

TEST(ImportValidity, NcclTestsLastRowCutMidLine) {
  const std::string log =
      head(fixture(kAllReduce), 22) + "   268435456      33554432    double     sum      -1  1081.14  248.29";
  const ImportedTest t = one(nccl_tests_text_importer(), log);
  EXPECT_EQ(t.rows.size(), 3u);  // the cut row is not a measurement
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:23: incomplete: the last row is cut short (7 of 13 columns: '268435456  "
                "    33554432    double     sum      -1  1081.14  248.29') and the test ends "
                "without nccl-tests' '# Avg bus bandwidth' line (the run stopped before its "
                "summary): the sweep ended at 128 MiB of 16 GiB; missing 256 MiB, 512 MiB, 1 GiB, "
                "2 GiB, 4 GiB, 8 GiB, 16 GiB (7 sizes)"}));
  // A short row with rows after it was not cut: it is refused at its line, as before.
  const std::string middle = edited(fixture(kAllReduce), [](int n, const std::string& l) {
    return n == 21 ? std::string("    67108864       8388608    double") : l;
  });
  EXPECT_EQ(error_of(nccl_tests_text_importer(), middle, {}),
            "log.txt:21: expected at least 9 columns (size count type redop root time algbw busbw "
            "#wrong), got 3");
}

TEST(ImportValidity, NcclTestsFailureLineAndFailedBandwidthCheck) {
  const std::string failed = head(fixture(kAllReduce), 22) +
                             "cnode3-002: Test NCCL failure common.cu:1005 'unhandled system error'\n"
                             " .. cnode3-002 pid 4180122: Test failure common.cu:893\n";
  EXPECT_EQ(texts(one(nccl_tests_text_importer(), failed).validity),
            (std::vector<std::string>{
                "log.txt:23: failed check: the run reported a failure: 'cnode3-002: Test NCCL "
                "failure common.cu:1005 'unhandled system error''",
                "log.txt:24: failed check: the run reported a failure: '.. cnode3-002 pid 4180122: "
                "Test failure common.cu:893'",
                "log.txt:22: incomplete: the test ends without nccl-tests' '# Avg bus bandwidth' "
                "line (the run stopped before its summary): the sweep ended at 128 MiB of 16 GiB; "
                "missing 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB, 16 GiB (7 sizes)"}));
  const std::string slow = edited(fixture(kAllReduce), [](int n, const std::string& l) {
    return n == 31 ? std::string("# Avg bus bandwidth    : 437.957 FAILED") : l;
  });
  const ImportedTest t = one(nccl_tests_text_importer(), slow);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:31: failed check: nccl-tests says '# Avg bus bandwidth    : 437.957 FAILED'"}));
  EXPECT_EQ(summarize_validity(t.validity, t.rows).marks, (std::vector<std::string>{"FAILED CHECK"}));
}

// The end marker is there but a size is missing from the header's sweep.
TEST(ImportValidity, NcclTestsFewerRowsThanTheHeaderSweep) {
  const std::string log = edited(fixture(kAllReduce), [](int n, const std::string& l) {
    return n == 28 || n == 29 ? std::string("\x01") : l;
  });
  EXPECT_EQ(texts(one(nccl_tests_text_importer(), log).validity),
            (std::vector<std::string>{
                "log.txt:27: incomplete: float64 sum has 8 rows where its header's sweep has 10 "
                "sizes: the sweep ended at 4 GiB of 16 GiB; missing 8 GiB, 16 GiB (2 sizes)"}));
}

// A test that died in a file of two: the first is marked, the second (complete) is not, and a
// failure line between them belongs to the first.
TEST(ImportValidity, NcclTestsTwoTestsTheFirstCut) {
  const std::string log = edited(
      fixture("nccl-tests/alltoall_sendrecv_4ranks_2nodes_mid2025.log"),
      [](int n, const std::string& l) {
        if (n == 27) return std::string("cnode4-007: Test NCCL failure common.cu:1005 'unhandled system error'");
        return n >= 17 && n <= 24 ? std::string("\x01") : l;
      });
  const std::vector<ImportedTest> tests = nccl_tests_text_importer().parse(log, "log.txt", {});
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(texts(tests[0].validity),
            (std::vector<std::string>{
                "log.txt:19: failed check: the run reported a failure: 'cnode4-007: Test NCCL "
                "failure common.cu:1005 'unhandled system error''",
                "log.txt:16: incomplete: the test ends without nccl-tests' '# Avg bus bandwidth' "
                "line (the run stopped before its summary): the sweep ended at 256 MiB of 16 GiB; "
                "missing 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB, 16 GiB (6 sizes)"}));
  EXPECT_TRUE(tests[1].validity.empty());
}

const std::string kJson = "nccl-tests/all_reduce_8ranks_2hosts_v2.json";

std::string json_edited(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = parse_json(fixture(name), name);
  edit(doc);
  return doc.dump();
}

TEST(ImportValidity, NcclJsonNwrongAndOutOfBounds) {
  const ImportedTest t =
      one(nccl_tests_json_importer(), fixture("nccl-tests/alltoall_4ranks_2hosts_wrong_v1.json"), {},
          "run.json");
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "run.json: results[3].out_of_place.nwrong: wrong results: 1 of 5 rows have wrong "
                "elements in the out-of-place half, the first at 64 MiB (nwrong 131072)",
                "run.json: out_of_bounds: wrong results: nccl-tests counted 1 out-of-bounds value "
                "(okay \"false\")"}));
  const std::string in_place = json_edited(kJson, [](json& d) {
    d["results"][1]["in_place"]["nwrong"] = 7.0;
    d["results"][2]["in_place"]["nwrong"] = 5.0;
  });
  EXPECT_EQ(texts(one(nccl_tests_json_importer(), in_place, {}, "run.json").validity),
            (std::vector<std::string>{
                "run.json: results[1].in_place.nwrong: wrong results: 2 of 6 rows have wrong "
                "elements in the in-place half, the first at 4 MiB (nwrong 7; 12 in all)"}));
}

TEST(ImportValidity, NcclJsonErrorsBandwidthCheckAndNoSummary) {
  const std::string failed = json_edited(kJson, [](json& d) {
    d["errors"] = json::array({"", "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"});
    d["average_bus_bandwidth"]["okay"] = "false";
  });
  EXPECT_EQ(texts(one(nccl_tests_json_importer(), failed, {}, "run.json").validity),
            (std::vector<std::string>{
                "run.json: average_bus_bandwidth: failed check: nccl-tests says the average bus "
                "bandwidth, 242.856696 GB/s, is below the one it was asked to check (okay "
                "\"false\")",
                "run.json: errors[1]: failed check: NCCL reported 'unhandled cuda error (run with "
                "NCCL_DEBUG=INFO for details)'"}));
  // Killed after 4 of 6 sizes: nccl-tests closed the file without its summary.
  const std::string cut = json_edited(kJson, [](json& d) {
    d["results"].erase(4);
    d["results"].erase(4);
    d.erase("out_of_bounds");
    d.erase("average_bus_bandwidth");
    d.erase("errors");
  });
  EXPECT_EQ(texts(one(nccl_tests_json_importer(), cut, {}, "run.json").validity),
            (std::vector<std::string>{
                "run.json: results: incomplete: no 'out_of_bounds' or 'average_bus_bandwidth' "
                "after the results (the run stopped before its summary): the sweep ended at 64 "
                "MiB of 1 GiB; missing 256 MiB, 1 GiB (2 sizes)"}));
  EXPECT_EQ(error_of(nccl_tests_json_importer(),
                     json_edited(kJson, [](json& d) { d["out_of_bounds"]["count"] = -1; }), {}),
            "log.txt: out_of_bounds.count: expected a whole number from 0 to 9223372036854775807, "
            "got -1");
}

const std::string kHccl = "hccl_test/all_reduce_doc_example.log";  // rows at lines 3-16

ImportOptions hccl_options() {
  ImportOptions options;
  options.ranks = 8;
  options.collective = "allreduce";
  return options;
}

// The issue's case: check_result failed, and the other ranks' own lines.
TEST(ImportValidity, HcclTestCheckResultFailedAndRankLines) {
  const std::string log = edited(fixture(kHccl), [](int n, const std::string& l) {
    if (n == 5) return std::string("32768             |     901.10    |       0.03387        | failed");
    if (n == 8) {
      return "rank id 3, check result failed, 262144            | 1573.45        | 0.15516              | failed\n" + l;
    }
    return n == 9 ? l.substr(0, l.find("success")) + "NULL" : l;
  });
  const ImportedTest t = one(hccl_test_importer(), log, hccl_options());
  EXPECT_EQ(t.rows[2].wrong, 1);
  EXPECT_EQ(t.rows[5].wrong, 1);  // its root said success, rank 3 said failed
  EXPECT_EQ(t.rows[6].wrong, -1);  // NULL: not checked
  EXPECT_EQ(t.rows[4].wrong, 0);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:5: wrong results: 1 of 14 rows failed their check, the first at 32 KiB "
                "(check_result failed)",
                "log.txt:8: wrong results: 1 of 14 rows have a rank that failed its check, the "
                "first at 256 KiB (rank id 3, check result failed)"}));
  EXPECT_EQ(error_of(hccl_test_importer(),
                     edited(fixture(kHccl), [](int n, const std::string& l) {
                       return n == 4 ? l.substr(0, l.find("success")) + "maybe" : l;
                     }),
                     hccl_options()),
            "log.txt:4: expected success, failed or NULL in column 'check_result', got 'maybe'");
}

TEST(ImportValidity, HcclTestSweepShortOfMaxbytesAndExecuteFailed) {
  const std::string cut = head(fixture(kHccl), 7) +
                          "hccl_op_base execute failed, Detailed logs are stored in path: "
                          "/root/ascend/log/\n";
  const ImportedTest t = one(hccl_test_importer(), cut, hccl_options());
  EXPECT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{
                "log.txt:8: failed check: the run reported a failure: 'hccl_op_base execute "
                "failed, Detailed logs are stored in path: /root/ascend/log/'",
                "log.txt:7: incomplete: its settings line says maxbytes is 67108864 and the next "
                "size has no row: the sweep ended at 128 KiB of 64 MiB; missing 256 KiB, 512 KiB, "
                "1 MiB, 2 MiB, 4 MiB, 8 MiB, 16 MiB, 32 MiB, 64 MiB (9 sizes)"}));
  // A last row cut mid-line.
  const std::string mid = head(fixture(kHccl), 7) + "262144            |    1573.4";
  EXPECT_EQ(texts(one(hccl_test_importer(), mid, hccl_options()).validity),
            (std::vector<std::string>{
                "log.txt:8: incomplete: the last row is cut short ('262144            |    "
                "1573.4') and its settings line says maxbytes is 67108864 and the next size has no "
                "row: the sweep ended at 128 KiB of 64 MiB; missing 256 KiB, 512 KiB, 1 MiB, 2 "
                "MiB, 4 MiB, 8 MiB, 16 MiB, 32 MiB, 64 MiB (9 sizes)"}));
}

TEST(ImportValidity, OsuValidationFailAndCutLastRow) {
  ImportOptions options;
  options.ranks = 2;
  const std::string validated =
      "# OSU MPI Allreduce Latency Test v7.1\n# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)        Validation\n"
      "1                      24.41              Pass\n"
      "2                      32.12              Fail\n"
      "4                      36.12              Fail\n";
  const ImportedTest t = one(osu_importer(), validated, options);
  EXPECT_EQ(t.rows[0].wrong, 0);
  EXPECT_EQ(t.rows[1].wrong, 1);
  EXPECT_EQ(texts(t.validity),
            (std::vector<std::string>{"log.txt:5: wrong results: 2 of 3 rows failed their check, "
                                      "the first at 2 B (Validation Fail)"}));
  const std::string cut = edited(fixture("osu/osu_reduce_v7.3_full.log"), [](int n, const std::string& l) {
    return n == 14 ? std::string("1024                   55.48") : l;
  }) + "mpirun noticed that process rank 1 with PID 0 on node n2 exited on signal 9 (Killed).\n";
  const ImportedTest c = one(osu_importer(), cut, options);
  EXPECT_EQ(c.rows.size(), 10u);
  EXPECT_EQ(texts(c.validity),
            (std::vector<std::string>{
                "log.txt:15: failed check: the run reported a failure: 'mpirun noticed that "
                "process rank 1 with PID 0 on node n2 exited on signal 9 (Killed).'",
                "log.txt:14: incomplete: the last row is cut short ('1024                   "
                "55.48'); OSU prints no planned last size: the sweep ended at 512 B"}));
  EXPECT_EQ(summarize_validity(c.validity, c.rows).marks,
            (std::vector<std::string>{"FAILED CHECK", "INCOMPLETE: sweep ended at 512 B"}));
}

TEST(Validity, SweepPlans) {
  EXPECT_EQ((SweepPlan{8, 8192, 2, 0}.size_count()), 11u);
  EXPECT_EQ((SweepPlan{8, 8191, 2, 0}.size(9)), 4096u);
  EXPECT_EQ((SweepPlan{1024, 4096, 0, 1024}.size_count()), 4u);
  EXPECT_EQ((SweepPlan{1024, 4096, 0, 1024}.size(3)), 4096u);
  EXPECT_FALSE((SweepPlan{1024, 4096, 1, 0}.planned()));  // neither steps
  EXPECT_EQ((SweepPlan{1024, 4096, 1, 0}.size_count()), 0u);
  EXPECT_EQ((SweepPlan{1, 100, 1.5, 0}.size_count()), 1u);  // 1 × 1.5 truncates to 1: stops
  const Issue i = incomplete_sweep("f:3", "stopped", SweepPlan{1, 1ull << 40, 2, 0}, 2, 2);
  EXPECT_EQ(i.missing.size(), kMissingKept);
  EXPECT_EQ(i.missing_count, 39u);
  EXPECT_EQ(issue_text(i),
            "f:3: incomplete: stopped: the sweep ended at 2 B of 1 TiB; missing 4 B, 8 B, 16 B, "
            "32 B, 64 B, 128 B, 256 B, 512 B, 1 KiB, 2 KiB, 4 KiB, 8 KiB, 16 KiB, 32 KiB, 64 KiB, "
            "128 KiB, … (39 sizes)");
}

// plumb's own runs count wrong elements per row and carry no issue: the rows say it.
TEST(Validity, WrongRowsOfAPlumbRun) {
  std::vector<comm::Row> rows(3);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].collective = "allreduce";
    rows[i].layer = "world";
    rows[i].requested_bytes = 1ull << (20 + i);
    rows[i].wrong = i == 0 ? -1 : static_cast<int64_t>(2 * i);
  }
  const ValiditySummary s = summarize_validity({}, rows);
  EXPECT_TRUE(s.wrong);
  EXPECT_EQ(s.marks, (std::vector<std::string>{"WRONG RESULTS"}));
  EXPECT_EQ(s.lines, (std::vector<std::string>{"wrong results: 2 of 3 rows have wrong elements "
                                               "(6 in all), the first at allreduce@world 2 MiB"}));
  EXPECT_TRUE(summarize_validity({}, std::vector<comm::Row>(2)).valid());
}

TEST(Validity, JsonRoundTripAndErrors) {
  const ImportedTest t = one(nccl_tests_text_importer(), head(fixture(kAllReduce), 22));
  const json j = validity_json(t.validity);
  EXPECT_EQ(j[0]["kind"], "incomplete");
  EXPECT_EQ(j[0]["missing_bytes"][0], 268435456u);
  const Validity back = validity_from_json(j, "x.json", "validity.issues");
  EXPECT_EQ(texts(back), texts(t.validity));
  const auto error = [](json issues) {
    try {
      validity_from_json(issues, "x.json", "validity.issues");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(json::array({{{"kind", "bad"}, {"where", ""}, {"what", ""}}})),
            "x.json: validity.issues[0].kind: expected one of wrong-results, failed-check, "
            "incomplete, got \"bad\"");
  json negative = j;
  negative[0]["missing_bytes"][1] = -5;
  EXPECT_EQ(error(negative), "x.json: validity.issues[0].missing_bytes[1]: expected a whole number "
                             "from 0 to 9223372036854775807, got -5");
  json short_count = j;
  short_count[0]["missing_count"] = 1u;
  EXPECT_EQ(error(short_count), "x.json: validity.issues[0].missing_count: expected at least the 7 "
                                "sizes of missing_bytes, got 1");
  EXPECT_EQ(error(json::object()), "x.json: validity.issues: expected a list, got {}");
}

// Several logs of one test: each size the median log, the spread the logs' MAD, every issue kept.
TEST(LogRounds, ThreeLogsOfOneTest) {
  const std::string log = fixture(kAllReduce);
  const auto scaled = [&](double factor) {
    return edited(log, [&](int n, const std::string& l) {
      if (n < 20 || n > 29) return l;
      std::istringstream in(l);
      std::vector<std::string> w;
      for (std::string s; in >> s;) w.push_back(s);
      return with_word(l, 7, fmt::format("{:.2f}", std::stod(w[7]) * factor));
    });
  };
  std::vector<std::vector<ImportedTest>> tests;
  for (double f : {1.0, 0.9, 1.2}) {
    tests.push_back(nccl_tests_text_importer().parse(scaled(f), "run.log", {}));
  }
  tests[1][0].validity.push_back({IssueKind::kFailedCheck, "b.log:9", "x", 0, 0, {}, 0});
  const std::vector<ImportedTest> combined = combine_logs({"a.log", "b.log", "c.log"}, tests);
  ASSERT_EQ(combined.size(), 1u);
  ASSERT_EQ(combined[0].rows.size(), 10u);
  EXPECT_DOUBLE_EQ(combined[0].rows[0].busbw_gbps, 321.10);  // the median of ×0.9, ×1, ×1.2
  EXPECT_NEAR(combined[0].rows[0].busbw_spread, 0.1, 1e-3);  // MAD 32.11 / 321.10
  EXPECT_EQ(texts(combined[0].validity), (std::vector<std::string>{"b.log:9: failed check: x"}));

  auto fewer = tests;
  fewer[2][0].rows.pop_back();
  const auto error = [](std::vector<std::vector<ImportedTest>> t) {
    try {
      combine_logs({"a.log", "b.log", "c.log"}, std::move(t));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(fewer), "c.log:2: no allreduce float64 sum 16 GiB row, which a.log:2 has: "
                          "several logs make one record only of the same test");
  auto ranks = tests;
  ranks[1][0].ranks = 16;
  EXPECT_EQ(error(ranks), "b.log:2: 16 ranks where a.log:2 has 8: several logs make one record "
                          "only of the same test");
  auto twice = tests;
  twice[0][0].rows.push_back(twice[0][0].rows.back());
  EXPECT_EQ(error(twice), "a.log:2: allreduce 16 GiB appears more than once in the test (several "
                          "types or reductions in one run, -d all / -o all): several logs make "
                          "one record only of the same test, with one row per size");
  auto more = tests;
  more[1].push_back(more[1][0]);
  EXPECT_EQ(error(more), "b.log: 2 test(s) where a.log has 1: several logs make one record only "
                         "of the same test");
}

}  // namespace
}  // namespace plumb::baseline
