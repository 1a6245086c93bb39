// The comm probe source against a real plumb.comm/1 record (tests/fixtures/exporter/
// probe_comm_2ranks.json: `mpirun -np 2 plumb comm --collectives allreduce,allgather -b 1M -e 4M
// -f 4 -n 5 -w 1` on this project's CPU machine), through a probe command that prints it.
#include "exporter/probe_source.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baseline/record_json.h"
#include "baseline/store.h"
#include "common/json.h"
#include "families_helpers.h"
#include "exporter/series.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const std::string kRecord = std::string(PLUMB_TEST_FIXTURES) + "/exporter/probe_comm_2ranks.json";

ProbeSource probe(const std::string& command, double timeout = 10) {
  return ProbeSource({.host = "node-7", .command = command, .interval_seconds = 60,
                      .timeout_seconds = timeout, .log = {}, .now = {}});
}

TEST(ProbeSource, ExportsEveryRowsBusbwInBytesPerSecond) {
  ProbeSource p = probe("cat '" + kRecord + "'");
  const Families f = p.collect();
  // busbw_gbps × 1e9, per (layer, collective, bytes), labelled source="probe".
  EXPECT_DOUBLE_EQ(*test::value_of(f, series::kBusbw, {{"collective", "allreduce"},
                                                       {"bytes", "1048576"}}),
                   6.5185991964396175e9);
  EXPECT_DOUBLE_EQ(*test::value_of(f, series::kBusbw, {{"collective", "allgather"},
                                                       {"bytes", "4194304"}}),
                   6.594110505760253e9);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].samples.size(), 4u);
  EXPECT_EQ(*test::value_of(f, series::kSourceMalformed, {{"source", "probe"}}), 0);
  EXPECT_EQ(f[0].samples[0].labels,
            (Labels{{"host", "node-7"}, {"layer", "world"}, {"collective", "allgather"},
                    {"bytes", "1048576"}, {"source", "probe"}}));
}

TEST(ProbeSource, TheLowestGroupOfALayerIsExported) {
  comm::Row a;
  a.layer = "node";
  a.collective = "allreduce";
  a.bytes = 1 << 20;
  a.busbw_gbps = 150;
  comm::Row b = a;
  b.busbw_gbps = 90;  // the slow node: the one a job waits for
  const Families f = probe_families("h", {a, b});
  ASSERT_EQ(f[0].samples.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].samples[0].value, 90e9);
}

// Issue 28: a row no link can have (a busbw of 1.8e306 B/s) or of a layer plumb comm does not
// know is refused, counted and logged; the others are exported.
TEST(ProbeSource, ImpossibleRowsAreRefusedCountedAndLogged) {
  nlohmann::json doc = parse_json(plumb::test::read_file(kRecord), kRecord);
  doc["results"][0]["algbw_gbps"] = 1.8e297;
  doc["results"][0]["busbw_gbps"] = 1.8e297;
  doc["results"][2]["layer"] = "fabric";
  const std::string path = plumb::test::temp_dir("probe_impossible") + "/comm.json";
  plumb::test::write_file(path, doc.dump());
  std::vector<std::string> logged;
  ProbeSource p({.host = "node-7", .command = "cat '" + path + "'", .interval_seconds = 60,
                 .timeout_seconds = 10,
                 .log = [&](const std::string& line) { logged.push_back(line); },
                 .now = [] { return 1000.0; }});
  const Families f = p.collect();
  ASSERT_EQ(f[0].samples.size(), 2u);
  EXPECT_FALSE(test::value_of(f, series::kBusbw, {{"collective", "allreduce"},
                                                  {"bytes", "1048576"}}).has_value());
  EXPECT_DOUBLE_EQ(*test::value_of(f, series::kBusbw, {{"collective", "allgather"},
                                                       {"bytes", "4194304"}}),
                   6.594110505760253e9);
  EXPECT_EQ(*test::value_of(f, series::kSourceMalformed, {{"host", "node-7"}, {"source", "probe"}}),
            2);
  EXPECT_EQ(logged, std::vector<std::string>{
                        "probe: results[0] (allreduce, 1048576 bytes, layer world): a busbw of "
                        "1.8e+306 B/s (algbw 1.8e+306 B/s), above the 1e+14 B/s no link or memory "
                        "reaches (and 1 more refused row(s) since)"});
  EXPECT_EQ(checked_probe_rows(baseline::record_from_json(doc, "x").rows).refused[1],
            "probe: results[2].layer: unknown layer 'fabric'; expected one of world, node, rail, "
            "spine");
}

TEST(ProbeSource, EveryRowRefusedIsAFailedCollect) {
  nlohmann::json doc = parse_json(plumb::test::read_file(kRecord), kRecord);
  for (auto& row : doc["results"]) row["layer"] = "fabric";
  const std::string path = plumb::test::temp_dir("probe_all_refused") + "/comm.json";
  plumb::test::write_file(path, doc.dump());
  ProbeSource p({.host = "h", .command = "cat '" + path + "'", .interval_seconds = 60,
                 .timeout_seconds = 10, .log = [](const std::string&) {}, .now = {}});
  EXPECT_EQ(plumb::test::error_message([&] { p.collect(); }),
            "probe: every row of its plumb.comm/1 JSON was refused (4 in all)");
}

TEST(ProbeSource, ACommandThatFailsOrPrintsNoRecordIsOneMessage) {
  EXPECT_EQ(plumb::test::error_message([] { probe("echo not json").collect(); }),
            "probe: printed no plumb.comm/1 JSON: not valid JSON: parse error at line 1, column 2: "
            "syntax error while parsing value - invalid literal; last read: 'no'");
  EXPECT_EQ(plumb::test::error_message([] { probe("exit 3").collect(); }), "probe: exit 3");
  EXPECT_EQ(plumb::test::error_message([] { probe("echo '{\"results\": [1e999]}'").collect(); }),
            "probe: printed no plumb.comm/1 JSON: not valid JSON: number overflow parsing '1e999'");
  EXPECT_EQ(plumb::test::error_message([] { probe("sleep 30", 0.3).collect(); }),
            "probe: no answer within 0.3 s");
}

}  // namespace
}  // namespace plumb::exporter
