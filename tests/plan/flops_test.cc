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

}  // namespace
}  // namespace plumb::plan
