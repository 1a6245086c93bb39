// `plumb mem replay`: the allocator models' rules on worked examples, the policy specs, and the
// replay of every snapshot fixture under the policy it was recorded with, which must give the
// reserved bytes the trace itself recorded at every allocation and free.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "mem/address_map.h"
#include "mem/allocator_model.h"
#include "mem/free_pool.h"
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

// --- replay_all: the policies on two threads give what one replay after another gives ----------

void expect_same(const ReplayResult& a, const ReplayResult& b) {
  EXPECT_EQ(a.policy, b.policy);
  EXPECT_EQ(a.description, b.description) << a.policy;
  EXPECT_EQ(a.capacity, b.capacity) << a.policy;
  EXPECT_EQ(a.allocations, b.allocations) << a.policy;
  EXPECT_EQ(a.peak_allocated, b.peak_allocated) << a.policy;
  EXPECT_EQ(a.peak_reserved, b.peak_reserved) << a.policy;
  EXPECT_EQ(a.final_reserved, b.final_reserved) << a.policy;
  EXPECT_EQ(a.fragmentation, b.fragmentation) << a.policy;  // bit for bit: the same arithmetic
  EXPECT_EQ(a.free_at_peak, b.free_at_peak) << a.policy;
  EXPECT_EQ(a.largest_free_at_peak, b.largest_free_at_peak) << a.policy;
  EXPECT_EQ(a.segment_allocs, b.segment_allocs) << a.policy;
  EXPECT_EQ(a.segment_frees, b.segment_frees) << a.policy;
  EXPECT_EQ(a.cache_flushes, b.cache_flushes) << a.policy;
  EXPECT_EQ(a.ran_out, b.ran_out) << a.policy;
  EXPECT_EQ(a.first_failure_event, b.first_failure_event) << a.policy;
  EXPECT_EQ(a.first_failure_bytes, b.first_failure_bytes) << a.policy;
  EXPECT_EQ(a.served_recorded_oom, b.served_recorded_oom) << a.policy;
  EXPECT_EQ(a.reserved, b.reserved) << a.policy;
}

// The recorded policy, every built-in one, and settings the built-in ones leave off (garbage
// collection, expandable with max_split_size), so that every path of the model runs.
std::vector<AllocatorPolicy> every_policy(const Trace& t) {
  std::vector<AllocatorPolicy> all{recorded_policy(t)};
  for (const AllocatorPolicy& p : builtin_policies()) all.push_back(p);
  all.push_back(policy_from_spec("pytorch:garbage_collection_threshold=0.5"));
  all.push_back(policy_from_spec("pytorch:expandable_segments=True,max_split_size_mb=64"));
  return all;
}

// replay_all on 1 and on 2 threads, and replay() of each policy, agree field by field.
void expect_threads_agree(const Trace& t, uint64_t capacity) {
  const std::vector<AllocatorPolicy> policies = every_policy(t);
  ReplayOptions o;
  o.capacity = capacity;
  o.threads = 1;
  const std::vector<ReplayResult> serial = replay_all(t, policies, o);
  o.threads = 2;
  const std::vector<ReplayResult> parallel = replay_all(t, policies, o);
  ASSERT_EQ(serial.size(), policies.size());
  ASSERT_EQ(parallel.size(), policies.size());
  for (size_t i = 0; i < policies.size(); ++i) {
    expect_same(serial[i], replay(t, policies[i], o));
    expect_same(parallel[i], serial[i]);
  }
}

TEST(ReplayAll, TwoThreadsGiveTheSerialResultsOnEveryFixture) {
  size_t traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(fixture(""))) {
    const std::filesystem::path& path = entry.path();
    const bool trace = path.extension() == ".pickle" ||
                       (path.extension() == ".json" && path.filename() != "answers.json");
    if (!trace) continue;
    SCOPED_TRACE(path.filename().string());
    const Trace t = read_trace(path.string(), 0);
    expect_threads_agree(t, capacity_from_trace(t, build_timeline(t)));
    ++traces;
  }
  EXPECT_GE(traces, 10u);
}

// Blocks of 1 byte to 200 MiB (both pools, split and oversize blocks) on two streams, freed in a
// random order, half the frees completed later (so that a flush finds blocks pending), an oom
// now and then, and torch_npu's workspace at the start when `workspace`.
Trace random_trace(uint64_t seed, bool completions, bool workspace) {
  std::mt19937_64 rng(seed);
  Trace t;
  t.streams = {0, 7};
  auto push = [&](Action a, uint64_t addr, uint64_t size, uint16_t stream) {
    Event e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    e.stream = stream;
    t.events.push_back(e);
  };
  if (workspace) push(Action::kWorkspaceSnapshot, 0x100000, 64 * kMiB, 0);
  const uint64_t limits[] = {kMiB, 10 * kMiB, 200 * kMiB};
  std::vector<Event> live, freed;
  uint64_t next_addr = 0x7f0000000000;
  for (int i = 0; i < 4000; ++i) {
    const uint64_t what = rng() % 16;
    if (what < 8 || live.empty()) {
      const uint64_t size = 1 + rng() % limits[rng() % 3];
      const auto stream = static_cast<uint16_t>(rng() % 2);
      const uint64_t addr = workspace && rng() % 50 == 0 ? 0x100000 : (next_addr += size + 512);
      push(Action::kAlloc, addr, size, stream);
      live.push_back(t.events.back());
    } else if (what < 14) {
      const size_t k = rng() % live.size();
      const Event e = live[k];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      push(Action::kFreeRequested, e.addr, e.size, e.stream);
      if (completions) freed.push_back(e);
    } else if (what < 15 && !freed.empty()) {
      const size_t k = rng() % freed.size();
      const Event e = freed[k];
      freed.erase(freed.begin() + static_cast<std::ptrdiff_t>(k));
      push(Action::kFreeCompleted, e.addr, e.size, e.stream);
    } else {
      push(Action::kOom, 0, 1 + rng() % (300 * kMiB), 0);
    }
  }
  return t;
}

TEST(ReplayAll, TwoThreadsGiveTheSerialResultsOnRandomTraces) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Trace t = random_trace(seed, seed % 2 == 0, seed % 3 == 0);
    for (const uint64_t capacity : {uint64_t{0}, 2048 * kMiB, 600 * kMiB}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << ", capacity " << capacity);
      expect_threads_agree(t, capacity);
    }
  }
}

// The random traces reach the paths the comparison is meant to cover.
TEST(ReplayAll, RandomTracesFlushAndRunOut) {
  const Trace t = random_trace(2, true, false);
  ReplayOptions o;
  o.capacity = 600 * kMiB;
  const ReplayResult r = replay(t, policy_from_spec("pytorch"), o);
  EXPECT_GT(r.cache_flushes, 0u);
  EXPECT_TRUE(r.ran_out);
  EXPECT_GT(r.segment_frees, 0u);
}

TEST(ReplayAll, OnlyTheFirstSeriesIsKeptWhenAsked) {
  const Trace t = read_trace(fixture("leak.pickle"), 0);
  const std::vector<AllocatorPolicy> policies = every_policy(t);
  ReplayOptions o;
  const std::vector<ReplayResult> all = replay_all(t, policies, o);
  o.series = 1;
  std::vector<ReplayResult> first = replay_all(t, policies, o);
  ASSERT_EQ(first.size(), all.size());
  EXPECT_EQ(first[0].reserved, all[0].reserved);
  EXPECT_EQ(first[0].reserved.size(), t.events.size());
  for (size_t i = 1; i < first.size(); ++i) {
    EXPECT_TRUE(first[i].reserved.empty()) << first[i].policy;
    first[i].reserved = all[i].reserved;
    expect_same(first[i], all[i]);  // everything else as with the series
  }
  o.series = 0;
  EXPECT_TRUE(replay(t, policies[0], o).reserved.empty());
}

// Policies with equal settings are replayed once (replay.h): PyTorch's recorded policy with its
// default settings and "pytorch" itself; every setting counts.
TEST(ReplayAll, PoliciesWithEqualSettingsShareOneReplay) {
  const Trace t = read_trace(fixture("leak.pickle"), 0);
  const AllocatorPolicy recorded = recorded_policy(t);
  EXPECT_TRUE(recorded.settings() == policy_from_spec("pytorch").settings());
  EXPECT_FALSE(policy_from_spec("pytorch:garbage_collection_threshold=0.5").settings() ==
               policy_from_spec("pytorch").settings());
  EXPECT_FALSE(policy_from_spec("torch_npu").settings() == policy_from_spec("pytorch").settings());
  ReplayOptions o;
  o.series = 2;
  const std::vector<ReplayResult> r =
      replay_all(t, {recorded, policy_from_spec("expandable"), policy_from_spec("pytorch")}, o);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].policy, "pytorch");
  EXPECT_TRUE(r[2].reserved.empty());  // past the two series asked for
  ReplayResult same = r[2];
  same.policy = r[0].policy;
  same.description = r[0].description;
  same.reserved = r[0].reserved;
  expect_same(same, r[0]);
  o.series = 3;
  expect_same(replay_all(t, {recorded, policy_from_spec("pytorch")}, o)[1],
              replay(t, policy_from_spec("pytorch"), o));
}

TEST(ReplayAll, NoPoliciesNoResults) {
  EXPECT_TRUE(replay_all(random_trace(1, false, false), {}, {}).empty());
}

// --- the model's tables ---------------------------------------------------------------------------

// FreePool against std::set under random insertions and erasures: the same keys in the same
// order, the same lower bounds (keys from a small range, so that ties on stream and size abound).
TEST(FreePoolTest, OrdersAsStdSet) {
  std::mt19937_64 rng(11);
  FreePool pool;
  std::set<FreeKey> reference;
  auto random_key = [&] {
    return FreeKey{static_cast<int64_t>(rng() % 3) - 1, rng() % 40, rng() % 50,
                   static_cast<uint32_t>(rng() % 4)};  // streams -1, 0, 1: signed order
  };
  for (int i = 0; i < 20000; ++i) {
    const FreeKey k = random_key();
    // Grows to about 400 keys (many runs), then shrinks to none.
    const bool insert = i < 12000 ? rng() % 3 != 0 : rng() % 3 == 0;
    if (insert && !reference.contains(k)) {
      pool.insert(k);
      reference.insert(k);
    } else if (!insert) {
      pool.erase(k);
      reference.erase(k);
    }
    ASSERT_EQ(pool.size(), reference.size());
    const FreeKey probe = random_key();
    const auto want = reference.lower_bound(probe);
    const auto got = pool.lower_bound(probe);
    ASSERT_EQ(want == reference.end(), got == pool.end());
    if (want != reference.end()) {
      ASSERT_EQ(*got, *want);
    }
    if (i % 500 == 0) {
      ASSERT_TRUE(std::equal(pool.begin(), pool.end(), reference.begin(), reference.end()));
    }
  }
  EXPECT_TRUE(std::equal(pool.begin(), pool.end(), reference.begin(), reference.end()));
}

TEST(FreePoolTest, EraseByIteratorAndAbsentKeys) {
  FreePool pool;
  for (uint64_t size = 100; size > 0; --size) pool.insert({0, size, 0, 0});
  pool.erase(FreeKey{1, 5, 0, 0});  // absent: nothing happens
  EXPECT_EQ(pool.size(), 100u);
  auto it = pool.lower_bound({0, 50, 1, 0});  // past {0, 50, 0, 0}
  ASSERT_NE(it, pool.end());
  EXPECT_EQ(it->size, 51u);
  pool.erase(it);
  EXPECT_EQ(pool.lower_bound({0, 51, 0, 0})->size, 52u);
  EXPECT_TRUE(pool.lower_bound({0, 101, 0, 0}) == pool.end());
  while (!pool.empty()) pool.erase(pool.begin());
  EXPECT_TRUE(pool.begin() == pool.end());
}

TEST(AddressMapTest, ExtractTakesTheValueOut) {
  AddressMap<uint32_t> m;
  for (uint64_t a = 0; a < 1000; ++a) m[a * 4096] = static_cast<uint32_t>(a);
  m[UINT64_MAX] = 7;  // the key that marks an empty slot lives beside the table
  EXPECT_EQ(m.extract(4096 * 10), std::optional<uint32_t>(10));
  EXPECT_EQ(m.extract(4096 * 10), std::nullopt);
  EXPECT_EQ(m.extract(UINT64_MAX), std::optional<uint32_t>(7));
  EXPECT_EQ(m.extract(UINT64_MAX), std::nullopt);
  EXPECT_EQ(m.size(), 999u);
  for (uint64_t a = 0; a < 1000; ++a) {
    if (a != 10) {
      EXPECT_EQ(m.extract(a * 4096), std::optional<uint32_t>(static_cast<uint32_t>(a)));
    }
  }
  EXPECT_TRUE(m.empty());
}

}  // namespace
}  // namespace plumb::mem
