#include <gtest/gtest.h>

#include <cmath>

#include "baseline/importers/importer.h"
#include "common/error.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/" + name);
}

std::string error_of(const Importer& importer, const std::string& text, ImportOptions options) {
  try {
    importer.parse(text, "log.txt", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(OsuImport, DefaultColumns) {
  ImportOptions options;
  options.ranks = 4;
  const auto tests = osu_importer().parse(fixture("osu/osu_allreduce_v7.1_default.log"), "f", options);
  ASSERT_EQ(tests.size(), 1u);
  EXPECT_EQ(tests[0].tool, "OSU v7.1");
  ASSERT_EQ(tests[0].rows.size(), 25u);
  const comm::Row& last = tests[0].rows[24];
  EXPECT_EQ(last.collective, "allreduce");
  EXPECT_EQ(last.dtype, "int8");  // MPI_CHAR
  EXPECT_EQ(last.bytes, 16777216u);
  EXPECT_EQ(last.count, 16777216u);
  EXPECT_DOUBLE_EQ(last.time_us, 80172.36);
  // algbw = 16777216 / 1e9 / 80172.36e-6 = 0.20926 GB/s; busbw × 2·3/4
  EXPECT_NEAR(last.algbw_gbps, 0.209265, 1e-6);
  EXPECT_NEAR(last.busbw_gbps, 0.209265 * 1.5, 1e-6);
  EXPECT_TRUE(std::isnan(last.p99_us));
}

TEST(OsuImport, FullColumnsAndCudaTitle) {
  ImportOptions options;
  options.ranks = 2;
  const auto tests = osu_importer().parse(fixture("osu/osu_reduce_v7.3_full.log"), "f", options);
  ASSERT_EQ(tests[0].rows.size(), 11u);
  EXPECT_EQ(tests[0].rows[0].collective, "reduce");
  EXPECT_DOUBLE_EQ(tests[0].rows[10].time_us, 55.48);
  EXPECT_TRUE(std::isnan(tests[0].rows[10].max_us));  // OSU's max is across ranks' averages
  EXPECT_EQ(error_of(osu_importer(), fixture("osu/osu_reduce_v7.3_full.log"), {}),
            "log.txt: OSU logs do not say how many ranks ran, and busbw depends on it; pass --ranks");
  EXPECT_EQ(error_of(osu_importer(), "# OSU MPI Allreduce Latency Test v7.1\n64 fast\n", options),
            "log.txt:2: expected a number in column 'Avg Latency(us)', got 'fast'");
}

TEST(HcclTestImport, BothHeaderSpellings) {
  ImportOptions options;
  options.ranks = 8;
  options.collective = "allreduce";
  const auto doc = hccl_test_importer().parse(fixture("hccl_test/all_reduce_doc_example.log"), "f", options);
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0].command, "the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 5");
  ASSERT_EQ(doc[0].rows.size(), 14u);
  const comm::Row& last = doc[0].rows[13];
  EXPECT_EQ(last.bytes, 67108864u);
  EXPECT_DOUBLE_EQ(last.time_us, 2630.20);
  // recomputed in 1e9 B/s: 67108864 / 2630.20e-6 / 1e9 = 25.515 GB/s (the documentation's column
  // says 23.76, in GiB/s); busbw × 2·7/8
  EXPECT_NEAR(last.algbw_gbps, 25.5147, 1e-4);
  EXPECT_NEAR(last.busbw_gbps, 25.5147 * 1.75, 1e-3);
  EXPECT_EQ(last.wrong, 0);

  const auto current = hccl_test_importer().parse(fixture("hccl_test/current_format_line.log"), "f", options);
  ASSERT_EQ(current[0].rows.size(), 1u);
  EXPECT_NEAR(current[0].rows[0].algbw_gbps, 0.524288, 1e-9);  // the log's 0.52429
}

TEST(HcclTestImport, NeedsCollectiveAndRanks) {
  const std::string log = fixture("hccl_test/current_format_line.log");
  ImportOptions ranks_only;
  ranks_only.ranks = 8;
  EXPECT_EQ(error_of(hccl_test_importer(), log, ranks_only),
            "log.txt:1: hccl_test logs do not name their collective; pass --collective");
  ImportOptions both = ranks_only;
  both.collective = "allreduce";
  EXPECT_EQ(error_of(hccl_test_importer(),
                     "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
                     "1024 | 10.0 |\n",
                     both),
            "log.txt:2: expected 4 columns (data_size avg_time alg_bandwidth check_result), got 2");
}

// issue 10 group 6 for the tables whose bandwidths plumb computes: an impossible time or size,
// an unknown collective or MPI datatype is an Error naming file:line, and nothing is returned.
TEST(OsuImport, ImpossibleNumbersUnknownCollectiveAndDatatype) {
  ImportOptions options;
  options.ranks = 4;
  const std::string title = "# OSU MPI Allreduce Latency Test v7.1\n";
  EXPECT_EQ(error_of(osu_importer(), title + "64 -3.5\n", options),
            "log.txt:2: column 'Avg Latency(us)': expected a time above 0 µs, got -3.5");
  EXPECT_EQ(error_of(osu_importer(), title + "64 0.00\n", options),
            "log.txt:2: column 'Avg Latency(us)': expected a time above 0 µs, got 0");
  EXPECT_EQ(error_of(osu_importer(), title + "64 nan\n", options),
            "log.txt:2: expected a number in column 'Avg Latency(us)', got 'nan'");
  EXPECT_EQ(error_of(osu_importer(), title + "-64 3.5\n", options),
            "log.txt:2: expected a whole number from 0 to 9223372036854775807 in column 'Size', "
            "got '-64'");
  EXPECT_EQ(error_of(osu_importer(), title + "99999999999999999999 3.5\n", options),
            "log.txt:2: expected a whole number from 0 to 9223372036854775807 in column 'Size', "
            "got '99999999999999999999'");
  EXPECT_EQ(error_of(osu_importer(), "# OSU MPI Frob Latency Test v7.1\n64 3.5\n", options),
            "log.txt:1: unknown collective 'frob'; expected one of allreduce, allgather, "
            "reducescatter, alltoall, broadcast, reduce, sendrecv");
  EXPECT_EQ(error_of(osu_importer(), title + "# Datatype: MPI_QUATERNION.\n64 3.5\n", options),
            "log.txt:2: unknown data type 'MPI_QUATERNION'; expected one of float32, float16, "
            "bfloat16, float64, int8, uint8, int32, uint32, int64, uint64, fp8_e4m3, fp8_e5m2");
}

TEST(OsuImport, EveryBadRowInOnePass) {
  ImportOptions options;
  options.ranks = 4;
  EXPECT_EQ(error_of(osu_importer(), "# OSU MPI Allreduce Latency Test v7.1\n64 0\n128 2.5\n256 x\n",
                     options),
            "log.txt:2: column 'Avg Latency(us)': expected a time above 0 µs, got 0\n"
            "log.txt:4: expected a number in column 'Avg Latency(us)', got 'x'");
}

TEST(OsuImport, ByteOrderMarkAndCrlf) {
  ImportOptions options;
  options.ranks = 4;
  std::string log = "\xEF\xBB\xBF" + fixture("osu/osu_allreduce_v7.1_default.log");
  std::string crlf;
  for (char c : log) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(detect_importer(crlf, "f").name(), "osu");
  const auto tests = osu_importer().parse(crlf, "f", options);
  ASSERT_EQ(tests[0].rows.size(), 25u);
  EXPECT_DOUBLE_EQ(tests[0].rows[24].time_us, 80172.36);
}

TEST(HcclTestImport, ImpossibleNumbersAndByteOrderMark) {
  ImportOptions options;
  options.ranks = 8;
  options.collective = "allreduce";
  const std::string head =
      "data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n";
  EXPECT_EQ(error_of(hccl_test_importer(), head + "1024 | 0.00 | 0.00 | success\n", options),
            "log.txt:2: column 'avg_time(us)': expected a time above 0 µs, got 0");
  EXPECT_EQ(error_of(hccl_test_importer(), head + "1024 | -2.5 | 0.41 | success\n", options),
            "log.txt:2: column 'avg_time(us)': expected a time above 0 µs, got -2.5");
  EXPECT_EQ(error_of(hccl_test_importer(), head + "-1024 | 2.5 | 0.41 | success\n", options),
            "log.txt:2: expected a whole number from 0 to 9223372036854775807 in column "
            "'data_size(Bytes)', got '-1024'");
  EXPECT_EQ(error_of(hccl_test_importer(),
                     head + "1024 | 0 | 0 | success\n2048 | -1 | 0 | success\n", options),
            "log.txt:2: column 'avg_time(us)': expected a time above 0 µs, got 0\n"
            "log.txt:3: column 'avg_time(us)': expected a time above 0 µs, got -1");
  EXPECT_EQ(error_of(hccl_test_importer(), head + "1024 | 0 | 0 | success\n2048 | 1.0 |\n",
                     options),
            "log.txt:2: column 'avg_time(us)': expected a time above 0 µs, got 0\n"
            "log.txt:3: expected 4 columns (data_size avg_time alg_bandwidth check_result), got 2");
  const auto tests = hccl_test_importer().parse(
      "\xEF\xBB\xBF" + head + "1024 | 2.5 | 0.41 | success\r\n", "f", options);
  ASSERT_EQ(tests[0].rows.size(), 1u);
  EXPECT_EQ(tests[0].line, 1);
  EXPECT_NEAR(tests[0].rows[0].algbw_gbps, 0.4096, 1e-9);
}

TEST(Importers, DetectEveryFixture) {
  EXPECT_EQ(detect_importer(fixture("osu/osu_allreduce_v7.1_default.log"), "f").name(), "osu");
  EXPECT_EQ(detect_importer(fixture("osu/osu_reduce_v7.3_full.log"), "f").name(), "osu");
  EXPECT_EQ(detect_importer(fixture("hccl_test/all_reduce_doc_example.log"), "f").name(), "hccl-test");
  EXPECT_EQ(detect_importer(fixture("hccl_test/current_format_line.log"), "f").name(), "hccl-test");
}

}  // namespace
}  // namespace plumb::baseline
