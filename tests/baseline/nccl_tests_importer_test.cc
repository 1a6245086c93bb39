#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "baseline/store.h"
#include "cli/import_command.h"
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

// issue 10 group 6: a row that cannot have been measured is an Error naming file:line, the column
// and the value, and nothing of the file is returned.
const std::string kHead =
    "# Collective test starting: all_reduce_perf\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";

std::string one_row(const std::string& size, const std::string& type, const std::string& time,
                    const std::string& algbw, const std::string& busbw) {
  return kHead + "  " + size + "  256  " + type + "  sum  -1  " + time + "  " + algbw + "  " +
         busbw + "  0\n";
}

TEST(NcclTestsImport, NegativeNumbersNameTheLineColumnAndValue) {
  EXPECT_EQ(error_of(one_row("1024", "float", "-5.00", "0.10", "0.10")),
            "log.txt:3: column 'time': expected a time above 0 µs, got -5");
  EXPECT_EQ(error_of(one_row("-1024", "float", "10.50", "0.10", "0.10")),
            "log.txt:3: expected a whole number from 0 to 9223372036854775807 in column 'size', "
            "got '-1024'");
  EXPECT_EQ(error_of(one_row("1024", "float", "10.50", "-0.10", "0.10")),
            "log.txt:3: column 'algbw': expected a bandwidth not below 0 GB/s, got -0.1");
  EXPECT_EQ(error_of(one_row("1024", "float", "10.50", "0.10", "-0.10")),
            "log.txt:3: column 'busbw': expected a bandwidth not below 0 GB/s, got -0.1");
  EXPECT_EQ(error_of(kHead + "  1024  -256  float  sum  -1  10.50  0.10  0.10  0\n"),
            "log.txt:3: expected a whole number from 0 to 9223372036854775807 in column 'count', "
            "got '-256'");
  EXPECT_EQ(error_of(kHead + "  1024  256  float  sum  -1  10.50  0.10  0.10  -3\n"),
            "log.txt:3: expected a whole number from 0 to 9223372036854775807 in column '#wrong', "
            "got '-3'");
  EXPECT_EQ(error_of(kHead + "  1024  256  float  sum  -7  10.50  0.10  0.10  0\n"),
            "log.txt:3: expected a rank number (or -1) in column 'root', got '-7'");
}

TEST(NcclTestsImport, AnOverflowingRankNumberIsRefused) {
  const std::string log =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank 99999999999 Group  0 Pid 11 on gpu-a device  0 [0000:1b:00] NVIDIA H100\n";
  EXPECT_EQ(error_of(log),
            "log.txt:2: expected a rank number below 2147483647 after 'Rank', got '99999999999'");
}

TEST(NcclTestsImport, OverflowingSizeIsRefusedNotStoredAsZero) {
  EXPECT_EQ(error_of(one_row("99999999999999999999", "float", "10.50", "0.10", "0.10")),
            "log.txt:3: expected a whole number from 0 to 9223372036854775807 in column 'size', "
            "got '99999999999999999999'");
  // One above the store's signed 64-bit INTEGER, still a valid uint64.
  EXPECT_EQ(error_of(one_row("9223372036854775808", "float", "10.50", "0.10", "0.10")),
            "log.txt:3: expected a whole number from 0 to 9223372036854775807 in column 'size', "
            "got '9223372036854775808'");
  EXPECT_EQ(parse(one_row("9223372036854775807", "float", "10.50", "0.10", "0.10"))[0].rows[0].bytes,
            9223372036854775807u);
}

TEST(NcclTestsImport, ZeroTimeZeroBusbwNanAndInfAreRefused) {
  EXPECT_EQ(error_of(one_row("1024", "float", "0.00", "0.00", "0.00")),
            "log.txt:3: column 'time': expected a time above 0 µs, got 0");
  EXPECT_EQ(error_of(one_row("1048576", "float", "83.89", "12.50", "0.00")),
            "log.txt:3: column 'busbw': expected a busbw above 0 beside an algbw of 12.5 GB/s "
            "(busbw is at least half of algbw from 2 ranks on), got 0");
  EXPECT_EQ(error_of(one_row("1048576", "float", "83.89", "0.00", "0.00")),
            "log.txt:3: column 'busbw': expected a busbw above 0 for 1048576 bytes in 83.89 µs on "
            "more than one rank, got 0");
  EXPECT_EQ(error_of(one_row("1024", "float", "nan", "0.10", "0.10")),
            "log.txt:3: expected a number in column 'time', got 'nan'");
  EXPECT_EQ(error_of(one_row("1024", "float", "10.50", "inf", "0.10")),
            "log.txt:3: expected a number in column 'algbw', got 'inf'");
  EXPECT_EQ(error_of(one_row("1024", "float", "1e999", "0.10", "0.10")),
            "log.txt:3: expected a number in column 'time', got '1e999'");
  // Small sizes print 0.00 for both bandwidths: that is rounding, not an impossible row.
  EXPECT_DOUBLE_EQ(parse(one_row("8", "float", "20.10", "0.00", "0.00"))[0].rows[0].busbw_gbps, 0);
}

TEST(NcclTestsImport, UnknownCollectiveIsRefusedWithASuggestion) {
  const std::string rest =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    10.50    0.10    0.10      0\n";
  const std::string expected =
      "; expected one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv";
  EXPECT_EQ(error_of("# Collective test starting: frob_perf\n" + rest),
            "log.txt:1: unknown collective 'frob_perf'" + expected);
  EXPECT_EQ(error_of("# Collective test starting: all_reduse_perf\n" + rest),
            "log.txt:1: unknown collective 'all_reduse_perf' (did you mean 'allreduce'?)" + expected);
  EXPECT_EQ(error_of("# Collective test starting: hypercube_perf\n" + rest),
            "log.txt:1: unknown collective 'hypercube_perf'" + expected);
}

TEST(NcclTestsImport, UnknownDtypeIsRefusedListingTheKnownOnes) {
  const std::string expected =
      "; expected one of float32, float16, bfloat16, float64, int8, uint8, int32, uint32, int64, "
      "uint64, fp8_e4m3, fp8_e5m2";
  EXPECT_EQ(error_of(one_row("1024", "quaternion", "10.50", "0.10", "0.10")),
            "log.txt:3: column 'type': unknown data type 'quaternion'" + expected);
  EXPECT_EQ(error_of(one_row("1024", "flot", "10.50", "0.10", "0.10")),
            "log.txt:3: column 'type': unknown data type 'flot' (did you mean 'float'?)" +
                expected);
  EXPECT_EQ(parse(one_row("1024", "uint64", "10.50", "0.10", "0.10"))[0].rows[0].dtype, "uint64");
}

TEST(NcclTestsImport, UnknownReductionIsRefused) {
  EXPECT_EQ(error_of(kHead + "  1024  256  float  sun  -1  10.50  0.10  0.10  0\n"),
            "log.txt:3: column 'redop': unknown reduction 'sun' (did you mean 'sum'?); expected "
            "one of sum, prod, max, min, avg, mulsum, none");
  EXPECT_EQ(parse(kHead + "  1024  256  float  mulsum  -1  10.50  0.10  0.10  0\n")[0].rows[0].op,
            "mulsum");
}

TEST(NcclTestsImport, ByteOrderMarkAndCrlfLineEndings) {
  const std::string log = fixture("alltoall_sendrecv_4ranks_2nodes_mid2025.log");
  std::string crlf;
  for (char c : log) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  for (const std::string& variant : {"\xEF\xBB\xBF" + log, crlf, "\xEF\xBB\xBF" + crlf}) {
    const auto tests = parse(variant);
    ASSERT_EQ(tests.size(), 2u);
    EXPECT_EQ(tests[0].rows[0].collective, "alltoall");
    EXPECT_EQ(tests[0].hosts, (std::vector<std::string>{"cnode4-007", "cnode4-012"}));
    EXPECT_EQ(tests[1].line, 28);
    EXPECT_DOUBLE_EQ(tests[1].rows[9].time_us, 720048);
    EXPECT_EQ(tests[1].rows[9].wrong, 0);
  }
  EXPECT_EQ(detect_importer("\xEF\xBB\xBF" + log, "f").name(), "nccl-tests");
}

TEST(NcclTestsImport, HeaderWithoutBusbwNamesTheLine) {
  EXPECT_EQ(error_of("# Collective test starting: all_reduce_perf\n"
                     "#       size         count      type   redop    root     time   algbw "
                     "#wrong\n"
                     "        1024           256     float     sum      -1    10.50    0.10   0\n"),
            "log.txt:2: expected a 'busbw' column in the column header, got: size count type "
            "redop root time algbw #wrong");
  EXPECT_EQ(error_of("# Collective test starting: all_reduce_perf\n"
                     "#       size         count     redop    algbw\n"),
            "log.txt:2: expected the 'type', 'busbw', 'time' columns in the column header, got: "
            "size count redop algbw");
}

// A bad row in the second test of a file: parse() returns nothing at all.
TEST(NcclTestsImport, ABadRowLaterInTheFileReturnsNothing) {
  std::string log = fixture("alltoall_sendrecv_4ranks_2nodes_mid2025.log");
  const size_t at = log.find("720048");
  ASSERT_NE(at, std::string::npos);
  log.replace(at, 6, "-72004");
  EXPECT_EQ(error_of(log), "log.txt:49: column 'time': expected a time above 0 µs, got -72004");
}

// STYLE.md #8: every bad row of a file in one pass, then a structural problem stops it.
TEST(NcclTestsImport, EveryBadRowIsReportedInOnePass) {
  const std::string bad_time = "  1024  256  float  sum  -1  -5.00  0.10  0.10  0\n";
  const std::string bad_busbw = "  2048  512  float  sum  -1  10.50  0.20  -0.20  0\n";
  const std::string good = "  4096  1024  float  sum  -1  10.50  0.39  0.39  0\n";
  EXPECT_EQ(error_of(kHead + bad_time + good + bad_busbw),
            "log.txt:3: column 'time': expected a time above 0 µs, got -5\n"
            "log.txt:5: column 'busbw': expected a bandwidth not below 0 GB/s, got -0.2");
  EXPECT_EQ(error_of(kHead + bad_time + "# Collective test starting: frob_perf\n" + good),
            "log.txt:3: column 'time': expected a time above 0 µs, got -5\n"
            "log.txt:4: unknown collective 'frob_perf'; expected one of allreduce, allgather, "
            "reducescatter, alltoall, broadcast, reduce, sendrecv");
  std::string many = kHead;
  for (int i = 0; i < 25; ++i) many += bad_time;
  const std::string error = error_of(many);
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 20) << error;
  EXPECT_TRUE(error.ends_with("log.txt:22: column 'time': expected a time above 0 µs, got -5\n"
                              "(and 5 more problems)"))
      << error;
}

// plumb import of a file whose second test has an impossible row: an Error naming file:line, and
// the store holds nothing of the file (its first test was rolled back).
TEST(NcclTestsImport, ImportCommandStoresNothingOfABadFile) {
  const std::string dir = test::temp_dir("import-bad-row");
  std::string log = fixture("alltoall_sendrecv_4ranks_2nodes_mid2025.log");
  log.replace(log.find("720048"), 6, "-72004");
  test::write_file(dir + "/bad.log", log);
  cli::ImportCommandOptions o;
  o.files = {dir + "/bad.log"};
  o.db = dir + "/plumb.db";
  try {
    cli::run_import(o);
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              o.files[0] + ":49: column 'time': expected a time above 0 µs, got -72004");
  }
  EXPECT_TRUE(Store(o.db).list().empty());

  o.files = {dir + "/good.log"};
  test::write_file(o.files[0], fixture("all_gather_12xV100_pre2.13_failed.log"));
  o.collective = "all_gathr";
  try {
    cli::run_import(o);
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--collective: unknown collective 'all_gathr' (did you mean 'allgather'?); expected "
              "one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv");
  }
  EXPECT_TRUE(Store(o.db).list().empty());

  o.files = {dir};
  o.collective.clear();
  try {
    cli::run_import(o);
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": is a directory; expected a log file");
  }
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
  EXPECT_EQ(plumb_dtype("f8e4m3"), "fp8_e4m3");
  EXPECT_EQ(plumb_dtype("quaternion"), std::nullopt);
}

}  // namespace
}  // namespace plumb::baseline
