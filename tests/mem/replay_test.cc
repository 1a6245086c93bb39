// `plumb mem replay`: the allocator models' rules on worked examples, the policy specs, and the
// replay of every snapshot fixture under the policy it was recorded with, which must give the
// reserved bytes the trace itself recorded at every allocation and free.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "mem/allocator_model.h"
#include "mem/replay.h"
#include "mem/snapshot_reader.h"

namespace plumb::mem {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::string fixture(const std::string& name) {
  return std::string(PLUMB_TEST_FIXTURES) + "/mem/" + name;
}

uint64_t capacity_of(const std::string& path) {
  const Trace t = read_trace(path, 0);
  return capacity_from_trace(t, build_timeline(t));
}

std::string error_of(const std::string& spec) {
  try {
    policy_from_spec(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// PyTorch's documentation of roundup_power2_divisions: with 4 divisions, 1200 MiB lies between
// 1024 and 2048, whose steps are 1024, 1280, 1536, 1792: it is rounded to 1280.
TEST(AllocatorRules, RoundupPower2DivisionsWorkedExample) {
  EXPECT_EQ(round_to_power2_division(1200 * kMiB, 4), 1280 * kMiB);
  EXPECT_EQ(round_to_power2_division(1024 * kMiB, 4), 1024 * kMiB);  // a power of 2 stays
  EXPECT_EQ(round_to_power2_division(1281 * kMiB, 4), 1536 * kMiB);
  EXPECT_EQ(round_to_power2_division(1200 * kMiB, 0), 1200 * kMiB);  // off
}

TEST(AllocatorRules, RoundSizeIs512BytesAndTorchNpuPads32First) {
  const AllocatorPolicy cuda = policy_from_spec("pytorch");
  const AllocatorPolicy npu = policy_from_spec("torch_npu");
  EXPECT_EQ(policy_round_size(cuda, 4), 512u);
  EXPECT_EQ(policy_round_size(cuda, 513), 1024u);
  EXPECT_EQ(policy_round_size(cuda, 24 * kMiB), 24 * kMiB);
  EXPECT_EQ(policy_round_size(npu, 24 * kMiB), 24 * kMiB + 512);  // fixtures/mem/README.md
  EXPECT_EQ(policy_round_size(npu, 480), 512u);
  EXPECT_EQ(policy_round_size(npu, 481), 1024u);
}

TEST(AllocatorRules, SegmentSizesBySizeClass) {
  const AllocatorPolicy p = policy_from_spec("pytorch");
  EXPECT_EQ(policy_allocation_size(p, 512), 2 * kMiB);
  EXPECT_EQ(policy_allocation_size(p, kMiB), 2 * kMiB);
  EXPECT_EQ(policy_allocation_size(p, kMiB + 512), 20 * kMiB);
  EXPECT_EQ(policy_allocation_size(p, 10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(policy_allocation_size(p, 10 * kMiB), 10 * kMiB);
  EXPECT_EQ(policy_allocation_size(p, 11 * kMiB + 512), 12 * kMiB);
}

// Large pool: a block splits only when more than 1 MiB would remain.
TEST(AllocatorModelTest, LargeBlocksSplitOnlyAboveOneMiBRemaining) {
  AllocatorModel m(policy_from_spec("pytorch"), kUnlimited);
  const auto a = m.malloc(3 * kMiB, 0);  // a 20 MiB segment: 17 MiB remain, split
  ASSERT_TRUE(a);
  const auto b = m.malloc(16 * kMiB, 0);  // the 17 MiB remainder: 1 MiB would remain: no split
  ASSERT_TRUE(b);
  EXPECT_EQ(m.counters().reserved, 20 * kMiB);
  EXPECT_EQ(m.counters().allocated, 3 * kMiB + 17 * kMiB);  // the whole remainder is handed out
  EXPECT_EQ(m.counters().segment_allocs, 1u);
}

TEST(AllocatorModelTest, FreedNeighboursMergeAndServeALargerRequest) {
  AllocatorModel m(policy_from_spec("pytorch"), kUnlimited);
  const auto a = m.malloc(4 * kMiB, 0);
  const auto b = m.malloc(4 * kMiB, 0);
  ASSERT_TRUE(a && b);
  m.free(*a, false);
  m.free(*b, false);
  EXPECT_EQ(m.free_space(), std::make_pair(20 * kMiB, 20 * kMiB));  // one block again
  ASSERT_TRUE(m.malloc(9 * kMiB, 0));
  EXPECT_EQ(m.counters().segment_allocs, 1u);
}

TEST(AllocatorModelTest, StreamsDoNotShareCachedBlocks) {
  AllocatorModel m(policy_from_spec("pytorch"), kUnlimited);
  const auto a = m.malloc(4 * kMiB, 0);
  m.free(*a, false);
  ASSERT_TRUE(m.malloc(4 * kMiB, 7));
  EXPECT_EQ(m.counters().segment_allocs, 2u);
}

// A deferred free keeps its block out of the pool until it completes, or until a cache flush
// waits for every stream.
TEST(AllocatorModelTest, DeferredFreesWaitForCompletion) {
  AllocatorModel m(policy_from_spec("pytorch"), 40 * kMiB);
  const auto a = m.malloc(12 * kMiB, 0);  // a 12 MiB segment
  const auto b = m.malloc(12 * kMiB, 0);
  ASSERT_TRUE(a && b);
  m.free(*a, true);
  EXPECT_TRUE(m.pending(*a));
  EXPECT_EQ(m.counters().active, 24 * kMiB);
  // 18 MiB more does not fit beside 24 reserved under 40: the flush completes a and returns its
  // segment, then the new one fits.
  ASSERT_TRUE(m.malloc(18 * kMiB, 0));
  EXPECT_EQ(m.counters().cache_flushes, 1u);
  EXPECT_EQ(m.counters().segment_frees, 1u);
  EXPECT_EQ(m.counters().reserved, 30 * kMiB);
  m.complete(*a);  // the trace's own free_completed, later: nothing left to do
  EXPECT_EQ(m.counters().reserved, 30 * kMiB);
}

// max_split_size: a cached block at least that large is not split for a smaller request.
TEST(AllocatorModelTest, MaxSplitSizeKeepsOversizeBlocksWhole) {
  AllocatorModel m(policy_from_spec("pytorch:max_split_size_mb=64"), kUnlimited);
  const auto big = m.malloc(100 * kMiB, 0);
  m.free(*big, false);
  ASSERT_TRUE(m.malloc(30 * kMiB, 0));
  EXPECT_EQ(m.counters().segment_allocs, 2u);  // a new 30 MiB segment, not a split
  AllocatorModel d(policy_from_spec("pytorch"), kUnlimited);
  const auto big2 = d.malloc(100 * kMiB, 0);
  d.free(*big2, false);
  ASSERT_TRUE(d.malloc(30 * kMiB, 0));
  EXPECT_EQ(d.counters().segment_allocs, 1u);
}

// Expandable segments map 20 MiB pages at the end of one range; freed pages are unmapped only
// when the cache is flushed.
TEST(AllocatorModelTest, ExpandableSegmentsGrowInPages) {
  AllocatorModel m(policy_from_spec("expandable"), kUnlimited);
  ASSERT_TRUE(m.malloc(15 * kMiB, 0));  // maps 20 MiB
  ASSERT_TRUE(m.malloc(15 * kMiB, 0));  // 5 MiB free at the end + 20 MiB more
  EXPECT_EQ(m.counters().reserved, 40 * kMiB);
  EXPECT_EQ(m.counters().segment_allocs, 2u);
  EXPECT_EQ(m.free_space(), std::make_pair(10 * kMiB, 10 * kMiB));
}

TEST(AllocatorModelTest, ExpandableFlushUnmapsWholeFreePages) {
  AllocatorModel m(policy_from_spec("expandable"), 60 * kMiB);
  const auto a = m.malloc(40 * kMiB, 0);  // pages 0-1
  const auto b = m.malloc(10 * kMiB, 0);  // page 2 (10 of 20 MiB)
  ASSERT_TRUE(a && b);
  m.free(*a, false);
  // 30 MiB: the free 40 MiB at the front fits it; ask 45 MiB instead: nothing free fits, mapping
  // 40 MiB more (10 free at the end + 40 ≥ 45) exceeds 60, so the flush unmaps the 40 free MiB.
  ASSERT_TRUE(m.malloc(45 * kMiB, 0));
  EXPECT_EQ(m.counters().cache_flushes, 1u);
  EXPECT_EQ(m.counters().segment_frees, 1u);
  EXPECT_EQ(m.counters().segment_allocs, 3u);
  EXPECT_EQ(m.counters().reserved, 60 * kMiB);
}

// With max_split_size the free block before the unmapped end may be refused by the best-fit
// search: find_expandable_block hands it out without mapping more (a review found the old model
// wrapping around here: reserved fell from 200 to 24 MiB).
TEST(AllocatorModelTest, ExpandableWithMaxSplitTakesTheFreeEndWithoutMapping) {
  AllocatorModel m(policy_from_spec("pytorch:expandable_segments=True,max_split_size_mb=128"), kUnlimited);
  const auto a = m.malloc(200 * kMiB, 0);
  ASSERT_TRUE(a);
  m.free(*a, false);
  ASSERT_TRUE(m.malloc(10 * kMiB, 0));
  EXPECT_EQ(m.counters().reserved, 200 * kMiB);
  EXPECT_EQ(m.counters().segment_allocs, 1u);
}

// After a flush unmapped the middle of a free range, a request that the hole and its free
// neighbours cover maps the hole again instead of growing at the end (past the capacity).
TEST(AllocatorModelTest, ExpandableRemapsAHoleBeforeGrowingAtTheEnd) {
  AllocatorModel m(policy_from_spec("expandable"), 150 * kMiB);
  ASSERT_TRUE(m.malloc(15 * kMiB, 0));               // maps [0,20)
  const auto b = m.malloc(100 * kMiB, 0);            // [15,115), maps [20,120)
  ASSERT_TRUE(m.malloc(15 * kMiB, 0));               // [115,130), maps [120,140)
  m.free(*b, false);
  EXPECT_FALSE(m.malloc(200 * kMiB, 0));             // no room: the flush unmaps [20,100)
  EXPECT_EQ(m.counters().reserved, 60 * kMiB);
  ASSERT_TRUE(m.malloc(95 * kMiB, 0));               // 5 free + [20,100) mapped again + 15 free
  EXPECT_EQ(m.counters().reserved, 140 * kMiB);
}

// garbage_collection_threshold: over threshold × capacity, a pass frees every cached whole
// segment at least as old as the average, not only as many as the target needs.
TEST(AllocatorModelTest, GarbageCollectionFreesEveryOldSegmentInAPass) {
  AllocatorModel m(policy_from_spec("pytorch:garbage_collection_threshold=0.5"), 128 * kMiB);
  std::vector<AllocatorModel::BlockId> old;
  for (int i = 0; i < 4; ++i) old.push_back(*m.malloc(16 * kMiB, 0));  // four 16 MiB segments
  ASSERT_TRUE(m.malloc(16 * kMiB, 0));
  for (const auto b : old) m.free(b, false);  // freed together: the same age
  EXPECT_EQ(m.counters().reserved, 80 * kMiB);  // over 64 MiB, the threshold
  ASSERT_TRUE(m.malloc(20 * kMiB, 0));           // no cached block fits: collect, then a segment
  EXPECT_EQ(m.counters().segment_frees, 4u);
  EXPECT_EQ(m.counters().reserved, 36 * kMiB);
  EXPECT_EQ(m.counters().cache_flushes, 0u);
}

// Best fit in an expandable segment weighs a free block by what it could grow to: the 5 MiB
// block next to the unmapped end is passed over for the 20 MiB one inside, and the 18 MiB request
// after it maps a new page (get_free_block's expandable_size).
TEST(AllocatorModelTest, ExpandableBestFitKeepsTheGrowableEnd) {
  AllocatorModel m(policy_from_spec("expandable"), kUnlimited);
  const auto a = m.malloc(20 * kMiB, 0);  // [0,20)
  ASSERT_TRUE(a);
  ASSERT_TRUE(m.malloc(15 * kMiB, 0));    // [20,35); [35,40) free at the end
  m.free(*a, false);                      // [0,20) free inside
  ASSERT_TRUE(m.malloc(4 * kMiB, 0));     // takes [0,4) of the inner block, not the end's 5 MiB
  EXPECT_EQ(m.counters().reserved, 40 * kMiB);
  ASSERT_TRUE(m.malloc(18 * kMiB, 0));    // 16 and 5 MiB free: grows from the end's 5 MiB
  EXPECT_EQ(m.counters().reserved, 60 * kMiB);
}

TEST(AllocatorModelTest, BestFitReservesUpToItsHighestBlock) {
  AllocatorModel m(policy_from_spec("best-fit"), kUnlimited);
  const auto a = m.malloc(10 * kMiB, 0);
  const auto b = m.malloc(5 * kMiB, 0);
  const auto c = m.malloc(10 * kMiB, 0);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(m.counters().reserved, 25 * kMiB);
  m.free(*b, false);
  EXPECT_EQ(m.counters().reserved, 25 * kMiB);
  ASSERT_TRUE(m.malloc(4 * kMiB, 0));  // the 5 MiB hole is the best fit
  EXPECT_EQ(m.counters().reserved, 25 * kMiB);
  m.free(*c, false);  // joins the 1 MiB left of the hole and the free tail
  EXPECT_EQ(m.counters().reserved, 14 * kMiB);
}

TEST(AllocatorModelTest, BucketingRoundsTheProgramsSizes) {
  AllocatorModel m(policy_from_spec("bucketed"), kUnlimited);
  ASSERT_TRUE(m.malloc(1200 * kMiB, 0));  // 8 steps per power of 2: 1024, 1152, 1280 …
  EXPECT_EQ(m.counters().allocated, 1280 * kMiB);
}

TEST(Policies, SpecsAndTheirErrors) {
  const AllocatorPolicy p = policy_from_spec("pytorch:max_split_size_mb=128,roundup_power2_divisions=4");
  EXPECT_EQ(p.max_split_size, 128 * kMiB);
  EXPECT_EQ(p.roundup_power2_divisions, 4u);
  EXPECT_EQ(error_of("pytorh"),
            "--policies: unknown policy 'pytorh' (did you mean 'pytorch'?); expected one of "
            "pytorch, expandable, max-split-128, roundup-4, torch_npu, best-fit, bucketed");
  EXPECT_EQ(error_of("pytorch:max_split_size_mb=10"),
            "--policies 'pytorch:max_split_size_mb=10': max_split_size_mb must be more than 20 "
            "(PyTorch's rule), not 10");
  EXPECT_EQ(error_of("pytorch:roundup_power2_divisions=3"),
            "--policies 'pytorch:roundup_power2_divisions=3': roundup_power2_divisions must be a "
            "power of 2, not 3");
  EXPECT_EQ(error_of("pytorch:expandable_segments=maybe"),
            "--policies 'pytorch:expandable_segments=maybe': expandable_segments must be True or "
            "False, not 'maybe'");
  EXPECT_NE(error_of("pytorch:max_split=128").find("unknown setting 'max_split'"), std::string::npos);
}

TEST(Policies, ListsJoinSettingsToThePolicyBeforeThem) {
  const auto list = policies_from_list("expandable,pytorch:max_split_size_mb=256,roundup_power2_divisions=4,best-fit");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "expandable");
  EXPECT_EQ(list[1].max_split_size, 256 * kMiB);
  EXPECT_EQ(list[1].roundup_power2_divisions, 4u);
  EXPECT_EQ(list[2].name, "best-fit");
  EXPECT_EQ(policies_from_list("all").size(), builtin_policies().size());
}

// The replay of each fixture under the policy it was recorded with gives the reserved bytes the
// trace recorded, at every allocation and free (fixtures/mem/README.md, answers.json).
struct Reproduction {
  const char* file;
  uint64_t peak_reserved;
  bool ran_out;
};

class ReplayReproduces : public ::testing::TestWithParam<Reproduction> {};

TEST_P(ReplayReproduces, RecordedReservedBytes) {
  const Trace t = read_trace(fixture(GetParam().file), 0);
  ReplayOptions o;
  o.capacity = capacity_from_trace(t, build_timeline(t));
  const ReplayResult r = replay(t, recorded_policy(t), o);
  const ReserveCheck c = check_against_recorded(t, build_timeline(t), r);
  ASSERT_TRUE(c.comparable) << c.why_not;
  EXPECT_GT(c.events_compared, 30u);
  EXPECT_EQ(c.mismatches, 0u) << "first at event " << c.first_mismatch << ": recorded "
                              << c.recorded_at_mismatch << ", replayed " << c.replayed_at_mismatch;
  EXPECT_EQ(r.peak_reserved, GetParam().peak_reserved);
  EXPECT_EQ(r.ran_out, GetParam().ran_out);
  EXPECT_FALSE(r.served_recorded_oom);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ReplayReproduces,
    ::testing::Values(Reproduction{"healthy.pickle", 580911104, false},
                      Reproduction{"leak.pickle", 736100352, false},
                      Reproduction{"npu.pickle", 618659840, false},
                      Reproduction{"fragmented_oom.pickle", 83753959424, true},
                      Reproduction{"true_peak_oom.pickle", 84290830336, true},
                      Reproduction{"spike_oom.pickle", 80532733952, true}),
    [](const ::testing::TestParamInfo<Reproduction>& p) {
      std::string name = p.param.file;
      return name.substr(0, name.find('.'));
    });

TEST(Replay, CapacityFromTheOomEvent) {
  // fragmented_oom: reserved 83753959424 + device_free 209715200 at the OOM.
  EXPECT_EQ(capacity_of(fixture("fragmented_oom.pickle")), 83963674624u);
  EXPECT_EQ(capacity_of(fixture("healthy.pickle")), 0u);
}

TEST(Replay, ARingBufferTraceCannotBeCompared) {
  const Trace t = read_trace(fixture("ringbuffer.pickle"), 0);
  const ReserveCheck c = check_against_recorded(t, build_timeline(t), replay(t, recorded_policy(t), {}));
  EXPECT_FALSE(c.comparable);
  EXPECT_NE(c.why_not.find("ring buffer"), std::string::npos);
}

// The fragmented OOM: 64 cached 128 MiB segments each split by a 96 MiB activation leave 32 MiB
// holes; the 512 MiB request fails. With expandable segments the activations are packed in one
// range and the request fits.
TEST(Replay, ExpandableSegmentsWouldHaveServedTheFragmentedOom) {
  const Trace t = read_trace(fixture("fragmented_oom.pickle"), 0);
  ReplayOptions o;
  o.capacity = capacity_from_trace(t, build_timeline(t));
  const ReplayResult r = replay(t, policy_from_spec("expandable"), o);
  EXPECT_FALSE(r.ran_out);
  EXPECT_TRUE(r.served_recorded_oom);
  const ReplayResult p = replay(t, policy_from_spec("pytorch"), o);
  EXPECT_TRUE(p.ran_out);
  EXPECT_EQ(p.first_failure_event, 335u);
  EXPECT_EQ(p.first_failure_bytes, 536870912u);
}

// The true-peak OOM does not fit under any policy: the live bytes alone exceed the capacity.
TEST(Replay, NoPolicyServesATruePeakOom) {
  const Trace t = read_trace(fixture("true_peak_oom.pickle"), 0);
  ReplayOptions o;
  o.capacity = capacity_from_trace(t, build_timeline(t));
  for (const AllocatorPolicy& p : builtin_policies()) {
    EXPECT_TRUE(replay(t, p, o).ran_out) << p.name;
  }
}

}  // namespace
}  // namespace plumb::mem
