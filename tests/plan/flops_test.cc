#include "plan/flops.h"

#include <gtest/gtest.h>

#include "plan/models.h"

namespace plumb::plan {
namespace {

using test_models::gpt3;

// Narayanan et al. 2021, Eq. (3) without and with full recomputation, per token (B·s = 1):
// 72·l·h²·(1 + s/(6h) + V/(12·l·h)) and 96·l·h²·(1 + s/(6h) + V/(16·l·h)).
TEST(Flops, MatchesMegatronsClosedFormForGpt3) {
  const ModelSpec m = gpt3();
  const double l = 96, h = 12288, s = 2048, v = 50257;
  const double no_recompute = 72 * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  const double recompute = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  EXPECT_NEAR(model_flops_per_token(m) / no_recompute, 1.0, 1e-12);
  EXPECT_NEAR(full_recompute_flops_per_token(m) / recompute, 1.0, 1e-12);
  // ≈ 1.076e12: 6·N (N = 174.6e9) plus attention's quadratic term and the logits.
  EXPECT_NEAR(model_flops_per_token(m), 1.0764e12, 0.0001e12);
}

// GQA shrinks K and V: Llama 3 8B's attention projections are 2·41,943,040 FLOPs per token, and
// its SwiGLU FFN 2·176,160,768; attention's quadratic term 4·8192·4096.
TEST(Flops, GqaAndSwigluLayer) {
  const ModelSpec m = test_models::llama3_8b();
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 0), 2.0 * 41943040 + 4.0 * 8192 * 4096 + 2.0 * 176160768);
  EXPECT_DOUBLE_EQ(forward_flops_per_token(m),
                   32 * layer_forward_flops(m, 0) + 2.0 * 4096 * 128256);
}

// MoE: only the top_k routed and the shared experts run per token, plus the router; the first
// dense layers run the dense FFN.
TEST(Flops, MoeCountsActiveExpertsOnly) {
  ModelSpec m;
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.vocab = 1000;
  m.seq_len = 1024;
  m.ffn_type = FfnType::kSwiglu;
  m.moe = MoeSpec{64, 6, 2, 512, 1};
  const double attention = 2.0 * 4 * 1024 * 1024 + 4.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 0), attention + 2.0 * 3 * 1024 * 4096);
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 1), attention + 2.0 * 8 * 3 * 1024 * 512 + 2.0 * 1024 * 64);
}

// head_dim widens what attention computes: Qwen3-30B-A3B's 32 heads of 128 are 4096 wide on a
// 2048 model. Scores 4·s·heads·head_dim = 4·4096·4096 = 67,108,864 (4·s·h would be half);
// layer: 2·18,874,368 attention + 67,108,864 + 8 experts 2·8·4,718,592 = 75,497,472 + router
// 2·2048·128 = 524,288: 180,879,360.
TEST(Flops, HeadDimWidensProjectionsAndScores) {
  const ModelSpec m = test_models::qwen3_30b_a3b();
  EXPECT_DOUBLE_EQ(attention_score_flops(m), 67108864);
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 0), 180879360);
  EXPECT_DOUBLE_EQ(mtp_forward_flops(m), 0);
}

// MLA scores: Q·Kᵀ over heads·(nope + rope) = 24,576, scores·V over heads·v = 16,384:
// 2·4096·24,576 + 2·4096·16,384 = 335,544,320 per token.
// An MoE layer: 2·187,107,328 attention + 335,544,320 + 9 experts 2·9·44,040,192 = 792,723,456 +
// router 2·7168·256 = 3,670,016: 1,506,152,448; a dense layer 374,214,656 + 335,544,320 +
// 2·396,361,728: 1,502,482,432. The MTP module: its MoE layer + M 2·2·7168² = 205,520,896 + its
// logits 2·7168·129,280 = 1,853,358,080: 3,565,031,424. Forward: 3 dense + 58 MoE layers
// (91,864,289,280) + logits 1,853,358,080 + MTP = 97,282,678,784 FLOPs per token.
TEST(Flops, MultiHeadLatentAttentionAndMultiTokenPrediction) {
  const ModelSpec m = test_models::deepseek_v3();
  EXPECT_DOUBLE_EQ(attention_score_flops(m), 335544320);
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 0), 1502482432);
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 3), 1506152448);
  EXPECT_DOUBLE_EQ(mtp_forward_flops(m), 3565031424);
  EXPECT_DOUBLE_EQ(forward_flops_per_token(m), 97282678784);
  EXPECT_DOUBLE_EQ(model_flops_per_token(m), 3 * 97282678784.0);
  // Full recomputation repeats the 61 layers and the MTP module's layer and projection
  // (93,575,962,624), not the two output layers (3,706,716,160).
  EXPECT_DOUBLE_EQ(full_recompute_flops_per_token(m), 4 * 93575962624.0 + 3 * 3706716160.0);
}

// The weight FLOPs of a forward pass are 2 per activated parameter: DeepSeek-V3's main model
// without the scores (61·335,544,320) and the MTP module: 97,282,678,784 − 20,468,203,520 −
// 3,565,031,424 = 73,249,443,840 = 2·(36,625,603,584 activated − 881,664 norm weights, which
// take no matmul). Against the report's "37B activated": 2·37e9 = 74e9, 1.0% above (the report
// rounds README_WEIGHTS.md's 36.6B up); within 2%.
TEST(Flops, DeepSeekV3ForwardIsTwiceTheActivatedParameters) {
  const ModelSpec m = test_models::deepseek_v3();
  const double weights = forward_flops_per_token(m) - 61 * attention_score_flops(m) -
                         mtp_forward_flops(m);
  EXPECT_DOUBLE_EQ(weights, 73249443840);
  const double norms = 61 * 2 * 7168 + 7168;
  EXPECT_DOUBLE_EQ(weights, 2 * (static_cast<double>(activated_parameter_count(m)) - norms));
  EXPECT_NEAR(weights / (2 * 37e9), 1.0, 0.02);
}

// What FP8 quantises per token and layer (flops.h): Llama 3 8B (h 4096, Q 4096, K and V 1024,
// SwiGLU 14336) forward 4096 + 4096 + 4096 + 14336 = 26,624 and backward 6144 + 4096 + 2·14336 +
// 4096 = 43,008; Qwen3-30B-A3B's MoE layer (h 2048, Q and O 4096, K and V 512, 8 experts of 768)
// forward 2048 + 4096 + 8·(2048 + 768) = 28,672 and backward 5120 + 2048 + 8·(1536 + 2048) =
// 35,840.
TEST(Flops, GemmOperandsQuantisedPerToken) {
  const QuantisedValues llama = gemm_quantised_values(test_models::llama3_8b(), 0);
  EXPECT_DOUBLE_EQ(llama.forward, 26624);
  EXPECT_DOUBLE_EQ(llama.backward, 43008);
  const QuantisedValues qwen = gemm_quantised_values(test_models::qwen3_30b_a3b(), 0);
  EXPECT_DOUBLE_EQ(qwen.forward, 28672);
  EXPECT_DOUBLE_EQ(qwen.backward, 35840);
}

// torchtitan's op-level policy recomputes every second mm of a Llama block (wq, wk, wv, wo, w1, w3,
// w2): wk, wo and w3. Llama 3 8B: 2·(4096·1024 + 4096·4096 + 4096·14336) = 159,383,552 FLOPs per
// token and layer; HFU counts them once more in each of the 32 layers.
TEST(Flops, EverySecondMatmulAsTorchtitansOpPolicy) {
  const ModelSpec m = test_models::llama3_8b();
  EXPECT_DOUBLE_EQ(every_second_mm_flops(m), 159383552.0);
  EXPECT_DOUBLE_EQ(selective_op_flops_per_token(m) - model_flops_per_token(m), 32 * 159383552.0);
}

}  // namespace
}  // namespace plumb::plan
