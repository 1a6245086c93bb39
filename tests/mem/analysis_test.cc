// The trace analyses on traces built event by event, each with its answer worked out by hand:
// the timeline and what the ring buffer dropped, free space and the largest free block, steps,
// creep, and the four causes of an OOM.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "mem/categories.h"
#include "mem/oom.h"
#include "mem/snapshot_reader.h"
#include "mem/steps.h"
#include "mem/timeline.h"
#include "support/subprocess.h"

namespace plumb::mem {
namespace {

constexpr uint64_t kMiB = 1 << 20;

struct Builder {
  Trace t;
  uint32_t stack(const std::string& function) {
    t.frames.push_back({function, "train.py", 1});
    t.stacks.push_back({static_cast<uint32_t>(t.frames.size() - 1)});
    return static_cast<uint32_t>(t.stacks.size() - 1);
  }
  void add(Action a, uint64_t addr, uint64_t size, uint32_t stack = kNoStack) {
    Event e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    e.stack = stack;
    t.events.push_back(e);
  }
  void alloc(uint64_t addr, uint64_t size, uint32_t stack = kNoStack) { add(Action::kAlloc, addr, size, stack); }
  void free(uint64_t addr, uint64_t size) {
    add(Action::kFreeRequested, addr, size);
    add(Action::kFreeCompleted, addr, size);
  }
  void segment(uint64_t addr, uint64_t size) { add(Action::kSegmentAlloc, addr, size); }
  void oom(uint64_t size, uint64_t device_free) {
    add(Action::kOom, 0, size);
    t.device_free.push_back({t.events.size() - 1, device_free});
  }
};

TEST(Timeline, AllocatedActiveAndReservedAfterEachEvent) {
  Builder b;
  b.segment(0, 20 * kMiB);
  b.alloc(0, 4 * kMiB);
  b.alloc(4 * kMiB, 6 * kMiB);
  b.add(Action::kFreeRequested, 0, 4 * kMiB);  // freed, still pending on a stream
  b.add(Action::kFreeCompleted, 0, 4 * kMiB);
  const Timeline tl = build_timeline(b.t);
  ASSERT_EQ(tl.samples.size(), 5u);
  EXPECT_EQ(tl.samples[2].allocated, 10 * kMiB);
  EXPECT_EQ(tl.samples[3].allocated, 6 * kMiB);
  EXPECT_EQ(tl.samples[3].active, 10 * kMiB);  // active until free_completed
  EXPECT_EQ(tl.samples[4].active, 6 * kMiB);
  EXPECT_EQ(tl.samples[4].reserved, 20 * kMiB);
  EXPECT_EQ(tl.peak.allocated, 10 * kMiB);
  EXPECT_EQ(tl.peak_allocated_index, 2u);
}

// The ring buffer dropped the allocation of a 3 MiB block the trace frees, and of a 5 MiB block
// still live at the end; their segment was allocated before the trace too.
TEST(Timeline, WhatTheRingBufferDroppedIsTheInitialState) {
  Builder b;
  b.free(100, 3 * kMiB);
  b.alloc(200, 1 * kMiB);
  b.t.segments.push_back({0, 20 * kMiB, 0, true, false,
                          {{100, 3 * kMiB, 3 * kMiB, BlockState::kInactive},
                           {300, 5 * kMiB, 5 * kMiB, BlockState::kActiveAllocated},
                           {200, 1 * kMiB, 1 * kMiB, BlockState::kActiveAllocated}}});
  const Timeline tl = build_timeline(b.t);
  EXPECT_EQ(tl.initial.allocated, 8 * kMiB);
  EXPECT_EQ(tl.initial.reserved, 20 * kMiB);
  EXPECT_EQ(tl.dropped_frees, 1u);
  EXPECT_EQ(tl.samples.back().allocated, 6 * kMiB);
}

// 16 bytes a sample while every counter fits in 40 bits; the first that does not widens all.
TEST(Timeline, SamplesPackedThenWidenedKeepEveryValue) {
  const uint64_t max = Samples::kPackedMax;
  const std::vector<Sample> values = {{0, 0, 0},
                                      {max, max, max},
                                      {1, max, 0},
                                      {0x12345'6789AULL, 0xFEDCB'A9876ULL, 0x0F0F0'F0F0FULL},
                                      {max, 0, max}};
  Samples s;
  s.reserve(values.size());
  for (const Sample& v : values) s.push_back(v);
  EXPECT_FALSE(s.wide());
  EXPECT_EQ(s.bytes_per_sample(), 16u);
  ASSERT_EQ(s.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(s[i], values[i]) << "sample " << i;
  const Sample big{max + 1, 3, UINT64_MAX};
  s.push_back(big);
  s.push_back({7, 8, 9});
  EXPECT_TRUE(s.wide());
  EXPECT_EQ(s.bytes_per_sample(), 24u);
  ASSERT_EQ(s.size(), values.size() + 2);
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(s[i], values[i]) << "sample " << i;
  EXPECT_EQ(s[values.size()], big);
  EXPECT_EQ(s.back(), (Sample{7, 8, 9}));
  size_t n = 0;
  for (const Sample v : s) EXPECT_EQ(v, s[n++]);
  EXPECT_EQ(n, s.size());
}

// Up to 2^40 − 1 bytes the timeline keeps 16 bytes a sample; a 2 TiB segment and a 1.5 TiB
// allocation (past 2^40) give the wide form, with every value exact.
TEST(Timeline, CountersPastTwoToTheFortyBytesWidenTheSamples) {
  constexpr uint64_t kTiB = uint64_t{1} << 40;
  Builder small;
  small.segment(0, kTiB - 1);
  small.alloc(0, kTiB - 1);
  const Timeline packed = build_timeline(small.t);
  EXPECT_FALSE(packed.samples.wide());
  EXPECT_EQ(packed.samples[1], (Sample{kTiB - 1, kTiB - 1, kTiB - 1}));

  Builder b;
  b.segment(0, 4 * kMiB);
  b.alloc(0, 1 * kMiB);
  b.segment(1ULL << 48, 2 * kTiB);
  b.alloc(1ULL << 48, kTiB + kTiB / 2);
  b.free(1ULL << 48, kTiB + kTiB / 2);
  const Timeline tl = build_timeline(b.t);
  EXPECT_TRUE(tl.samples.wide());
  ASSERT_EQ(tl.samples.size(), 6u);
  EXPECT_EQ(tl.samples[0], (Sample{0, 0, 4 * kMiB}));
  EXPECT_EQ(tl.samples[1], (Sample{kMiB, kMiB, 4 * kMiB}));
  EXPECT_EQ(tl.samples[2], (Sample{kMiB, kMiB, 2 * kTiB + 4 * kMiB}));
  EXPECT_EQ(tl.samples[3], (Sample{kMiB + kTiB + kTiB / 2, kMiB + kTiB + kTiB / 2, 2 * kTiB + 4 * kMiB}));
  EXPECT_EQ(tl.samples[4], (Sample{kMiB, kMiB + kTiB + kTiB / 2, 2 * kTiB + 4 * kMiB}));
  EXPECT_EQ(tl.samples[5], (Sample{kMiB, kMiB, 2 * kTiB + 4 * kMiB}));
  EXPECT_EQ(tl.peak, (Sample{kMiB + kTiB + kTiB / 2, kMiB + kTiB + kTiB / 2, 2 * kTiB + 4 * kMiB}));
  EXPECT_EQ(tl.peak_allocated_index, 3u);
}

// One 20 MiB segment with blocks at [0,4) and [10,12) MiB: free 14 MiB, largest gap [12,20) = 8.
TEST(FreeSpace, LargestGapInsideTheSegments) {
  Builder b;
  b.segment(0, 20 * kMiB);
  b.alloc(0, 4 * kMiB);
  b.alloc(4 * kMiB, 6 * kMiB);
  b.alloc(10 * kMiB, 2 * kMiB);
  b.free(4 * kMiB, 6 * kMiB);
  b.t.segments.push_back({0, 20 * kMiB, 0, true, false,
                          {{0, 4 * kMiB, 4 * kMiB, BlockState::kActiveAllocated},
                           {4 * kMiB, 6 * kMiB, 6 * kMiB, BlockState::kInactive},
                           {10 * kMiB, 2 * kMiB, 2 * kMiB, BlockState::kActiveAllocated},
                           {12 * kMiB, 8 * kMiB, 0, BlockState::kInactive}}});
  const FreeSpace end = free_space_before(b.t, b.t.events.size());
  EXPECT_EQ(end.reserved, 20 * kMiB);
  EXPECT_EQ(end.free, 14 * kMiB);
  EXPECT_EQ(end.largest_free_block, 8 * kMiB);
  const FreeSpace before_free = free_space_before(b.t, 4);  // the 6 MiB block still live
  EXPECT_EQ(before_free.free, 8 * kMiB);
  EXPECT_EQ(before_free.largest_free_block, 8 * kMiB);
  const FreeSpace at_start = free_space_before(b.t, 0);
  EXPECT_EQ(at_start.reserved, 0u);
}

// The largest free block after each event, worked by hand: a 20 MiB segment at 0, blocks of 4,
// 4 and 8 MiB at 0, 8 and 12 MiB leave [4, 8) free (4 MiB); freeing the first joins [0, 8) (8
// MiB) only at its free_completed (active until then, as the allocator counts it); a second
// segment of 2 MiB, then filled, changes nothing; the OOM changes nothing.
TEST(FreeSpace, LargestFreeBlockAfterEachEvent) {
  Builder b;
  b.segment(0, 20 * kMiB);                // 20: the whole segment
  b.alloc(0, 4 * kMiB);                   // 16: [4, 20)
  b.alloc(8 * kMiB, 4 * kMiB);            //  8: [12, 20), [4, 8) is 4
  b.alloc(12 * kMiB, 8 * kMiB);           //  4: [4, 8)
  b.free(0, 4 * kMiB);                    //  4 at free_requested, 8 at free_completed: [0, 8)
  b.segment(32 * kMiB, 2 * kMiB);         //  8
  b.alloc(32 * kMiB, 2 * kMiB);           //  8
  b.oom(9 * kMiB, 0);                     //  8
  const std::vector<uint64_t> series = largest_free_block_series(b.t);
  EXPECT_EQ(series, (std::vector<uint64_t>{20 * kMiB, 16 * kMiB, 8 * kMiB, 4 * kMiB, 4 * kMiB,
                                           8 * kMiB, 8 * kMiB, 8 * kMiB, 8 * kMiB}));
  const std::vector<Oom> o = classify_ooms(b.t, build_timeline(b.t), Steps{}, Creep{});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].largest_free_block_bytes, series[o[0].event]);
}

// Without free_completed in the trace a block leaves at free_requested; a segment freed and
// allocated again at the same address starts whole.
TEST(FreeSpace, LargestFreeBlockWithoutCompletionsAndSegmentReuse) {
  Builder b;
  b.segment(0, 10 * kMiB);
  b.alloc(2 * kMiB, 2 * kMiB);                    // [0, 2) and [4, 10): 6
  b.add(Action::kFreeRequested, 2 * kMiB, 2 * kMiB);  // 10
  b.add(Action::kSegmentFree, 0, 10 * kMiB);      // 0: no segment
  b.add(Action::kSegmentAlloc, 0, 6 * kMiB);      // 6
  EXPECT_EQ(largest_free_block_series(b.t),
            (std::vector<uint64_t>{10 * kMiB, 6 * kMiB, 10 * kMiB, 0, 6 * kMiB}));
}

// The one-pass series agrees with free_space_before's rebuild at every event of every fixture
// (ring buffer, torch_npu's workspace and stream pointers, completions, the OOMs).
TEST(FreeSpace, LargestFreeBlockSeriesMatchesTheRebuildOnTheFixtures) {
  for (const char* name : {"healthy.pickle", "leak.pickle", "ringbuffer.pickle", "npu.pickle",
                           "fragmented_oom.pickle", "spike_oom.pickle", "true_peak_oom.pickle"}) {
    const Trace t = read_trace(std::string(PLUMB_TEST_FIXTURES) + "/mem/" + name, 0);
    const std::vector<uint64_t> series = largest_free_block_series(t);
    ASSERT_EQ(series.size(), t.events.size()) << name;
    for (size_t i = 0; i < series.size(); ++i) {
      ASSERT_EQ(series[i], free_space_before(t, i + 1).largest_free_block) << name << " event " << i;
    }
  }
}

// The fragmentation fixture (tests/fixtures/mem/README.md): just before the OOM the largest free
// block is 32 MiB, under the 512 MiB asked, while 2.2 GiB were free in all.
TEST(FreeSpace, LargestFreeBlockFallsUnderTheRequestBeforeTheFragmentationOom) {
  const Trace t = read_trace(std::string(PLUMB_TEST_FIXTURES) + "/mem/fragmented_oom.pickle", 0);
  const std::vector<uint64_t> series = largest_free_block_series(t);
  ASSERT_EQ(series.size(), 336u);
  EXPECT_EQ(series[334], 33554432u);
  EXPECT_EQ(series[335], 33554432u);
  EXPECT_GE(*std::max_element(series.begin(), series.end()), 128 * kMiB);  // step 1's cache
}

// A training loop in one segment of `segment` bytes: weights (100 MiB at 0) once; per step two
// activations (8 MiB at 100 MiB, 2 MiB at 108 MiB) freed at its end and, with `leak`, a 3 MiB
// tensor never freed (at 110 MiB + 3 MiB × step).
Builder training(int steps, bool leak, uint64_t segment = 256 * kMiB) {
  Builder b;
  const uint32_t init = b.stack("init_weights");
  const uint32_t fwd = b.stack("forward");
  const uint32_t kept = b.stack("cache_append");
  b.segment(0, segment);
  b.alloc(0, 100 * kMiB, init);
  for (int s = 0; s < steps; ++s) {
    b.alloc(100 * kMiB, 8 * kMiB, fwd);
    b.alloc(108 * kMiB, 2 * kMiB, fwd);
    if (leak) b.alloc((110 + 3 * s) * kMiB, 3 * kMiB, kept);
    b.free(100 * kMiB, 8 * kMiB);
    b.free(108 * kMiB, 2 * kMiB);
  }
  return b;
}

TEST(Steps, DetectedFromTheRepeatingAllocations) {
  const Builder b = training(12, false);
  const Steps s = detect_steps(b.t);
  EXPECT_EQ(s.source, StepSource::kDetected);
  ASSERT_EQ(s.starts.size(), 12u);
  EXPECT_EQ(s.starts[0], 2u);  // the first 8 MiB activation
  EXPECT_EQ(s.starts[1], 8u);  // 2 allocs + 2 × 2 frees later
  EXPECT_DOUBLE_EQ(s.confidence, 1.0);
}

TEST(Steps, FromARegexOnFunctionNames) {
  const Builder b = training(5, false);
  const Steps s = steps_from_regex(b.t, Regex("forward"), "forward");
  EXPECT_EQ(s.starts.size(), 5u);
  EXPECT_EQ(s.how, "5 step(s) from --step-regex 'forward'");
}

TEST(Creep, ALeakOfThreeMiBPerStepAndAHealthyLoop) {
  const Builder leaking = training(12, true);
  const Timeline tl = build_timeline(leaking.t);
  const Creep c = creep(tl, detect_steps(leaking.t));
  ASSERT_EQ(c.step_min.size(), 11u);  // the last step may be cut short: not fitted
  EXPECT_NEAR(c.slope_bytes_per_step, 3.0 * kMiB, 1e-6);
  EXPECT_EQ(c.verdict, "leak");
  EXPECT_LE(c.ci95_low, c.slope_bytes_per_step);
  const Builder healthy = training(12, false);
  const Creep h = creep(build_timeline(healthy.t), detect_steps(healthy.t));
  EXPECT_NEAR(h.slope_bytes_per_step, 0, 1e-6);
  EXPECT_EQ(h.verdict, "stable");
}

// The rule shared by traces and memory_stats() dumps: minima rising 1 MiB per step for 10 steps
// rise 9 MiB, a leak against a 100 MiB peak (floor max(1 MiB, 0.5 MiB)), stable against 10 GiB
// (floor 0.5% = 51.2 MiB).
TEST(Creep, FromMinimaSharesTheRule) {
  std::vector<uint64_t> mins;
  std::vector<double> every_ten;
  for (uint64_t i = 0; i < 10; ++i) {
    mins.push_back(50 * kMiB + i * kMiB);
    every_ten.push_back(10.0 * static_cast<double>(i));
  }
  const Creep c = creep_from_minima(mins, mins, 100 * kMiB);
  EXPECT_EQ(c.steps, 10u);
  EXPECT_NEAR(c.slope_bytes_per_step, 1.0 * kMiB, 1e-6);
  EXPECT_DOUBLE_EQ(c.ci95_low, c.ci95_high);  // an exact line: no spread
  EXPECT_EQ(c.verdict, "leak");
  const Creep sparse = creep_from_minima(mins, mins, 100 * kMiB, every_ten);
  EXPECT_NEAR(sparse.slope_bytes_per_step, 0.1 * kMiB, 1e-6);
  EXPECT_EQ(sparse.verdict, "leak");  // the same 9 MiB over 90 steps
  EXPECT_EQ(creep_from_minima(mins, mins, 10240 * kMiB).verdict, "stable");
  EXPECT_EQ(creep_from_minima({1, 2, 3}, {1, 2, 3}, 10).verdict, "too few steps");
}

TEST(Creep, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(t_quantile_95(1), 12.706);
  EXPECT_DOUBLE_EQ(t_quantile_95(10), 2.228);
  EXPECT_DOUBLE_EQ(t_quantile_95(1000), 1.960);
}

// 20 MiB segment, live blocks [0,4) and [8,12) MiB: 12 MiB free in gaps of 4 and 8; the device
// has 2 MiB left; a 9 MiB request fails with 14 MiB free: fragmentation, largest block 8 MiB.
TEST(Oom, FragmentationWhenBytesSufficeButNoBlockDoes) {
  Builder b;
  b.segment(0, 20 * kMiB);
  b.alloc(0, 4 * kMiB);
  b.alloc(8 * kMiB, 4 * kMiB);
  b.oom(9 * kMiB, 2 * kMiB);
  const Timeline tl = build_timeline(b.t);
  const std::vector<Oom> o = classify_ooms(b.t, tl, Steps{}, Creep{});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].cause, "fragmentation");
  EXPECT_EQ(o[0].free_bytes, 14 * kMiB);
  EXPECT_EQ(o[0].largest_free_block_bytes, 8 * kMiB);
  EXPECT_EQ(o[0].requested_bytes, 9 * kMiB);
}

TEST(Oom, TruePeakWhenEvenAllFreeBytesFallShort) {
  Builder b;
  b.segment(0, 20 * kMiB);
  b.alloc(0, 18 * kMiB);
  b.oom(9 * kMiB, 1 * kMiB);
  const Timeline tl = build_timeline(b.t);
  const std::vector<Oom> o = classify_ooms(b.t, tl, Steps{}, Creep{});
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].cause, "true_peak");
  EXPECT_EQ(o[0].shortfall_bytes, 6 * kMiB);  // 9 asked, 2 + 1 free
}

// Steps usually peak at 110 MiB in a 120 MiB segment; in step 6 a 64 MiB buffer asks on top of
// the activations with 10 MiB cached and 32 MiB on the device: 22 MiB short, where a usual step
// (110 MiB) plus the shortfall is below the 174 MiB this step reached: a spike.
TEST(Oom, SpikeWhenAUsualStepWouldHaveFit) {
  Builder b = training(6, false, 120 * kMiB);
  b.alloc(100 * kMiB, 8 * kMiB, 1);
  b.alloc(108 * kMiB, 2 * kMiB, 1);
  b.oom(64 * kMiB, 32 * kMiB);
  const Timeline tl = build_timeline(b.t);
  const Steps s = detect_steps(b.t);
  const Creep c = creep(tl, s);
  const std::vector<Oom> o = classify_ooms(b.t, tl, s, c);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].usual_step_peak_bytes, 110 * kMiB);
  EXPECT_EQ(o[0].shortfall_bytes, 22 * kMiB);
  EXPECT_EQ(o[0].cause, "spike") << o[0].explanation;
}

// 3 MiB leaked per step for 10 steps in a 200 MiB segment: then 138 MiB live, an 80 MiB request
// with 62 + 2 MiB free is 16 MiB short, less than what the baseline rose.
TEST(Oom, CreepWhenTheRiseCoversTheShortfall) {
  Builder b = training(10, true, 200 * kMiB);
  b.alloc(100 * kMiB, 8 * kMiB, 1);
  b.oom(80 * kMiB, 2 * kMiB);
  const Timeline tl = build_timeline(b.t);
  const Steps s = detect_steps(b.t);
  const Creep c = creep(tl, s);
  const std::vector<Oom> o = classify_ooms(b.t, tl, s, c);
  ASSERT_EQ(o.size(), 1u);
  // The extra 8 MiB allocation makes that key repeat 11 times: the 2 MiB activation (10 times)
  // anchors the steps, so the failure counts in the tenth step (index 9): a rise of 27 MiB.
  EXPECT_EQ(o[0].step, 9);
  EXPECT_EQ(o[0].shortfall_bytes, 16 * kMiB);
  EXPECT_EQ(o[0].cause, "creep") << o[0].explanation;
}

TEST(Categories, DefaultRulesAndLiveBytesAtAnEvent) {
  Builder b = training(3, false);
  const Categorizer c(b.t, default_category_rules());
  EXPECT_EQ(c.category(0), "parameters");   // init_weights
  EXPECT_EQ(c.category(1), "activations");  // forward
  EXPECT_EQ(c.category(kNoStack), "other");
  const auto live = live_by_category(b.t, c, 3);  // weights + the first step's two activations
  EXPECT_EQ(live.at("parameters"), 100 * kMiB);
  EXPECT_EQ(live.at("activations"), 10 * kMiB);
}

// Rules files are user patterns: RE2's, refused when read with RE2's reason and the line; a
// pattern std::regex backtracked on for minutes ('(a+)+b') matches a 1 MB frame name in linear time.
TEST(Categories, RulesFileIsRe2) {
  const std::string path = test::temp_dir("category-rules") + "/rules.txt";
  test::write_file(path, "# kv cache first\nkv = kv_cache|(a+)+b\n");
  const std::vector<CategoryRule> rules = read_category_rules(path);
  ASSERT_EQ(rules.size(), 1u);
  Builder b;
  const uint32_t long_name = b.stack(std::string(1 << 20, 'a') + "b");
  const uint32_t unmatched = b.stack(std::string(1 << 20, 'a'));
  const Categorizer c(b.t, rules);
  EXPECT_EQ(c.category(long_name), "kv");
  EXPECT_EQ(c.category(unmatched), "other");
  test::write_file(path, "kv = kv_cache\nbad = (?<=x)y\n");
  try {
    read_category_rules(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), (path + ":2: '(?<=x)y': not a valid regular expression (invalid perl "
                                   "operator: (?<)").c_str());
  }
}

}  // namespace
}  // namespace plumb::mem
