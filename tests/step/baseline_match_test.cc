// plumb step --baseline against a record of another backend, device kind or world size: one line.
#include "step/baseline_match.h"

#include <gtest/gtest.h>

#include "step/readers.h"

namespace plumb::step {
namespace {

const std::string kTraces = std::string(PLUMB_TEST_FIXTURES) + "/traces/";

// A real 2-rank DDP trace on GPUs (NCCL kernels) against a 2-rank plumb comm run on the MPI
// backend (CPU buffers): the "2697% of its baseline" case.
TEST(BaselineMismatch, AGpuTraceAgainstACpuBaselineIsWarned) {
  const std::vector<RankTrace> traces = {
      read_kineto(kTraces + "kineto-ddp-rank1-of2/df_index_resolver.json.gz", {})};
  EXPECT_EQ(trace_kind(traces).library, "NCCL");
  EXPECT_EQ(trace_kind(traces).device, "GPU");
  EXPECT_EQ(trace_world_size(traces), 2);
  EXPECT_EQ(baseline_mismatch("baseline 4 · 2026-12-02T10:00:00Z", {"mpi", 2}, traces),
            "--baseline baseline 4 · 2026-12-02T10:00:00Z was measured on another backend (MPI, "
            "not NCCL) and device kind (CPU, not GPU) than these traces: its busbw is not what "
            "their collectives could reach");
  EXPECT_EQ(baseline_mismatch("file b.json", {"nccl", 8}, traces),
            "--baseline file b.json was measured on another world size (8 ranks, not 2) than "
            "these traces: its busbw is not what their collectives could reach");
  EXPECT_EQ(baseline_mismatch("file b.json", {"nccl-tests", 2}, traces), "");
  EXPECT_EQ(baseline_mismatch("file b.json", {"", 0}, traces), "");  // the record does not say
}

TEST(BaselineMismatch, AscendTracesAreHcclOnNpus) {
  RankTrace t;
  t.format = "ascend-db";
  t.world_size = 16;
  EXPECT_EQ(baseline_mismatch("baseline 1", {"nccl", 16}, {t}),
            "--baseline baseline 1 was measured on another backend (NCCL, not HCCL) and device "
            "kind (GPU, not Ascend NPU) than these traces: its busbw is not what their "
            "collectives could reach");
  EXPECT_EQ(baseline_mismatch("baseline 1", {"hccl-test", 16}, {t}), "");
}

}  // namespace
}  // namespace plumb::step
