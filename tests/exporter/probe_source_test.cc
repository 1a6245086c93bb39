// The comm probe source against a real plumb.comm/1 record (tests/fixtures/exporter/
// probe_comm_2ranks.json: `mpirun -np 2 plumb comm --collectives allreduce,allgather -b 1M -e 4M
// -f 4 -n 5 -w 1` on this project's CPU machine), through a probe command that prints it.
#include "exporter/probe_source.h"

#include <gtest/gtest.h>

#include "baseline/store.h"
#include "families_helpers.h"
#include "exporter/series.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

const std::string kRecord = std::string(PLUMB_TEST_FIXTURES) + "/exporter/probe_comm_2ranks.json";

ProbeSource probe(const std::string& command, double timeout = 10) {
  return ProbeSource({.host = "node-7", .command = command, .interval_seconds = 60,
                      .timeout_seconds = timeout});
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
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].samples.size(), 4u);
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
