// Layouts practitioners would not run (plan/plausible.h): each rule's test and its exact message,
// and the note that names the overlap hiding a step's communication.
#include "plan/plausible.h"

#include <gtest/gtest.h>

#include "plan/models.h"

namespace plumb::plan {
namespace {

ModelSpec layers(int n) {
  ModelSpec m = test_models::gpt3();
  m.layers = n;
  return m;
}

Layout pipeline(int pp, int vpp = 1) {
  Layout p;
  p.pp = pp;
  p.vpp = vpp;
  return p;
}

TEST(Plausible, TheRulesByName) {
  std::vector<std::string> names;
  for (const PlausibleRule& rule : plausible_rules()) names.push_back(rule.name);
  EXPECT_EQ(names, (std::vector<std::string>{"thin-stages", "uneven-stages"}));
}

// 80 layers over 50 stages: 1.6 per stage (and 50 does not divide 80 either).
TEST(Plausible, ThinStages) {
  EXPECT_TRUE(plausible(layers(80), pipeline(40)));  // 2 per stage
  EXPECT_FALSE(plausible(layers(80), pipeline(80)));  // 1 per stage, dividing
  EXPECT_EQ(unusual_reasons(layers(80), pipeline(80)),
            std::vector<std::string>{
                "unusual layout (thin-stages): pp 80 leaves 1 of the 80 layers per stage, fewer "
                "than 2; published pipelines keep at least 2 per stage (a smaller --pp)"});
  const std::vector<std::string> both = unusual_reasons(layers(80), pipeline(50));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0],
            "unusual layout (thin-stages): pp 50 leaves 1.6 of the 80 layers per stage, fewer "
            "than 2; published pipelines keep at least 2 per stage (a smaller --pp)");
}

TEST(Plausible, UnevenStages) {
  EXPECT_TRUE(plausible(layers(96), pipeline(8, 4)));   // 32 stages of 3
  EXPECT_FALSE(plausible(layers(126), pipeline(16, 7)));  // 112 stages over 126 layers
  EXPECT_EQ(unusual_reasons(layers(126), pipeline(16, 7)),
            std::vector<std::string>{
                "unusual layout (uneven-stages): pp 16 × vpp 7 = 112 stages do not divide the 126 "
                "layers; plumb would give the middle stages the extra layers, a split no framework "
                "documents: the documented uneven splits give the first and last stages fewer "
                "(Megatron-LM's --decoder-first-pipeline-num-layers and "
                "--decoder-last-pipeline-num-layers; Llama 3 405B's 126 layers on 16 stages)"});
  // DeepSeek-V3's 61 layers on 16 stages: plumb's split (4 on stages 1 to 13, 3 on the others) is
  // its own.
  EXPECT_EQ(unusual_reasons(test_models::deepseek_v3(), pipeline(16)),
            std::vector<std::string>{
                "unusual layout (uneven-stages): pp 16 stages do not divide the 61 layers; plumb "
                "would give the middle stages the extra layers, a split no framework documents: "
                "the documented uneven splits give the first and last stages fewer (Megatron-LM's "
                "--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers; "
                "Llama 3 405B's 126 layers on 16 stages)"});
}

// plumb's split is the documented one when only the first stage, or the first and the last, hold
// one layer fewer: Llama 3 405B's 126 layers on 16 stages (7, 8 × 14, 7), 127 on 16 (7, 8 × 15).
TEST(Plausible, TheDocumentedUnevenSplitIsUsual) {
  EXPECT_TRUE(plausible(layers(126), pipeline(16)));
  EXPECT_EQ(stage_layers(126, 16, 0), 7);
  EXPECT_EQ(stage_layers(126, 16, 15), 7);
  EXPECT_TRUE(plausible(layers(127), pipeline(16)));
  EXPECT_EQ(stage_layers(127, 16, 0), 7);
  EXPECT_EQ(stage_layers(127, 16, 15), 8);
  EXPECT_TRUE(plausible(layers(7), pipeline(2)));       // 3 on the first, 4 on the last
  EXPECT_FALSE(plausible(layers(125), pipeline(16)));   // the first and last and another fewer
  EXPECT_FALSE(plausible(layers(126), pipeline(16, 2)));  // interleaved: chunks of 126/32
}

Prediction quiet(Layout p) {
  Prediction pred;
  pred.layout = p;
  pred.step_time_s = 10;
  pred.comm_wait_share = 0;
  return pred;
}

TEST(Plausible, NoExposedCommunicationNamesWhatHidesIt) {
  Layout p;
  p.tp = 8;
  p.ep = 8;
  p.pp = 4;
  p.dp = 16;
  p.tp_overlap = true;
  p.ep_overlap = true;
  p.schedule = Schedule::kDualPipe;
  EXPECT_EQ(hidden_communication(quiet(p), true),
            "no communication is exposed: --tp-overlap hides the TP all-gathers and "
            "reduce-scatters behind the GEMMs; --ep-overlap hides the EP all-to-all behind the MoE "
            "layers' compute; DualPipe hides the PP sends behind the paired chunk's compute; the "
            "last micro-batch's backward hides the DP gradient reduction (Megatron's "
            "--overlap-grad-reduce; --no-dp-overlap turns it off)");
  Layout q;
  q.cp = 2;
  q.dp = 4;
  q.zero = 3;
  q.ep = 1;
  EXPECT_EQ(hidden_communication(quiet(q), false),
            "no communication is exposed: attention's compute hides the CP ring's KV exchange; "
            "each micro-batch's compute hides ZeRO-3's weight all-gathers and gradient "
            "reduce-scatters");
  // A dimension no modelled overlap hides says how small it is instead.
  Layout r;
  r.dp = 2;
  Prediction tiny = quiet(r);
  tiny.breakdown.dp = 0.001;
  EXPECT_EQ(hidden_communication(tiny, false),
            "no communication is exposed: the DP communication takes 0.001 s, under 0.05% of the "
            "step");
}

TEST(Plausible, NothingToSayWhenCommunicationShowsOrThereIsNone) {
  Layout p;
  p.tp = 8;
  Prediction shown = quiet(p);
  shown.comm_wait_share = kNoExposedShare;
  EXPECT_EQ(hidden_communication(shown, true), "");
  EXPECT_EQ(hidden_communication(quiet(Layout{}), true), "");  // one device
}

}  // namespace
}  // namespace plumb::plan
