// The sites behind a leak verdict, on the leaking fixture (one 3 MiB tensor per step from
// training_log, fixtures/mem/README.md) and on a trace built by hand.
#include <gtest/gtest.h>

#include "mem/analysis.h"
#include "mem/leak_sites.h"
#include "mem/snapshot_reader.h"

namespace plumb::mem {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::string fixture(const std::string& name) {
  return std::string(PLUMB_TEST_FIXTURES) + "/mem/" + name;
}

TEST(LeakSites, TheLeakingFixtureNamesTrainingLogAtThreeMiBPerStep) {
  const Trace t = read_trace(fixture("leak.pickle"), 0);
  const Analysis a = analyze(t, {});
  const auto sites = growing_sites(t, a.steps, kMiB);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_DOUBLE_EQ(sites[0].bytes_per_step, 3145728.0);
  EXPECT_EQ(sites[0].where,
            "training_log (megatron/training/training.py:1275) < train "
            "(megatron/training/training.py:1540)");
  EXPECT_EQ(sites[0].live_last - sites[0].live_first, 3145728u * (a.steps.starts.size() - 1));
  EXPECT_EQ(sites[0].allocations_live, a.steps.starts.size() - 1);
}

TEST(LeakSites, TheHealthyFixtureHasNone) {
  const Trace t = read_trace(fixture("healthy.pickle"), 0);
  EXPECT_TRUE(growing_sites(t, analyze(t, {}).steps, kMiB).empty());
}

// Two sites: one keeps 2 MiB per step, one 1 MiB every second step; both grow, the first more.
TEST(LeakSites, RankedBySlope) {
  Trace t;
  t.frames = {{"a", "x.py", 1}, {"b", "x.py", 2}, {"step", "x.py", 3}};
  t.stacks = {{0}, {1}, {2}};
  Steps s;
  uint64_t addr = 0;
  auto add = [&](Action act, uint64_t a, uint64_t size, uint32_t stack) {
    Event e;
    e.action = act;
    e.addr = a;
    e.size = size;
    e.stack = stack;
    t.events.push_back(e);
  };
  for (int k = 0; k < 6; ++k) {
    s.starts.push_back(t.events.size());
    add(Action::kAlloc, ++addr, 4 * kMiB, 2);  // the step's own, freed
    add(Action::kAlloc, ++addr, 2 * kMiB, 0);
    if (k % 2 == 1) add(Action::kAlloc, ++addr, kMiB, 1);
    add(Action::kFreeRequested, addr - (k % 2 == 1 ? 2 : 1), 4 * kMiB, 2);
  }
  const auto sites = growing_sites(t, s, kMiB);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].where, "a (x.py:1)");
  EXPECT_DOUBLE_EQ(sites[0].bytes_per_step, 2.0 * kMiB);
  EXPECT_EQ(sites[1].where, "b (x.py:2)");
  EXPECT_GT(sites[1].bytes_per_step, 0.4 * kMiB);
  EXPECT_LT(sites[1].bytes_per_step, 0.6 * kMiB);
  EXPECT_TRUE(growing_sites(t, Steps{}, kMiB).empty());  // no steps: nothing to say
}

}  // namespace
}  // namespace plumb::mem
