// Live bytes by category after every event: worked by hand on a small trace, and on the leak
// fixture, where the categories add up to the timeline's allocated bytes at every event and
// match live_by_category at the peak.
#include "mem/category_timeline.h"

#include <gtest/gtest.h>

#include "mem/analysis.h"
#include "mem/snapshot_reader.h"

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
};

std::vector<uint64_t> row(const CategoryTimeline& ct, const std::string& name) {
  for (size_t i = 0; i < ct.categories.size(); ++i) {
    if (ct.categories[i] == name) return ct.bytes[i];
  }
  ADD_FAILURE() << "no category " << name;
  return {};
}

// Events: a 4 MiB activation (forward), a 2 MiB gradient (backward), the free of a 3 MiB block
// allocated before the trace, the activation freed, a 1 MiB block of no known kind.
TEST(CategoryTimeline, LiveBytesPerCategoryAfterEachEvent) {
  Builder b;
  const uint32_t forward = b.stack("forward");
  const uint32_t backward = b.stack("backward");
  const uint32_t helper = b.stack("helper");
  b.add(Action::kSegmentAlloc, 0, 20 * kMiB);
  b.add(Action::kAlloc, 0, 4 * kMiB, forward);
  b.add(Action::kAlloc, 4 * kMiB, 2 * kMiB, backward);
  b.add(Action::kFreeRequested, 10 * kMiB, 3 * kMiB);
  b.add(Action::kFreeRequested, 0, 4 * kMiB);
  b.add(Action::kFreeCompleted, 0, 4 * kMiB);
  b.add(Action::kAlloc, 0, 1 * kMiB, helper);
  const Timeline tl = build_timeline(b.t);
  ASSERT_EQ(tl.initial.allocated, 3 * kMiB);
  const CategoryTimeline ct =
      category_timeline(b.t, tl, Categorizer(b.t, default_category_rules()));
  ASSERT_EQ(ct.categories.size(), 7u);
  EXPECT_EQ(ct.categories[0], kBeforeTheTrace);
  EXPECT_EQ(ct.categories[1], "parameters");
  EXPECT_EQ(ct.categories[6], "other");
  EXPECT_EQ(row(ct, "activations"),
            (std::vector<uint64_t>{0, 4 * kMiB, 4 * kMiB, 4 * kMiB, 0, 0, 0}));
  EXPECT_EQ(row(ct, "gradients"),
            (std::vector<uint64_t>{0, 0, 2 * kMiB, 2 * kMiB, 2 * kMiB, 2 * kMiB, 2 * kMiB}));
  EXPECT_EQ(row(ct, kBeforeTheTrace),
            (std::vector<uint64_t>{3 * kMiB, 3 * kMiB, 3 * kMiB, 0, 0, 0, 0}));
  EXPECT_EQ(row(ct, "other"), (std::vector<uint64_t>{0, 0, 0, 0, 0, 0, 1 * kMiB}));
  for (size_t i = 0; i < b.t.events.size(); ++i) {
    EXPECT_EQ(ct.total(i), tl.samples[i].allocated) << "event " << i;
  }
}

// A category the rules name that kCategories does not: a row of its own after the built-in ones.
TEST(CategoryTimeline, CategoriesOfCustomRules) {
  Builder b;
  const uint32_t kv = b.stack("kv_cache_alloc");
  b.add(Action::kAlloc, 0, 5 * kMiB, kv);
  std::vector<CategoryRule> rules = default_category_rules();
  rules.insert(rules.begin(), {"kv cache", "kv_cache", Regex("kv_cache")});
  const CategoryTimeline ct = category_timeline(b.t, build_timeline(b.t), Categorizer(b.t, rules));
  ASSERT_EQ(ct.categories.size(), 8u);
  EXPECT_EQ(ct.categories.back(), "kv cache");
  EXPECT_EQ(ct.bytes.back(), (std::vector<uint64_t>{5 * kMiB}));
}

TEST(CategoryTimeline, AddsUpToAllocatedOnTheLeakFixture) {
  const Trace t = read_trace(PLUMB_TEST_FIXTURES "/mem/leak.pickle", 0);
  const Analysis a = analyze(t, {});
  const CategoryTimeline ct =
      category_timeline(t, a.timeline, Categorizer(t, default_category_rules()));
  ASSERT_EQ(ct.bytes.front().size(), t.events.size());
  for (size_t i = 0; i < t.events.size(); ++i) {
    ASSERT_EQ(ct.total(i), a.timeline.samples[i].allocated) << "event " << i;
  }
  const size_t peak = a.timeline.peak_allocated_index;
  for (size_t c = 0; c < ct.categories.size(); ++c) {
    const auto it = a.live_at_peak.find(ct.categories[c]);
    EXPECT_EQ(ct.bytes[c][peak], it == a.live_at_peak.end() ? 0 : it->second) << ct.categories[c];
  }
}

}  // namespace
}  // namespace plumb::mem
