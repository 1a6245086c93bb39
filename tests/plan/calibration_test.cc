#include "plan/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "baseline/store.h"
#include "cli/record_source.h"
#include "common/error.h"
#include "common/units.h"
#include "plan/hardware.h"

namespace plumb::plan {
namespace {

// What plumb plan --calibrate does with a stored record.
Calibration from_record(const baseline::Record& r) {
  return Calibration::from_measurement({cli::describe_record(r), r.hosts.size(), r.rows});
}

comm::Row row(const std::string& layer, const std::string& group, int ranks,
              const std::string& collective, uint64_t bytes, double busbw) {
  comm::Row r;
  r.layer = layer;
  r.group = group;
  r.group_ranks = ranks;
  r.collective = collective;
  r.dtype = "float";
  r.requested_bytes = r.bytes = bytes;
  r.busbw_gbps = busbw;
  return r;
}

baseline::Record record(std::vector<std::string> hosts, std::vector<comm::Row> rows) {
  baseline::Record r;
  r.id = 3;
  r.created = "2026-12-02T16:39:32Z";
  r.label = "nightly";
  r.hosts = std::move(hosts);
  r.rows = std::move(rows);
  return r;
}

// node allreduce on one host of 8 ranks: 10 GB/s at 1 MiB, 20 GB/s at 4 MiB.
Calibration node_allreduce() {
  return from_record(
      record({"h0"}, {row("node", "h0", 8, "allreduce", kMiB, 10),
                      row("node", "h0", 8, "allreduce", 4 * kMiB, 20)}));
}

TEST(Calibration, ExactAtAMeasuredPoint) {
  const Calibration c = node_allreduce();
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), 10.0);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 4.0 * kMiB), 20.0);
  EXPECT_EQ(c.estimate(NetLayer::kNode, "allreduce", 4.0 * kMiB)->region, CurveRegion::kMeasured);
}

// 2 MiB is halfway between 1 MiB and 4 MiB in log(size): log(2/1) / log(4/1) = 1/2, so
// 10 + (20 − 10) / 2 = 15 GB/s.
TEST(Calibration, InterpolatesLinearlyInLogSize) {
  const Calibration c = node_allreduce();
  EXPECT_DOUBLE_EQ(*c.busbw_gbps(NetLayer::kNode, "allreduce", 2.0 * kMiB), 15.0);
  EXPECT_EQ(c.estimate(NetLayer::kNode, "allreduce", 2.0 * kMiB)->region,
            CurveRegion::kInterpolated);
}

// Above 4 MiB the bandwidth has saturated: 20 GB/s at 64 MiB.
TEST(Calibration, ClampsAboveTheLargestSize) {
  const Calibration c = node_allreduce();
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 64.0 * kMiB), 20.0);
  EXPECT_EQ(c.estimate(NetLayer::kNode, "allreduce", 64.0 * kMiB)->region,
            CurveRegion::kAboveRange);
}

// Below 1 MiB the time of 1 MiB is kept: 256 KiB at 10 · 256/1024 = 2.5 GB/s, 1 KiB at
// 10/1024 GB/s; S·f/busbw is the same time for both.
TEST(Calibration, ScalesWithSizeBelowTheSmallestSize) {
  const Calibration c = node_allreduce();
  EXPECT_DOUBLE_EQ(*c.busbw_gbps(NetLayer::kNode, "allreduce", 256.0 * kKiB), 2.5);
  EXPECT_DOUBLE_EQ(*c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kKiB), 10.0 / 1024);
  EXPECT_EQ(c.estimate(NetLayer::kNode, "allreduce", 1.0 * kKiB)->region, CurveRegion::kBelowRange);
}

TEST(Calibration, NonPositiveSizeHasNoEstimate) {
  const Calibration c = node_allreduce();
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 0), std::nullopt);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", std::nan("")), std::nullopt);
}

// Two rail groups at once: a step waits for the slower one at each size, whichever it is.
TEST(Calibration, SlowestGroupWins) {
  const Calibration c = from_record(
      record({"h0", "h1"}, {row("rail", "rail0", 2, "allreduce", kMiB, 12),
                            row("rail", "rail1", 2, "allreduce", kMiB, 8),
                            row("rail", "rail0", 2, "allreduce", 4 * kMiB, 30),
                            row("rail", "rail1", 2, "allreduce", 4 * kMiB, 40)}));
  EXPECT_EQ(c.busbw_gbps(NetLayer::kRail, "allreduce", 1.0 * kMiB), 8.0);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kRail, "allreduce", 4.0 * kMiB), 30.0);
  const Curve& curve = c.curves().at({NetLayer::kRail, "allreduce"});
  EXPECT_EQ(curve.groups, 2);
  EXPECT_EQ(curve.group_ranks, 2);
}

TEST(Calibration, SkipsRowsWithoutABandwidth) {
  const Calibration c = from_record(record(
      {"h0"},
      {row("node", "h0", 8, "allreduce", kMiB, 10), row("node", "h0", 8, "allreduce", 2 * kMiB, 0),
       row("node", "h0", 8, "allreduce", 4 * kMiB, std::numeric_limits<double>::quiet_NaN()),
       row("node", "h0", 8, "allreduce", 8 * kMiB, -1),
       row("node", "h0", 8, "allreduce", 16 * kMiB, std::numeric_limits<double>::infinity())}));
  EXPECT_EQ(c.curves().at({NetLayer::kNode, "allreduce"}).points.size(), 1u);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 4.0 * kMiB), 10.0);
}

// Imported records may carry only the measured size.
TEST(Calibration, UsesTheMeasuredSizeWhenNoneWasRequested) {
  comm::Row r = row("node", "h0", 8, "allreduce", kMiB, 10);
  r.requested_bytes = 0;
  const Calibration c = from_record(record({"h0"}, {r}));
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), 10.0);
}

TEST(Calibration, WorldOnOneHostIsTheNode) {
  const Calibration c =
      from_record(record({"h0"}, {row("world", "world", 8, "allreduce", kMiB, 10)}));
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), 10.0);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kSpine, "allreduce", 1.0 * kMiB), std::nullopt);
  EXPECT_EQ(c.curves().at({NetLayer::kNode, "allreduce"}).measured_on, "world");
}

TEST(Calibration, NodeRowsWinOverWorldOnOneHost) {
  const Calibration c =
      from_record(record({"h0"}, {row("world", "world", 8, "allreduce", kMiB, 5),
                                               row("node", "h0", 8, "allreduce", kMiB, 10)}));
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), 10.0);
}

TEST(Calibration, WorldOnSeveralHostsIsTheSpineWhenNoSpineWasMeasured) {
  const Calibration c = from_record(
      record({"h0", "h1"}, {row("world", "world", 16, "allreduce", kMiB, 7),
                            row("node", "h0", 8, "allreduce", kMiB, 10)}));
  EXPECT_EQ(c.busbw_gbps(NetLayer::kSpine, "allreduce", 1.0 * kMiB), 7.0);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), 10.0);

  const Calibration with_spine = from_record(
      record({"h0", "h1"}, {row("world", "world", 16, "allreduce", kMiB, 7),
                            row("spine", "spine0", 2, "allreduce", kMiB, 9)}));
  EXPECT_EQ(with_spine.busbw_gbps(NetLayer::kSpine, "allreduce", 1.0 * kMiB), 9.0);
  EXPECT_EQ(with_spine.busbw_gbps(NetLayer::kNode, "allreduce", 1.0 * kMiB), std::nullopt);
}

TEST(Calibration, UnmeasuredCollectiveOrLayerHasNoEstimate) {
  const Calibration c = node_allreduce();
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "alltoall", 1.0 * kMiB), std::nullopt);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "bogus", 1.0 * kMiB), std::nullopt);
  EXPECT_EQ(c.busbw_gbps(NetLayer::kRail, "allreduce", 1.0 * kMiB), std::nullopt);
}

TEST(Calibration, AllgatherAndReducescatterStandInForEachOther) {
  const Calibration c = from_record(
      record({"h0", "h1"}, {row("node", "h0", 8, "allgather", kMiB, 11),
                            row("rail", "rail0", 2, "reducescatter", kMiB, 6)}));
  const auto rs = c.estimate(NetLayer::kNode, "reducescatter", 1.0 * kMiB);
  ASSERT_TRUE(rs.has_value());
  EXPECT_EQ(rs->busbw_gbps, 11.0);
  EXPECT_TRUE(rs->substitute);
  EXPECT_EQ(rs->collective, "allgather");
  const auto ag = c.estimate(NetLayer::kRail, "allgather", 1.0 * kMiB);
  ASSERT_TRUE(ag.has_value());
  EXPECT_EQ(ag->busbw_gbps, 6.0);
  EXPECT_TRUE(ag->substitute);
  const auto own = c.estimate(NetLayer::kNode, "allgather", 1.0 * kMiB);
  ASSERT_TRUE(own.has_value());
  EXPECT_FALSE(own->substitute);
  // A ring allreduce is a reduce-scatter then an allgather: their busbw stands in for it.
  const auto ar = c.estimate(NetLayer::kNode, "allreduce", 1.0 * kMiB);
  ASSERT_TRUE(ar.has_value());
  EXPECT_EQ(ar->busbw_gbps, 11.0);
  EXPECT_EQ(ar->collective, "allgather");
  EXPECT_EQ(c.busbw_gbps(NetLayer::kNode, "alltoall", 1.0 * kMiB), std::nullopt);
}

// An nccl-tests all_reduce log alone still calibrates TP's allgather and reduce-scatter; a
// measured allgather wins over the allreduce for its own collective's stand-in.
TEST(Calibration, AllreduceStandsInForTheRingHalves) {
  const Calibration only = from_record(
      record({"h0"}, {row("node", "h0", 8, "allreduce", kMiB, 150)}));
  const auto rs = only.estimate(NetLayer::kNode, "reducescatter", 1.0 * kMiB);
  ASSERT_TRUE(rs.has_value());
  EXPECT_EQ(rs->busbw_gbps, 150.0);
  EXPECT_EQ(rs->collective, "allreduce");
  EXPECT_TRUE(rs->substitute);
  const Calibration both = from_record(record(
      {"h0"}, {row("node", "h0", 8, "allreduce", kMiB, 150), row("node", "h0", 8, "allgather", kMiB, 120)}));
  EXPECT_EQ(both.estimate(NetLayer::kNode, "reducescatter", 1.0 * kMiB)->collective, "allgather");
}

TEST(Calibration, RecordWithoutMeasurementsIsAnError) {
  try {
    from_record(record({"h0"}, {}));
    FAIL() << "expected plumb::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "baseline 3 · 2026-12-02T16:39:32Z · nightly: no collective measurements to "
                 "calibrate from");
  }
  // Rows that calibrate nothing count as none: a layer plumb does not know, a zero busbw.
  EXPECT_THROW(
      from_record(record({"h0"}, {row("rack", "r0", 8, "allreduce", kMiB, 10),
                                               row("node", "h0", 8, "allreduce", kMiB, 0)})),
      Error);
}

TEST(Calibration, DescribesAnUnstoredRecordByItsSource) {
  baseline::Record r;
  r.source = "nccl-tests run.log";
  r.created = "2026-12-02T16:39:32Z";
  EXPECT_EQ(cli::describe_record(r), "nccl-tests run.log · 2026-12-02T16:39:32Z");
  EXPECT_EQ(node_allreduce().source(), "baseline 3 · 2026-12-02T16:39:32Z · nightly");
}

TEST(Calibration, SaysWhatWasMeasured) {
  std::vector<comm::Row> rows;
  for (uint64_t bytes = kKiB; bytes <= 16 * kMiB; bytes *= 2) {
    rows.push_back(row("node", "h0", 8, "allreduce", bytes, 10));
  }
  rows.push_back(row("world", "world", 16, "allgather", kMiB, 3));
  rows.push_back(row("rail", "rail0", 2, "alltoall", kMiB, 4));
  rows.push_back(row("rail", "rail1", 2, "alltoall", kMiB, 5));
  const Calibration c = from_record(record({"h0", "h1"}, rows));
  const std::vector<std::string> expected = {
      "node allreduce: 15 sizes 1 KiB–16 MiB, 8 ranks, slowest of 1 group(s)",
      "rail alltoall: 1 size 1 MiB, 2 ranks, slowest of 2 group(s)",
      "spine allgather (world layer): 1 size 1 MiB, 16 ranks, slowest of 1 group(s)",
  };
  EXPECT_EQ(c.measured(), expected);
}

// plan::Network asks by Collective; the bytes→busbw answer is the same curve.
TEST(Calibration, FeedsTheNetworkModel) {
  const MeasuredBusbw measured = node_allreduce().as_measured_busbw();
  EXPECT_DOUBLE_EQ(*measured(NetLayer::kNode, Collective::kAllReduce, 2.0 * kMiB), 15.0);
  EXPECT_EQ(measured(NetLayer::kNode, Collective::kAllToAll, 2.0 * kMiB), std::nullopt);
}

// A 2-rank MPI baseline on CPUs calibrating a 1024-device H100 plan: one line says so.
TEST(Calibration, AnotherBackendDeviceKindOrWorldSizeIsWarnedInOneLine) {
  baseline::Record r = record({"h0"}, {row("world", "world", 2, "allreduce", 1 << 20, 0.4)});
  r.comm = {{"backend", "mpi"}, {"ranks", 2}};
  const Calibration c = Calibration::from_measurement(
      {cli::describe_record(r), r.hosts.size(), r.rows, comm::measured_on(r.comm)});
  const HardwareSpec h100 = load_hardware(PLUMB_DATA_DIR "/hardware/h100-sxm.yaml");
  EXPECT_EQ(c.mismatch(h100, 1024),
            "--calibrate baseline 3 · 2026-12-02T16:39:32Z · nightly was measured on another "
            "backend (MPI, not NCCL), device kind (CPU, not GPU) and world size (2 ranks, not "
            "1024) than this plan for NVIDIA H100 SXM: its busbw may not hold for the plan's "
            "links");
  // plumb plan scale: several device counts, the world size is not compared.
  EXPECT_EQ(c.mismatch(h100, 0),
            "--calibrate baseline 3 · 2026-12-02T16:39:32Z · nightly was measured on another "
            "backend (MPI, not NCCL) and device kind (CPU, not GPU) than this plan for NVIDIA "
            "H100 SXM: its busbw may not hold for the plan's links");
  const HardwareSpec ascend = load_hardware(PLUMB_DATA_DIR "/hardware/ascend-910c.yaml");
  EXPECT_EQ(hardware_kind(ascend).library, "HCCL");
  EXPECT_EQ(hardware_kind(ascend).device, "Ascend NPU");
}

TEST(Calibration, ASameKindOfMachineOrAnUnknownOneIsNotWarned) {
  baseline::Record r = record({"h0"}, {row("node", "h0", 8, "allreduce", 1 << 20, 300)});
  r.comm = {{"backend", "nccl-tests"}, {"ranks", 64}};
  const HardwareSpec h100 = load_hardware(PLUMB_DATA_DIR "/hardware/h100-sxm.yaml");
  const auto from = [&](const nlohmann::json& comm) {
    return Calibration::from_measurement(
        {cli::describe_record(r), r.hosts.size(), r.rows, comm::measured_on(comm)});
  };
  EXPECT_EQ(from(r.comm).mismatch(h100, 64), "");
  // OSU (host or device buffers), a record without backend or ranks: nothing known differs.
  EXPECT_EQ(from({{"backend", "osu"}, {"ranks", 64}}).mismatch(h100, 64), "");
  EXPECT_EQ(from(nlohmann::json(nullptr)).mismatch(h100, 64), "");
  EXPECT_EQ(from({{"backend", 3}, {"ranks", "many"}}).mismatch(h100, 64), "");
}

}  // namespace
}  // namespace plumb::plan
