#include <gtest/gtest.h>

#include <cmath>

#include "baseline/importers/importer.h"
#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/nccl-tests/" + name);
}

std::vector<ImportedTest> parse(const std::string& text, ImportOptions options = {}) {
  return nccl_tests_text_importer().parse(text, "log.txt", options);
}

std::string error_of(const std::string& text, ImportOptions options = {}) {
  try {
    parse(text, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclTestsImport, AllReduce8xH100) {
  const auto tests = parse(fixture("all_reduce_8xH100_v2.17.8.log"));
  ASSERT_EQ(tests.size(), 1u);
  const ImportedTest& t = tests[0];
  EXPECT_EQ(t.tool, "nccl-tests 2.17.8");
  EXPECT_EQ(t.ranks, 8);
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"cnode3-002"}));
  EXPECT_EQ(t.line, 2);
  EXPECT_EQ(t.command.rfind("nThread 1 nGpus 1 minBytes 33554432", 0), 0u);
  ASSERT_EQ(t.rows.size(), 10u);
  const comm::Row& first = t.rows[0];
  EXPECT_EQ(first.collective, "allreduce");
  EXPECT_EQ(first.dtype, "float64");
  EXPECT_EQ(first.op, "sum");
  EXPECT_EQ(first.root, -1);
  EXPECT_EQ(first.bytes, 33554432u);
  EXPECT_EQ(first.count, 4194304u);
  EXPECT_DOUBLE_EQ(first.time_us, 182.87);
  EXPECT_DOUBLE_EQ(first.algbw_gbps, 183.49);
  EXPECT_DOUBLE_EQ(first.busbw_gbps, 321.10);
  EXPECT_EQ(first.wrong, 0);
  EXPECT_EQ(first.group_ranks, 8);
  EXPECT_TRUE(std::isnan(first.p50_us));  // nccl-tests prints no median
  const comm::Row& last = t.rows[9];
  EXPECT_EQ(last.bytes, 17179869184u);
  EXPECT_DOUBLE_EQ(last.time_us, 62340.7);
  EXPECT_DOUBLE_EQ(last.busbw_gbps, 482.27);
}

TEST(NcclTestsImport, TwoTestsInOneFileWithNotApplicableWrong) {
  const auto tests = parse(fixture("alltoall_sendrecv_4ranks_2nodes_mid2025.log"));
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].rows[0].collective, "alltoall");
  EXPECT_EQ(tests[0].rows[0].op, "none");
  EXPECT_EQ(tests[0].rows[0].count, 1048576u);
  EXPECT_DOUBLE_EQ(tests[0].rows[0].time_us, 576.5);
  EXPECT_EQ(tests[0].rows[0].wrong, 0);  // out-of-place #wrong; in-place says N/A
  EXPECT_EQ(tests[0].hosts, (std::vector<std::string>{"cnode4-007", "cnode4-012"}));
  EXPECT_EQ(tests[1].rows[0].collective, "sendrecv");
  EXPECT_EQ(tests[1].line, 28);
  EXPECT_DOUBLE_EQ(tests[1].rows[9].time_us, 720048);
  EXPECT_EQ(tests[1].ranks, 4);
}

TEST(NcclTestsImport, Pre213ErrorColumnAndNoName) {
  const std::string log = fixture("all_gather_12xV100_pre2.13_failed.log");
  EXPECT_EQ(error_of(log),
            "log.txt:20: the log does not name its collective (nccl-tests before 2.13 prints no "
            "'Collective test starting' line); pass --collective");
  ImportOptions options;
  options.collective = "allgather";
  const auto tests = parse(log, options);
  ASSERT_EQ(tests.size(), 1u);
  const auto& rows = tests[0].rows;
  ASSERT_EQ(rows.size(), 31u);
  EXPECT_EQ(tests[0].ranks, 12);
  EXPECT_EQ(rows[0].bytes, 0u);  // zero-size rows kept
  EXPECT_EQ(rows[0].op, "none");
  EXPECT_EQ(rows[30].bytes, 8589934560u);
  EXPECT_DOUBLE_EQ(rows[30].time_us, 106773);
  EXPECT_EQ(rows[29].wrong, 1);  // error 1e+00: at least one wrong element
  EXPECT_EQ(rows[28].wrong, 0);
}

// Variants without a public log in tests/fixtures, written in the formats nccl-tests prints:
// mpirun --tag-output prefixes, NCCL INFO lines between rows, -I's per-iteration columns and a
// -S timestamp after the row.
TEST(NcclTestsImport, TagOutputInfoLinesAndPerIterationColumns) {
  const std::string log =
      "[1,0]<stdout>:# Collective test starting: all_reduce_perf\n"
      "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20\n"
      "[1,0]<stdout>:#  Rank  0 Group  0 Pid 11 on gpu-a device  0 [0000:1b:00] NVIDIA H100\n"
      "[1,1]<stdout>:#  Rank  1 Group  0 Pid 12 on gpu-b device  0 [0000:1b:00] NVIDIA H100\n"
      "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong    i_min    i_max    i_p99   i_cv%     time   algbw   busbw #wrong    i_min    i_max    i_p99   i_cv%\n"
      "gpu-a:11:11 [0] NCCL INFO Channel 00/32 : 0 1\n"
      "[1,0]<stdout>:        1024           256     float     sum      -1    10.50    0.10    0.10      0     9.80    14.20    13.90    5.1    10.40    0.10    0.10      0     9.70    14.00    13.80    5.0  2025-06-01T10:00:00\n"
      "[1,0]<stdout>:        2048           512     float     sum      -1    11.00    0.19    0.19      0     9.90    15.00    14.50    4.9    11.10    0.18    0.18      0     9.90    15.10    14.60    4.8  2025-06-01T10:00:01\n";
  const auto tests = parse(log);
  ASSERT_EQ(tests.size(), 1u);
  EXPECT_EQ(tests[0].hosts, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  ASSERT_EQ(tests[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(tests[0].rows[1].time_us, 11.0);
  EXPECT_DOUBLE_EQ(tests[0].rows[1].p99_us, 14.5);
  EXPECT_DOUBLE_EQ(tests[0].rows[1].max_us, 15.0);
  EXPECT_EQ(tests[0].rows[0].dtype, "float32");
}

TEST(NcclTestsImport, MalformedLinesNameTheLine) {
  const std::string head =
      "# Collective test starting: all_reduce_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
  EXPECT_EQ(error_of(head + "        1024           256     float     sum      -1    fast    0.10    0.10      0\n"),
            "log.txt:3: expected a number in column 'time', got 'fast'");
  EXPECT_EQ(error_of(head + "        1024           256     float\n"),
            "log.txt:3: expected at least 9 columns (size count type redop root time algbw busbw "
            "#wrong), got 3");
  EXPECT_EQ(error_of("        1024           256     float     sum\n"),
            "log.txt:1: a result row before any column header: '1024'");
  EXPECT_EQ(error_of("# nccl-tests version 2.17.8\n"), "log.txt: no nccl-tests result rows found");
}

TEST(Importers, DetectAndLookup) {
  EXPECT_EQ(detect_importer(fixture("all_reduce_8xH100_v2.17.8.log"), "f").name(), "nccl-tests");
  EXPECT_EQ(detect_importer(fixture("all_gather_12xV100_pre2.13_failed.log"), "f").name(),
            "nccl-tests");
  try {
    detect_importer("hello", "notes.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "notes.txt: not a log plumb can read (nccl-json, nccl-tests, hccl-test, osu); pass "
                           "--format if it is one");
  }
  EXPECT_EQ(find_importer("osu").name(), "osu");
  EXPECT_THROW(find_importer("nccl-yaml"), Error);
  EXPECT_EQ(plumb_dtype("half"), "float16");
  EXPECT_EQ(plumb_dtype("uint8"), "uint8");
}

}  // namespace
}  // namespace plumb::baseline
