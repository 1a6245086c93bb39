#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <sstream>

#include "baseline/importers/importer.h"
#include "common/error.h"
#include "report/comm_reporter.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

using json = nlohmann::json;

// Written in the format of nccl-tests' src/util.cu, not captured from a run
// (tests/fixtures/README.md).
std::string fixture(const std::string& name) {
  return test::read_file(std::string(PLUMB_TEST_FIXTURES) + "/nccl-tests/" + name);
}

const std::string kAllReduce = "all_reduce_8ranks_2hosts_v2.json";
const std::string kAlltoall = "alltoall_4ranks_2hosts_wrong_v1.json";

std::vector<ImportedTest> parse(const std::string& text, ImportOptions options = {}) {
  return nccl_tests_json_importer().parse(text, "run.json", options);
}

std::string error_of(const std::string& text, ImportOptions options = {}) {
  try {
    parse(text, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// The all_reduce fixture with one edit.
std::string edited(const std::function<void(json&)>& edit) {
  json doc = json::parse(fixture(kAllReduce));
  edit(doc);
  return doc.dump();
}

TEST(NcclJsonImport, AllReduce8Ranks2HostsEveryNumber) {
  const auto tests = parse(fixture(kAllReduce));
  ASSERT_EQ(tests.size(), 1u);
  const ImportedTest& t = tests[0];
  EXPECT_EQ(t.tool, "nccl-tests, NCCL 2.27.3");
  EXPECT_EQ(t.command,
            "/opt/nccl-tests/build/all_reduce_perf -b 1M -e 1G -f 4 -g 1 -J "
            "/shared/results/allreduce_8x.json");
  EXPECT_EQ(t.ranks, 8);  // 8 processes x 1 thread x 1 GPU
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"gpu-node-01", "gpu-node-02"}));
  EXPECT_EQ(t.line, 1);
  struct Expected {
    uint64_t size, count;
    double time, algbw, busbw;
  };
  const std::vector<Expected> expected = {
      {1048576, 262144, 46.338737, 22.628498, 39.599871},
      {4194304, 1048576, 67.838000, 61.828238, 108.199416},
      {16777216, 4194304, 126.826041, 132.285262, 231.499208},
      {67108864, 16777216, 356.096982, 188.456705, 329.799234},
      {268435456, 67108864, 1278.612946, 209.942701, 367.399728},
      {1073741824, 268435456, 4920.262398, 218.228569, 381.899996},
  };
  ASSERT_EQ(t.rows.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    const comm::Row& r = t.rows[i];
    EXPECT_EQ(r.layer, "world");
    EXPECT_EQ(r.group, "world");
    EXPECT_EQ(r.group_ranks, 8);
    EXPECT_EQ(r.collective, "allreduce");
    EXPECT_EQ(r.dtype, "float32");
    EXPECT_EQ(r.op, "sum");
    EXPECT_EQ(r.root, -1);
    EXPECT_EQ(r.bytes, expected[i].size);
    EXPECT_EQ(r.requested_bytes, expected[i].size);
    EXPECT_EQ(r.count, expected[i].count);
    EXPECT_DOUBLE_EQ(r.time_us, expected[i].time);  // out-of-place, as printed
    EXPECT_DOUBLE_EQ(r.algbw_gbps, expected[i].algbw);
    EXPECT_DOUBLE_EQ(r.busbw_gbps, expected[i].busbw);
    EXPECT_EQ(r.wrong, 0);
    EXPECT_TRUE(std::isnan(r.p50_us));  // no -I: no per-iteration figures
    EXPECT_TRUE(std::isnan(r.p99_us));
    EXPECT_TRUE(std::isnan(r.max_us));
    EXPECT_EQ(r.straggler, -1);
  }
}

TEST(NcclJsonImport, AlltoallOneEntryPerProcessWrongElementsAndVersion1) {
  const auto tests = parse(fixture(kAlltoall));
  ASSERT_EQ(tests.size(), 1u);
  const ImportedTest& t = tests[0];
  EXPECT_EQ(t.tool, "nccl-tests, NCCL 2.26.2");
  EXPECT_EQ(t.ranks, 4);  // 2 processes (one devices entry each) x 2 GPUs
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"cnode4-007", "cnode4-012"}));
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[0].collective, "alltoall");
  EXPECT_EQ(t.rows[0].op, "none");
  EXPECT_EQ(t.rows[0].dtype, "float64");
  EXPECT_EQ(t.rows[0].bytes, 8388608u);
  EXPECT_EQ(t.rows[0].count, 262144u);
  EXPECT_EQ(t.rows[0].group_ranks, 4);
  EXPECT_EQ(t.rows[3].bytes, 67108864u);
  EXPECT_DOUBLE_EQ(t.rows[3].time_us, 1091.793226);
  EXPECT_DOUBLE_EQ(t.rows[3].busbw_gbps, 46.099982);
  EXPECT_EQ(t.rows[3].wrong, 131072);  // out-of-place nwrong; in-place's is null
  EXPECT_EQ(t.rows[4].wrong, 0);
}

TEST(NcclJsonImport, OptionsRanksAndCollective) {
  ImportOptions options;
  options.ranks = 16;
  EXPECT_EQ(parse(fixture(kAllReduce), options)[0].rows[0].group_ranks, 16);

  const std::string renamed = edited([](json& d) { d["args"][0] = "/usr/bin/mybench"; });
  EXPECT_EQ(error_of(renamed),
            "run.json: args[0]: \"/usr/bin/mybench\" is not an nccl-tests binary "
            "(<collective>_perf); pass --collective");
  options.collective = "allgather";
  EXPECT_EQ(parse(renamed, options)[0].rows[0].collective, "allgather");
}

// Variants the fixtures do not show, in the shapes util.cu writes them: -I's per-iteration
// object, -C's cpu_time, -c 0's null nwrong, a root as a number.
TEST(NcclJsonImport, PerIterationCpuTimeUncheckedAndRoot) {
  const std::string text = edited([](json& d) {
    json& r = d["results"][0];
    r["out_of_place_per_iter"] = {{"min_us", 40.1}, {"max_us", 61.5}, {"avg_us", 46.3},
                                  {"p50_us", 45.9}, {"p95_us", 55.0}, {"p99_us", 60.2},
                                  {"times_us", {40.1, 61.5}}};
    r["out_of_place"]["nwrong"] = nullptr;
    json& second = d["results"][1]["out_of_place"];
    second["cpu_time"] = second["time"];
    second.erase("time");
    d["results"][2]["root"] = 3;
    d["results"][3]["root"] = "     0";
  });
  const auto rows = parse(text)[0].rows;
  EXPECT_DOUBLE_EQ(rows[0].p50_us, 45.9);
  EXPECT_DOUBLE_EQ(rows[0].p99_us, 60.2);
  EXPECT_DOUBLE_EQ(rows[0].max_us, 61.5);
  EXPECT_EQ(rows[0].wrong, -1);
  EXPECT_DOUBLE_EQ(rows[1].time_us, 67.838);
  EXPECT_EQ(rows[2].root, 3);
  EXPECT_EQ(rows[3].root, 0);
}

TEST(NcclJsonImport, MalformedEntriesNameTheirJsonPath) {
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][3]["out_of_place"]["bus_bw"] = "fast"; })),
            "run.json: results[3].out_of_place.bus_bw: expected a number, got \"fast\"");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][0]["out_of_place"]["time"] = "nan"; })),
            "run.json: results[0].out_of_place.time: expected a number, got \"nan\"");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][5].erase("count"); })),
            "run.json: results[5].count: missing");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][1]["size"] = -8; })),
            "run.json: results[1].size: expected a whole number from 0 to 9223372036854775807, "
            "got -8");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["root"] = "root"; })),
            "run.json: results[2].root: expected a rank number, got \"root\"");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][4]["out_of_place"]["nwrong"] = 1.5; })),
            "run.json: results[4].out_of_place.nwrong: expected a count, got 1.5");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][0]["out_of_place"] = nullptr; })),
            "run.json: results[0].out_of_place: null: this row has only an in-place result, and "
            "plumb imports the out-of-place half");
  EXPECT_EQ(error_of(edited([](json& d) { d["config"]["devices"][7].erase("hostname"); })),
            "run.json: config.devices[7].hostname: missing");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][0]["out_of_place_per_iter"] = 7; })),
            "run.json: results[0].out_of_place_per_iter: expected an object, got 7");
}

// issue 10 group 6: a result that cannot have been measured is an Error naming the file and the
// result's JSON path and value; parse() returns nothing.
TEST(NcclJsonImport, NegativeZeroAndNonFiniteNumbersNameTheirPath) {
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["out_of_place"]["time"] = -46.5; })),
            "run.json: results[2].out_of_place.time: expected a time above 0 µs, got -46.5");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["out_of_place"]["time"] = 0.0; })),
            "run.json: results[2].out_of_place.time: expected a time above 0 µs, got 0");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][4]["out_of_place"]["alg_bw"] = -1.5; })),
            "run.json: results[4].out_of_place.alg_bw: expected a bandwidth not below 0 GB/s, "
            "got -1.5");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][4]["out_of_place"]["bus_bw"] = -1.5; })),
            "run.json: results[4].out_of_place.bus_bw: expected a bandwidth not below 0 GB/s, "
            "got -1.5");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][4]["out_of_place"]["bus_bw"] = 0.0; })),
            "run.json: results[4].out_of_place.bus_bw: expected a busbw above 0 beside an algbw "
            "of 209.942701 GB/s (busbw is at least half of algbw from 2 ranks on), got 0");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][0]["out_of_place"]["time"] = "inf"; })),
            "run.json: results[0].out_of_place.time: expected a number, got \"inf\"");
  EXPECT_EQ(error_of(edited([](json& d) {
              d["results"][0]["out_of_place_per_iter"] = {
                  {"p50_us", 45.9}, {"p99_us", -60.2}, {"max_us", 61.5}};
            })),
            "run.json: results[0].out_of_place_per_iter.p99_us: expected a time above 0 µs, got "
            "-60.2");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][3]["out_of_place"]["nwrong"] = -2; })),
            "run.json: results[3].out_of_place.nwrong: expected a count, got -2");
}

TEST(NcclJsonImport, EveryBadResultIsReportedInOnePass) {
  EXPECT_EQ(error_of(edited([](json& d) {
              d["results"][1]["out_of_place"]["time"] = -1.0;
              d["results"][4]["type"] = "quaternion";
              d["results"][5].erase("count");
            })),
            "run.json: results[1].out_of_place.time: expected a time above 0 µs, got -1\n"
            "run.json: results[4].type: unknown data type 'quaternion'; expected one of float32, "
            "float16, bfloat16, float64, int8, uint8, int32, uint32, int64, uint64, fp8_e4m3, "
            "fp8_e5m2\n"
            "run.json: results[5].count: missing");
}

TEST(NcclJsonImport, OverflowingSizesAreRefusedNotStoredAsZero) {
  const std::string expected = "expected a whole number from 0 to 9223372036854775807, got ";
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][1]["size"] = 18446744073709551615u; })),
            "run.json: results[1].size: " + expected + "18446744073709551615");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][1]["size"] = 9223372036854775808u; })),
            "run.json: results[1].size: " + expected + "9223372036854775808");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][1]["count"] = 1e30; })),
            "run.json: results[1].count: " + expected + "1e+30");
}

TEST(NcclJsonImport, UnknownCollectiveAndDtypeAreRefused) {
  EXPECT_EQ(error_of(edited([](json& d) { d["args"][0] = "/opt/nccl-tests/build/frob_perf"; })),
            "run.json: args[0]: unknown collective 'frob_perf'; expected one of allreduce, "
            "allgather, reducescatter, alltoall, broadcast, reduce, sendrecv");
  ImportOptions options;
  options.collective = "allreduce";  // names a binary nccl-tests does not have: still refused
  EXPECT_EQ(error_of(edited([](json& d) { d["args"][0] = "gather_perf"; }), options),
            "run.json: args[0]: unknown collective 'gather_perf'; expected one of allreduce, allgather, reducescatter, alltoall, broadcast, reduce, "
            "sendrecv");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["type"] = "quaternion"; })),
            "run.json: results[2].type: unknown data type 'quaternion'; expected one of float32, "
            "float16, bfloat16, float64, int8, uint8, int32, uint32, int64, uint64, fp8_e4m3, "
            "fp8_e5m2");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["type"] = 7; })),
            "run.json: results[2].type: expected a string, got 7");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"][2]["redop"] = "xor"; })),
            "run.json: results[2].redop: unknown reduction 'xor'; expected one of sum, prod, max, "
            "min, avg, mulsum, none");
}

TEST(NcclJsonImport, ByteOrderMarkAndCrlf) {
  std::string text = fixture(kAllReduce);
  const std::string with_bom = "\xEF\xBB\xBF" + json::parse(text).dump(2);
  std::string crlf;
  for (char c : with_bom) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(detect_importer(crlf, "f").name(), "nccl-json");
  const auto tests = parse(crlf);
  ASSERT_EQ(tests.size(), 1u);
  ASSERT_EQ(tests[0].rows.size(), 6u);
  EXPECT_DOUBLE_EQ(tests[0].rows[5].busbw_gbps, 381.899996);
}

TEST(NcclJsonImport, NotJsonEmptyAndUnfinished) {
  const std::string not_json =
      "run.json: not a JSON object (nccl-tests -J writes one; a run that was killed leaves it "
      "unfinished)";
  EXPECT_EQ(error_of("# nccl-tests version 2.17.8\n"), not_json);
  EXPECT_EQ(error_of(""), not_json);
  const std::string whole = fixture(kAllReduce);
  EXPECT_EQ(error_of(whole.substr(0, whole.size() / 2)), not_json);
  EXPECT_EQ(error_of("{\"schema\": \"plumb.comm/1\"}"),
            "run.json: a JSON object without the keys nccl-tests -J writes (args, nccl_version, "
            "config)");
  EXPECT_EQ(error_of(edited([](json& d) { d["results"] = json::array(); })),
            "run.json: results: no result rows");
  EXPECT_EQ(error_of(edited([](json& d) { d.erase("results"); })),
            "run.json: results: missing (the run stopped before its first row)");
}

TEST(NcclJsonImport, DetectsOnlyNcclTestsJson) {
  const Importer& json_importer = nccl_tests_json_importer();
  EXPECT_TRUE(json_importer.detect(fixture(kAllReduce)));
  EXPECT_TRUE(json_importer.detect(fixture(kAlltoall)));
  EXPECT_EQ(detect_importer(fixture(kAllReduce), "f").name(), "nccl-json");
  EXPECT_EQ(detect_importer(fixture(kAlltoall), "f").name(), "nccl-json");
  EXPECT_EQ(find_importer("nccl-json").name(), "nccl-json");
  // The text logs still go to the text importer, and plumb's own JSON to neither.
  for (const char* log : {"all_reduce_8xH100_v2.17.8.log", "all_gather_12xV100_pre2.13_failed.log",
                          "alltoall_sendrecv_4ranks_2nodes_mid2025.log"}) {
    EXPECT_FALSE(json_importer.detect(fixture(log))) << log;
    EXPECT_EQ(detect_importer(fixture(log), "f").name(), "nccl-tests") << log;
  }
  comm::Result result;
  result.backend = "mpi";
  result.ranks = 2;
  result.hosts = {"h0"};
  std::ostringstream plumb_json;
  report::CommJsonReporter().report(result, plumb_json);
  EXPECT_FALSE(json_importer.detect(plumb_json.str()));
  EXPECT_FALSE(nccl_tests_text_importer().detect(fixture(kAllReduce)));
  EXPECT_FALSE(json_importer.detect("{\"nccl_version\": 22703}"));
  EXPECT_FALSE(json_importer.detect("[1, 2]"));
}

}  // namespace
}  // namespace plumb::baseline
