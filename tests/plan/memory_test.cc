#include "plan/memory.h"

#include <gtest/gtest.h>

#include "plan/models.h"

namespace plumb::plan {
namespace {

using test_models::gpt3;  // the model both papers use

// ZeRO paper, Figure 1: Ψ = 7.5B, K = 12, Nd = 64: 120 GB, 31.4 GB (Pos), 16.6 GB (Pos+g),
// 1.9 GB (Pos+g+p). Checked per parameter (bytes / Ψ): 16, 4 + 12/64, 2 + 14/64, 16/64.
TEST(Memory, ZeroStagesAsTheZeroPaper) {
  const ModelSpec m = gpt3();
  Layout p;
  p.dp = 64;
  const double psi = params_per_device(m, p);
  auto per_param = [&](int zero) {
    p.zero = zero;
    const ModelStates s = model_states(m, p);
    return (s.weights + s.gradients + s.optimizer) / psi;
  };
  EXPECT_DOUBLE_EQ(per_param(0), 16);
  EXPECT_DOUBLE_EQ(per_param(1), 4 + 12.0 / 64);
  EXPECT_DOUBLE_EQ(per_param(2), 2 + 14.0 / 64);
  EXPECT_DOUBLE_EQ(per_param(3), 16.0 / 64);
  EXPECT_NEAR(7.5 * per_param(1), 31.4, 0.05);  // GB for Ψ = 7.5B, as in the figure
  EXPECT_NEAR(7.5 * per_param(2), 16.6, 0.05);
}

// Korthikanti et al. Table 2 for GPT-3 (s 2048, h 12288, a 96), b = 1, t = 8:
// s·b·h/t = 3,145,728; 5·a·s/h = 80; no recompute 3,145,728 · 114 bytes per layer,
// selective 3,145,728 · 34, full 3,145,728 · 2.
TEST(Memory, ActivationsPerLayerAsKorthikanti) {
  const ModelSpec m = gpt3();
  Layout p;
  p.tp = 8;
  p.flash_attention = false;  // the paper's attention keeps its s×s scores
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 3145728.0 * 114);
  p.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 3145728.0 * 34);
  p.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 3145728.0 * 2);
  EXPECT_DOUBLE_EQ(activation_bytes(m, p), 96 * 3145728.0 * 2);
}

// With FlashAttention plumb counts what Megatron-Core keeps, no dropout: GPT-3 (MHA, GELU, 4h)
// attention 2·(h + q + k + v + o)/h = 10, norms 4, MLP 2 + 2·(4h + 4h)/h = 18: 32, two less than
// Korthikanti's 34 (his two dropout masks). It keeps no scores, so no recompute costs what
// selective recompute does. Context parallelism divides the sequence; the interleaved schedule
// holds (1 + (p−1)/(p·v)) more.
TEST(Memory, FlashAttentionContextParallelAndInterleaving) {
  const ModelSpec m = gpt3();
  Layout p;
  p.tp = 8;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 3145728.0 * 32);
  p.cp = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 3145728.0 * 32 / 2);
  p.pp = 4;
  p.vpp = 3;
  EXPECT_DOUBLE_EQ(activation_bytes(m, p), 96 * 3145728.0 * 16 * (1 + 3.0 / 12));
}

// Llama 3 8B (h 4096, 32 heads, 8 KV heads: K and V h/4 wide; SwiGLU f = 14336): attention
// 2·(1 + 1 + 0.25 + 0.25 + 1) = 7, norms 4, MLP 2 + 2·3·14336/4096 = 23 (the first projection's
// two outputs and the activation's): 34. Korthikanti's rule, without FlashAttention, gives
// 11 + 4 + (2 + 17·1.5·0.875) = 39.3125 (plus the scores).
TEST(Memory, SwigluMlpActivationsScaleWithItsWidth) {
  const ModelSpec m = test_models::llama3_8b();
  Layout p;
  p.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 8192.0 * 4096 * 34);
  p.flash_attention = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 8192.0 * 4096 * (11 + 4 + 24.3125));
}

// Korthikanti's rule (no FlashAttention): attention's 11·s·b·h is 3·h (its input, dropout mask) +
// 2·(q + k + v + o) with the model's widths. Qwen3-30B-A3B, 32 heads of 128 on h = 2048 (K and V
// counted at the query's heads): (3·2048 + 8·4096)/2048 = 19; MLP 2 + 17·1.5·(8·768)/(4·2048) =
// 21.125; norms 4. DeepSeek-V3's MLA: 3·7168 + 2·(24,576 + 24,576 + 16,384 + 16,384) + the
// latents and their norms' inputs 4·(1536 + 512) = 193,536 = 27·7168; MLP
// 2 + 17·1.5·(9·2048)/(4·7168).
// What Megatron-Core keeps (FlashAttention): Qwen3-30B-A3B attention 2·(2048 + 4096 + 512 + 512 +
// 4096)/2048 = 11 (its 4 KV heads credited), MoE MLP 2 + 8·(2 + 2·3·768/2048) = 36 (each of the
// top 8 copies keeps its permuted input and the expert's projections); DeepSeek-V3 attention
// (2·(7168 + 24,576 + 24,576 + 16,384 + 16,384) + 8192)/7168 = 26, MLP 2 + 8·(2 + 6·2048/7168)
// + 6·2048/7168 (the shared expert).
TEST(Memory, AttentionActivationsFollowTheAttentionWidths) {
  Layout p;
  p.recompute = Recompute::kSelective;
  p.flash_attention = false;
  const ModelSpec qwen = test_models::qwen3_30b_a3b();
  EXPECT_DOUBLE_EQ(layer_activation_bytes(qwen, p), 4096.0 * 2048 * (19 + 4 + 21.125));
  const ModelSpec ds = test_models::deepseek_v3();
  EXPECT_DOUBLE_EQ(layer_activation_bytes(ds, p),
                   4096.0 * 7168 * (27 + 4 + (2 + 17 * 1.5 * 18432 / (4 * 7168.0))));
  p.flash_attention = true;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(qwen, p), 4096.0 * 2048 * (11 + 4 + 36));
  EXPECT_DOUBLE_EQ(layer_activation_bytes(ds, p),
                   4096.0 * 7168 * (26 + 4 + 2 + 8 * (2 + 6 * 2048 / 7168.0) + 6 * 2048 / 7168.0));
}

// Experts split over ep, the rest over tp·pp only.
TEST(Memory, ExpertsShardOverExpertParallel) {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 256;
  m.vocab = 100;
  m.seq_len = 128;
  m.ffn_type = FfnType::kSwiglu;
  m.moe = MoeSpec{8, 2, 0, 32, 0};
  Layout one;
  Layout split;
  split.ep = 4;
  const double experts = 2.0 * 8 * 3 * 64 * 32;
  EXPECT_DOUBLE_EQ(params_per_device(m, one) - params_per_device(m, split), experts * 3 / 4);
  // An MTP module's MoE layer has its own 8 routed experts, sharded the same way.
  m.mtp_layers = 1;
  EXPECT_DOUBLE_EQ(params_per_device(m, one) - params_per_device(m, split),
                   experts * 3 / 2 * 3 / 4);
}

// torchtitan's op-level policy keeps per token of a Llama block its input and the outputs of wq, wv,
// w1 and w2 (the mms it saves: 1st, 3rd, 5th, 7th) and of flash attention with its fp32
// log-sum-exp per head. Llama 3 8B: 2·(4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 4·32 = 63,616
// bytes per token, 15.53125·h; over tp and cp like the rest.
TEST(Memory, SelectiveOpKeepsTheSavedMatmulsOutputs) {
  const ModelSpec m = test_models::llama3_8b();
  Layout p;
  p.recompute = Recompute::kSelectiveOp;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 8192.0 * 63616);
  p.tp = 2;
  p.cp = 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, p), 8192.0 * 63616 / 4);
}

}  // namespace
}  // namespace plumb::plan
