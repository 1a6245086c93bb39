#include "comm/sweep.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/fake_communicator.h"

namespace plumb::comm {
namespace {

SweepOptions options_for(std::string_view collective) {
  SweepOptions o;
  o.collectives = {&find_collective(collective)};
  o.iters = 4;
  o.warmup = 2;
  return o;
}

TEST(SweepSizes, FactorAndStep) {
  SweepOptions o = options_for("allreduce");
  o.min_bytes = 8;
  o.max_bytes = 1024 * 1024;
  o.step_factor = 4;
  EXPECT_EQ(sweep_sizes(o), (std::vector<uint64_t>{8, 32, 128, 512, 2048, 8192, 32768, 131072,
                                                   524288}));
  o.min_bytes = 100;
  o.max_bytes = 400;
  o.step_bytes = 150;
  EXPECT_EQ(sweep_sizes(o), (std::vector<uint64_t>{100, 250, 400}));
  o.min_bytes = o.max_bytes = 64;
  EXPECT_EQ(sweep_sizes(o), (std::vector<uint64_t>{64}));
}

TEST(Validate, ListsEveryProblem) {
  SweepOptions o;
  o.min_bytes = 2 * 1024 * 1024;
  o.max_bytes = 1024 * 1024;
  o.step_factor = 1;
  o.iters = 0;
  try {
    validate(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--min-bytes 2097152 is larger than --max-bytes 1048576\n"
                           "--step-factor must be at least 2, got 1\n"
                           "--iters must be from 1 to 1000000, got 0\n"
                           "--collectives: no collective to run");
  }
  SweepOptions twice = options_for("allreduce");
  twice.collectives.push_back(&find_collective("allreduce"));
  twice.layers = {"node", "node"};
  try {
    validate(twice);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--collectives: 'allreduce' is listed twice\n"
                           "--layers: 'node' is listed twice");
  }
  SweepOptions none = options_for("allreduce");
  none.layers.clear();
  EXPECT_THROW(validate(none), Error);
  SweepOptions limits = options_for("allreduce");
  limits.rounds = 0;
  limits.timeout_seconds = -1;
  try {
    validate(limits);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--rounds must be from 1 to 100, got 0\n"
                           "--timeout must be from 0 (no watchdog) to 86400 seconds, got -1");
  }
}

// What a watchdog is told: every step the rank begins, in order, then the end.
struct StepLog final : StepWatch {
  std::vector<std::string> steps;
  void begin(const std::string& what) override { steps.push_back(what); }
  void end() override { steps.emplace_back("end"); }
};

TEST(RunSweep, TellsTheWatchEveryStep) {
  test::FakeCommunicator world;
  SweepOptions o = options_for("allreduce");
  o.min_bytes = 1024;
  o.max_bytes = 4096;
  o.layers = {"world"};
  const std::vector<std::string> hosts = {"h"};
  const std::vector<int> nodes = {0};
  const Placement placement = place_by_host(hosts, nodes);
  StepLog log;
  const Result result = run_sweep(world, placement, plan_layers(placement, o), o, {}, &log);
  EXPECT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(log.steps,
            (std::vector<std::string>{"world · splitting into groups",
                                      "world · allreduce · buffers",
                                      "world · allreduce · 1 KiB",
                                      "world · allreduce · 1 KiB · gathering the rows on rank 0",
                                      "world · allreduce · 4 KiB",
                                      "world · allreduce · 4 KiB · gathering the rows on rank 0",
                                      "end"}));
}

// Each size's rows reach rank 0's receiver as soon as they are measured, round by round; the
// result holds the same rows (the median round's with --rounds).
TEST(RunSweep, HandsEachSizesRowsOverAsMeasured) {
  test::FakeCommunicator world;
  SweepOptions o = options_for("allreduce");
  o.min_bytes = 1024;
  o.max_bytes = 4096;
  o.rounds = 2;
  o.layers = {"world"};
  const std::vector<std::string> hosts = {"h"};
  const std::vector<int> nodes = {0};
  const Placement placement = place_by_host(hosts, nodes);
  std::vector<std::pair<int, uint64_t>> received;  // (round, requested size)
  const Result result = run_sweep(world, placement, plan_layers(placement, o), o, {}, nullptr,
                                  [&](const std::vector<Row>& rows, int round) {
                                    ASSERT_EQ(rows.size(), 1u);
                                    EXPECT_EQ(rows[0].layer, "world");
                                    received.emplace_back(round, rows[0].requested_bytes);
                                  });
  EXPECT_EQ(received, (std::vector<std::pair<int, uint64_t>>{{1, 1024}, {1, 4096}, {2, 1024},
                                                              {2, 4096}}));
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.rows[0].requested_bytes, 1024u);
  EXPECT_EQ(result.rows[1].requested_bytes, 4096u);
}

TEST(HostMemory, EstimateAndRefusal) {
  SweepOptions o = options_for("allgather");
  o.min_bytes = 8;
  o.max_bytes = 1024 * 1024;
  o.step_factor = 2;
  Layer world{"world", {{"world", {0, 1, 2, 3}}}, ""};
  // allgather of 1 MiB on 4 ranks: send 64 Ki + receive 256 Ki float32 elements, twice (host
  // copies) = 2 × (65536 + 262144) × 4 B = 2.5 MiB
  EXPECT_EQ(host_bytes_per_rank(o, {world}), 2621440u);
  EXPECT_NO_THROW(check_host_memory(o, {world}, 4, 16 * 1024 * 1024));
  try {
    check_host_memory(o, {world}, 4, 8 * 1024 * 1024);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--max-bytes 1 MiB: each rank needs about 2.5 MiB of host memory "
                           "(buffers and their checks), 10 MiB for the 4 ranks on this host, which "
                           "has 8 MiB; lower --max-bytes");
  }
}

TEST(PlanLayers, RootMustBeInEveryGroup) {
  SweepOptions o = options_for("broadcast");
  o.root = 2;
  o.layers = {"world", "node"};
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  const std::vector<int> ids = {0, 0, 2, 2};
  const Placement p = place_by_host(hosts, ids);
  try {
    plan_layers(p, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--root 2: group 'a' of layer node has 2 ranks; the root must be below "
                           "that");
  }
  o.root = 1;
  EXPECT_EQ(plan_layers(p, o).size(), 2u);
}

// On the fake clock every operation takes 1 ms: time, bandwidth and tail follow exactly.
TEST(Measure, TimesAndBandwidthFromTheClock) {
  test::FakeCommunicator fake;
  const SweepOptions o = options_for("allreduce");
  const Row row = measure(fake, find_collective("allreduce"), 1 << 20, o);
  EXPECT_EQ(row.bytes, 1u << 20);
  EXPECT_EQ(row.count, (1u << 20) / 4);
  EXPECT_NEAR(row.time_us, 1000.0, 1e-9);
  EXPECT_NEAR(row.algbw_gbps, 1048576 / 1e9 / 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(row.busbw_gbps, 0.0);  // one rank: 2(n-1)/n = 0
  EXPECT_NEAR(row.p50_us, 1000.0, 1e-9);
  EXPECT_NEAR(row.max_us, 1000.0, 1e-9);
  EXPECT_EQ(row.wrong, 0);
  EXPECT_EQ(row.op, "sum");
  EXPECT_EQ(row.root, -1);
  EXPECT_EQ(fake.operations, 2 + 4 + 4);  // warm-up, timed loop, per-iteration pass
}

TEST(Measure, EveryCollectiveChecksCleanAndCatchesCorruption) {
  for (const Collective* c : all_collectives()) {
    for (const DataTypeInfo& t : all_data_types()) {
      SweepOptions o = options_for(c->name());
      o.type = t.type;
      o.op = ReduceOp::kMax;
      test::FakeCommunicator fake;
      EXPECT_EQ(measure(fake, *c, 4096, o).wrong, 0) << c->name() << " " << t.name;
      fake.corrupt = true;
      EXPECT_EQ(measure(fake, *c, 4096, o).wrong, 1) << c->name() << " " << t.name;
    }
  }
}

TEST(Measure, NoCheckMeansUnknownWrong) {
  test::FakeCommunicator fake;
  SweepOptions o = options_for("broadcast");
  o.check = false;
  fake.corrupt = true;
  const Row row = measure(fake, find_collective("broadcast"), 64, o);
  EXPECT_EQ(row.wrong, -1);
  EXPECT_EQ(row.root, 0);
  EXPECT_EQ(row.op, "none");
}

TEST(Measure, OperationThatWritesNothingIsWrong) {
  // A receive buffer left as it was (the 0x80 sentinel) never matches an expected value.
  test::FakeCommunicator fake;
  fake.write_nothing = true;
  const SweepOptions o = options_for("allreduce");
  EXPECT_EQ(measure(fake, find_collective("allreduce"), 4096, o).wrong, 1024);
  SweepOptions i8 = options_for("alltoall");
  i8.type = DataType::kInt8;
  EXPECT_EQ(measure(fake, find_collective("alltoall"), 100, i8).wrong, 100);
}

TEST(Measure, ZeroBytesIsALatencyRow) {
  test::FakeCommunicator fake;
  const SweepOptions o = options_for("allgather");
  const Row row = measure(fake, find_collective("allgather"), 0, o);
  EXPECT_EQ(row.bytes, 0u);
  EXPECT_EQ(row.wrong, 0);
  EXPECT_DOUBLE_EQ(row.algbw_gbps, 0.0);
  EXPECT_NEAR(row.time_us, 1000.0, 1e-9);
}

}  // namespace
}  // namespace plumb::comm
