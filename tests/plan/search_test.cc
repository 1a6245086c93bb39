// plumb plan search: what it enumerates, what it drops, and that it ranks by throughput.
#include "plan/search.h"

#include <gtest/gtest.h>

#include "plan/models.h"
#include "plan/plausible.h"

namespace plumb::plan {
namespace {

HardwareSpec h100() { return test_models::hopper(); }

TEST(Search, RanksFittingLayoutsByThroughput) {
  const ModelSpec m = test_models::gpt3();
  const HardwareSpec hw = h100();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predictor(m, hw, net, "bf16", compute_model(hw));
  SearchSpace s;
  s.devices = 1024;
  int calls = 0;
  const SearchResult r = search(predictor, s, 5, [&](int64_t done, int64_t total) {
    EXPECT_LE(done, total);
    ++calls;
  });
  EXPECT_GT(calls, 0);
  ASSERT_EQ(r.top.size(), 5u);
  EXPECT_GT(r.candidates, r.valid);
  EXPECT_GT(r.valid, r.fitting);
  for (size_t i = 1; i < r.top.size(); ++i) EXPECT_GE(r.top[i - 1].tokens_per_s, r.top[i].tokens_per_s);
  for (const Prediction& p : r.top) {
    EXPECT_TRUE(p.memory.fits());
    EXPECT_LE(p.layout.tp, 8);  // within the node unless --max-tp says otherwise
    EXPECT_EQ(p.layout.devices(), 1024);
    EXPECT_TRUE(layout_problems(m, p.layout, 1024).empty());
    EXPECT_LE(p.layout.global_batch * 2048, kMaxBatchOvershoot * kDefaultBatchTokens);
  }
  // The best is the best of everything that fits: no single layout the search skipped beats it.
  Layout manual;
  manual.tp = 8;
  manual.pp = 8;
  manual.dp = 16;
  manual.global_batch = 8192;
  manual.recompute = Recompute::kSelective;
  manual.zero = 1;
  ASSERT_TRUE(predictor.memory(manual).fits());
  EXPECT_GE(r.top.front().tokens_per_s, predictor(manual).tokens_per_s);
}

// The search skips predicting a layout whose bound (the same with more overlap, or with less
// recomputation) is below the k-th best so far. That must not change what it finds: the top 3 of
// a MoE model, with overlap and schedules in the space, equals the first 3 of the whole ranking
// (a top as large as the space never fills, so nothing is skipped there), with the same counts.
TEST(Search, SkippingDominatedLayoutsChangesNothing) {
  ModelSpec m = test_models::gpt3();
  m.layers = 24;
  m.moe = MoeSpec{16, 2, 1, 4096, 1, 2};
  const HardwareSpec hw = h100();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predictor(m, hw, net, "bf16", compute_model(hw));
  SearchSpace s;
  s.devices = 256;
  const SearchResult top = search(predictor, s, 3);
  const SearchResult all = search(predictor, s, 1000000);
  ASSERT_EQ(top.top.size(), 3u);
  ASSERT_GT(all.top.size(), 100u);
  EXPECT_EQ(top.candidates, all.candidates);
  EXPECT_EQ(top.valid, all.valid);
  EXPECT_EQ(top.fitting, all.fitting);
  EXPECT_EQ(static_cast<int64_t>(all.top.size()), all.fitting);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(top.top[i].tokens_per_s, all.top[i].tokens_per_s) << i;
  }
}

TEST(Search, NothingFitsSaysSoWithCounts) {
  const ModelSpec m = test_models::gpt3();
  const HardwareSpec hw = h100();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predictor(m, hw, net, "bf16", compute_model(hw));
  SearchSpace s;
  s.devices = 2;  // 175B on two devices: valid layouts exist, none fits
  const SearchResult r = search(predictor, s, 3);
  EXPECT_GT(r.valid, 0);
  EXPECT_EQ(r.fitting, 0);
  EXPECT_TRUE(r.top.empty());
}

// Layouts that would need a batch over twice the tokens asked for are counted apart, so the CLI
// can say that more tokens per step, not more memory, would help.
TEST(Search, OversizedBatchesAreCountedApart) {
  const ModelSpec m = test_models::gpt3();
  const HardwareSpec hw = h100();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predictor(m, hw, net, "bf16", compute_model(hw));
  SearchSpace s;
  s.devices = 1024;
  s.batch_tokens = 2048;  // one sequence per step: every layout with dp > 2 overshoots
  const SearchResult r = search(predictor, s, 3);
  EXPECT_GT(r.oversized, 0);
  for (const Prediction& p : r.top) EXPECT_LE(p.layout.global_batch * 2048, 2 * 2048);
}


// Layouts practitioners would not run (thin or uneven pipeline stages, plan/plausible.h) are
// counted apart and left out; allow_unusual puts them back among the valid ones.
TEST(Search, UnusualLayoutsAreLeftOutUnlessAllowed) {
  ModelSpec m = test_models::llama3_8b();
  m.layers = 30;  // no interleaved pp × vpp divides it; pp 16 leaves fewer than 2 per stage
  const HardwareSpec hw = h100();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predictor(m, hw, net, "bf16", compute_model(hw));
  SearchSpace s;
  s.devices = 64;
  s.recomputes = {Recompute::kSelective};
  s.zeros = {1};
  const SearchResult usual = search(predictor, s, 1000000);
  EXPECT_GT(usual.unusual, 0);
  for (const Prediction& p : usual.top) {
    EXPECT_TRUE(plausible(m, p.layout)) << p.layout.pp << " " << p.layout.vpp;
  }
  s.allow_unusual = true;
  const SearchResult all = search(predictor, s, 1000000);
  EXPECT_EQ(all.unusual, 0);
  EXPECT_EQ(all.candidates, usual.candidates);
  EXPECT_EQ(all.valid + all.oversized, usual.valid + usual.oversized + usual.unusual);
  int unusual = 0;
  for (const Prediction& p : all.top) unusual += plausible(m, p.layout) ? 0 : 1;
  EXPECT_GT(unusual, 0);
  EXPECT_EQ(static_cast<int64_t>(all.top.size()) - unusual, usual.fitting);
}

}  // namespace
}  // namespace plumb::plan
