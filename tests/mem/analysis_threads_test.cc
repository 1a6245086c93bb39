// mem::analyze on two threads gives what it gives on one, field by field: on every snapshot of
// tests/fixtures/mem and on random traces (steps, leaks, OOMs, frees of blocks the ring buffer
// dropped, pending frees, torch_npu workspaces, step marks, a --step-regex).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "mem/analysis.h"
#include "mem/snapshot_reader.h"

namespace plumb::mem {
namespace {

const std::string kDir = PLUMB_TEST_FIXTURES "/mem/";

void expect_same(const Analysis& one, const Analysis& two) {
  EXPECT_EQ(one.source, two.source);
  EXPECT_EQ(one.events, two.events);
  EXPECT_EQ(one.has_time, two.has_time);
  EXPECT_EQ(one.timeline.samples.size(), two.timeline.samples.size());
  EXPECT_TRUE(one.timeline.samples == two.timeline.samples);
  EXPECT_EQ(one.timeline.initial, two.timeline.initial);
  EXPECT_EQ(one.timeline.peak, two.timeline.peak);
  EXPECT_EQ(one.timeline.peak_allocated_index, two.timeline.peak_allocated_index);
  EXPECT_EQ(one.timeline.peak_reserved_index, two.timeline.peak_reserved_index);
  EXPECT_EQ(one.timeline.dropped_frees, two.timeline.dropped_frees);
  EXPECT_EQ(one.steps.source, two.steps.source);
  EXPECT_EQ(one.steps.starts, two.steps.starts);
  EXPECT_EQ(one.steps.confidence, two.steps.confidence);
  EXPECT_EQ(one.steps.how, two.steps.how);
  EXPECT_TRUE(one.per_step == two.per_step);
  EXPECT_EQ(one.creep.steps, two.creep.steps);
  EXPECT_EQ(one.creep.step_min, two.creep.step_min);
  EXPECT_EQ(one.creep.step_peak, two.creep.step_peak);
  EXPECT_EQ(one.creep.slope_bytes_per_step, two.creep.slope_bytes_per_step);
  EXPECT_EQ(one.creep.ci95_low, two.creep.ci95_low);
  EXPECT_EQ(one.creep.ci95_high, two.creep.ci95_high);
  EXPECT_EQ(one.creep.verdict, two.creep.verdict);
  EXPECT_TRUE(one.grew == two.grew);
  EXPECT_EQ(one.live_at_peak, two.live_at_peak);
  EXPECT_TRUE(one.at_peak == two.at_peak);
  EXPECT_TRUE(one.at_end == two.at_end);
  EXPECT_EQ(one.fragmentation, two.fragmentation);
  EXPECT_TRUE(one.ooms == two.ooms);
  EXPECT_TRUE(one == two);  // every field, including any added later
}

void expect_same_on_one_and_two_threads(const Trace& t, AnalyzeOptions o = {}) {
  o.threads = 1;
  const Analysis one = analyze(t, o);
  o.threads = 2;
  const Analysis two = analyze(t, o);
  expect_same(one, two);
}

TEST(AnalyzeThreads, EveryFixtureTheSameOnOneAndTwoThreads) {
  for (const char* file : {"healthy.pickle", "healthy_p2.pickle", "healthy_p5.pickle", "healthy.json",
                           "leak.pickle", "fragmented_oom.pickle", "spike_oom.pickle",
                           "true_peak_oom.pickle", "ringbuffer.pickle", "npu.pickle"}) {
    SCOPED_TRACE(file);
    const Trace t = read_trace(kDir + file, 0);
    expect_same_on_one_and_two_threads(t);
    AnalyzeOptions by_regex;
    by_regex.step_regex = "forward|train_step";
    expect_same_on_one_and_two_threads(t, by_regex);
  }
}

// The fixtures that exercise the halves run on the second thread: a leak (the sites that grew),
// an OOM (its free space), the ring buffer's dropped frees.
TEST(AnalyzeThreads, TheFixturesCoverWhatTheSecondThreadComputes) {
  EXPECT_FALSE(analyze(read_trace(kDir + "leak.pickle", 0), {}).grew.empty());
  EXPECT_FALSE(analyze(read_trace(kDir + "spike_oom.pickle", 0), {}).ooms.empty());
  EXPECT_GT(analyze(read_trace(kDir + "ringbuffer.pickle", 0), {}).timeline.dropped_frees, 0u);
}

// A random training-like trace: steps of allocations under a handful of stacks, freed (often
// with a completion on another stream) in random order, some leaked, some segments released,
// frees of blocks allocated before the trace, OOMs, and blocks still live in the end segments.
class RandomTrace {
 public:
  explicit RandomTrace(uint64_t seed) : rng_(seed) {}

  Trace make() {
    const char* names[] = {"forward", "backward", "_multi_tensor_adam", "all_reduce",
                           "init_weights", "cache_append", "ProfilerStep#1", "train_step"};
    for (const char* n : names) {
      t_.frames.push_back({n, "train.py", 1});
      t_.stacks.push_back({static_cast<uint32_t>(t_.frames.size() - 1)});
    }
    t_.has_time = coin(0.5);
    completions_ = coin(0.6);
    if (coin(0.3)) add(Action::kWorkspaceSnapshot, kWorkspace, 4096, kNoStack);
    for (int i = 0; i < 3; ++i) dropped_free();
    add(Action::kSegmentAlloc, next_segment(), 64 << 20, kNoStack);
    const int steps = 3 + static_cast<int>(rng_() % 10);
    const bool leaks = coin(0.5);
    for (int s = 0; s < steps; ++s) step(s, leaks);
    if (coin(0.5)) t_.step_marks = {0, t_.events.size() / 2};
    end_segments();
    return std::move(t_);
  }

 private:
  static constexpr uint64_t kWorkspace = 0x900000;

  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  uint64_t next_segment() { return segment_ += 1ULL << 32; }

  void add(Action a, uint64_t addr, uint64_t size, uint32_t stack) {
    Event e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    e.stack = stack;
    if (t_.has_time) e.time_us = static_cast<double>(t_.events.size()) * 10;
    t_.events.push_back(e);
  }

  void dropped_free() {
    const uint64_t addr = 0x100000 + 512 * (rng_() % 64);
    add(Action::kFreeRequested, addr, 512 * (1 + rng_() % 8), kNoStack);
  }

  void free_one(size_t i) {
    const auto [addr, size] = live_[i];
    add(Action::kFreeRequested, addr, size, 0);
    if (completions_) add(Action::kFreeCompleted, addr, size, 0);
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void step(int s, bool leaks) {
    add(Action::kAlloc, segment_ + 512, 1 << 20, 6);  // the same (size, stack) every step
    live_.push_back({segment_ + 512, 1 << 20});
    const int n = 4 + static_cast<int>(rng_() % 12);
    for (int i = 0; i < n; ++i) {
      const uint64_t size = 512 * (1 + rng_() % 4096);
      const uint64_t addr = segment_ + (1 << 21) + (next_addr_ += size + 512);
      add(Action::kAlloc, addr, size, static_cast<uint32_t>(rng_() % 4));
      live_.push_back({addr, size});
    }
    if (leaks) add(Action::kAlloc, segment_ + (40 << 20) + static_cast<uint64_t>(s) * (2 << 20), 2 << 20, 5);
    if (coin(0.2)) {
      add(Action::kOom, 0, 1ULL << (30 + rng_() % 4), kNoStack);
      if (coin(0.5)) t_.device_free.push_back({t_.events.size() - 1, 1ULL << (20 + rng_() % 10)});
    }
    if (coin(0.15)) dropped_free();
    while (!live_.empty() && coin(0.9)) free_one(rng_() % live_.size());
    if (coin(0.2)) {
      add(Action::kSegmentFree, segment_, 64 << 20, kNoStack);
      add(Action::kSegmentAlloc, next_segment(), 64 << 20, kNoStack);
      live_.clear();
      next_addr_ = 0;
    }
  }

  // The end state: the last segment with what is still live in it, and one segment (with a
  // block) the trace never allocated.
  void end_segments() {
    Segment last{segment_, 64 << 20, 0, true, false, {}};
    for (const auto& [addr, size] : live_) {
      last.blocks.push_back({addr, size, size, BlockState::kActiveAllocated});
    }
    t_.segments.push_back(last);
    t_.segments.push_back({1ULL << 50, 2 << 20, 0, false, false,
                           {{1ULL << 50, 4096, 4096, BlockState::kActiveAllocated}}});
  }

  std::mt19937_64 rng_;
  Trace t_;
  bool completions_ = true;
  uint64_t segment_ = 0;
  uint64_t next_addr_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> live_;
};

TEST(AnalyzeThreads, RandomTracesTheSameOnOneAndTwoThreads) {
  int leaks = 0, ooms = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Trace t = RandomTrace(seed).make();
    expect_same_on_one_and_two_threads(t);
    AnalyzeOptions by_regex;
    by_regex.step_regex = "ProfilerStep";
    expect_same_on_one_and_two_threads(t, by_regex);
    AnalyzeOptions o;
    o.threads = 1;
    const Analysis a = analyze(t, o);
    leaks += a.grew.empty() ? 0 : 1;
    ooms += a.ooms.empty() ? 0 : 1;
  }
  // The random traces reach the leak sites and the OOMs, so the second thread's half is compared.
  EXPECT_GT(leaks, 0);
  EXPECT_GT(ooms, 0);
}

TEST(AnalyzeThreads, AnEmptyTrace) {
  Trace t;
  t.source = "empty";
  expect_same_on_one_and_two_threads(t);
}

// A step regex that is no regex: the error from the second thread reaches the caller.
TEST(AnalyzeThreads, AnErrorOnTheOtherThreadReachesTheCaller) {
  const Trace t = RandomTrace(7).make();
  AnalyzeOptions o;
  o.step_regex = "(unclosed";
  for (int threads : {2, 1}) {
    o.threads = threads;
    try {
      analyze(t, o);
      ADD_FAILURE() << "no error on " << threads << " thread(s)";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "--step-regex '(unclosed': not a valid regular expression (missing ): "
                             "(unclosed)");
    }
  }
}

}  // namespace
}  // namespace plumb::mem
