// The NCCL backend's own logic (symbol loading, buffers, events, every collective's call) run
// against stand-in libraries on host memory, one rank: no GPU here. What this cannot show --
// real NCCL on real GPUs -- needs a GPU machine (docs/comm.md).
#include <gtest/gtest.h>

#include <cstdlib>

#include "comm/collective.h"
#include "comm/mpi_backend.h"
#include "comm/nccl_backend.h"
#include "comm/sweep.h"

namespace plumb::comm {
namespace {

class FakeGpu : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("PLUMB_NCCL_LIBRARY", FAKE_NCCL_LIBRARY, 1);
    setenv("PLUMB_CUDART_LIBRARY", FAKE_CUDART_LIBRARY, 1);
    session_ = std::make_unique<MpiSession>(nullptr, nullptr);
  }
  void TearDown() override { session_.reset(); }

 private:
  std::unique_ptr<MpiSession> session_;
};

const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new FakeGpu);

TEST(NcclBackend, EveryCollectiveAndTypeThroughTheBackend) {
  auto comm = make_nccl_communicator(MpiCommunicator::world());
  EXPECT_EQ(comm->backend(), "nccl");
  EXPECT_TRUE(comm->avg_premultiplies(DataType::kBFloat16));
  EXPECT_FALSE(comm->avg_premultiplies(DataType::kInt32));
  for (const Collective* c : all_collectives()) {
    for (const DataTypeInfo& t : all_data_types()) {
      SweepOptions o;
      o.type = t.type;
      o.iters = 3;
      o.warmup = 1;
      const Row row = measure(*comm, *c, 4096, o);
      EXPECT_EQ(row.wrong, 0) << c->name() << " " << t.name;
      EXPECT_GT(row.time_us, 0.0) << "CUDA events timed the loop";
    }
  }
}

TEST(NcclBackend, SplitMakesANewCommunicator) {
  auto world = make_nccl_communicator(MpiCommunicator::world());
  auto group = world->split(0, 0);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->size(), 1);
  EXPECT_EQ(world->split(-1, 0), nullptr);
}

TEST(NcclBackend, WrongDataIsCounted) {
  auto comm = make_nccl_communicator(MpiCommunicator::world());
  setenv("FAKE_NCCL_CORRUPT", "1", 1);
  SweepOptions o;
  o.iters = 2;
  o.warmup = 0;
  const Row row = measure(*comm, find_collective("allreduce"), 1024, o);
  unsetenv("FAKE_NCCL_CORRUPT");
  EXPECT_EQ(row.wrong, 1);
}

}  // namespace
}  // namespace plumb::comm
