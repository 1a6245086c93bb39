// Floating-point operations of a decoder-only transformer, per token. A multiply-add is 2 FLOPs.
// Sources: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
// Using Megatron-LM", Section 5.1 and Appendix (per layer forward 24·B·s·h² + 4·B·s²·h, logits
// 2·B·s·h·V, backward twice the forward); Ainslie et al. 2023 (GQA); Shazeer 2020 (SwiGLU);
// DeepSeek-V2 (arXiv:2405.04434) Section 2.1 (MLA); DeepSeek-V3 (arXiv:2412.19437) Section 2.2
// (multi-token prediction).
#pragma once

#include "plan/model.h"

namespace plumb::plan {

// Attention's quadratic FLOPs per token of one layer, over the whole sequence s as Narayanan et
// al. count it (no saving for the causal mask): Q·Kᵀ 2·s·q_width and scores·V 2·s·o_width.
// 4·s·h for multi-head attention with head_dim = h/heads; 4·s·heads·head_dim with head_dim; MLA
// 2·s·heads·(qk_nope + qk_rope) + 2·s·heads·v_head_dim.
double attention_score_flops(const ModelSpec& m);

// Forward FLOPs per token of one decoder layer: its weight matmuls (2 per weight: attention
// projections, the FFN — for MoE the top_k routed and the shared experts, and the router) and
// attention's quadratic term attention_score_flops.
double layer_forward_flops(const ModelSpec& m, int layer);

// Values per token that FP8 (or FP4) training quantises for one layer's weight GEMMs: in the
// forward pass each GEMM's input (its K side), in the backward each GEMM's output gradient (its N
// side), before the GEMM can run at the low-precision rate (Transformer Engine's Linear and
// GroupedLinear quantise both; weights are cast once per step and left out). Attention: the QKV
// input h and the output projection's input o_width forward; the Q, K, V and output gradients
// q_width + k_width + v_width + h backward (MLA's low-rank projections are counted as these).
// An FFN of width f (g = 2 for GELU, 3 for SwiGLU): h + f forward, (g − 1)·f + h backward; a MoE
// layer has top_k + shared_experts of them, each at expert_ffn_hidden, on its copies of a token.
// Llama 3 8B: forward 4096 + 4096 + 4096 + 14336 = 26624, backward 6144 + 4096 + 28672 + 4096 =
// 43008.
struct QuantisedValues {
  double forward = 0;
  double backward = 0;
};
QuantisedValues gemm_quantised_values(const ModelSpec& m, int layer);

// Forward FLOPs per token of the multi-token prediction modules (DeepSeek-V3 Section 2.2): each
// runs one layer (an MoE layer when the model has MoE), its projection M_k (2·2h·h) and the
// shared output head on its own hidden state (2·h·V). 0 without mtp_layers.
double mtp_forward_flops(const ModelSpec& m);

// Forward FLOPs per token of the whole model: every layer, the output layer 2·h·V and the MTP
// modules.
double forward_flops_per_token(const ModelSpec& m);

// Model FLOPs per trained token: forward + backward (2× forward) = 3× forward. What MFU counts,
// whatever recomputation the plan does.
double model_flops_per_token(const ModelSpec& m);

// Hardware FLOPs per trained token with full activation recomputation: the layers' forward (the
// MTP modules' layers and projections too) runs twice (4× their forward), the output layers are
// not recomputed. What HFU counts.
double full_recompute_flops_per_token(const ModelSpec& m);

// Forward FLOPs per token of the matmuls torchtitan's op-level selective checkpointing recomputes
// in one dense layer (Recompute::kSelectiveOp): of the layer's mms in call order — wq, wk, wv, wo,
// then w1, w3, w2 for SwiGLU or w1, w2 for GELU (torchtitan/models/llama/model.py at 9dec370,
// Attention.forward and FeedForward.forward) — every second one: wk (h·k_width), wo (o_width·h)
// and the sixth, w3 or w2 (h·f). 2 FLOPs per weight. Llama 3 8B: 2·(4096·1024 + 4096·4096 +
// 4096·14336) = 159,383,552.
double every_second_mm_flops(const ModelSpec& m);

// Hardware FLOPs per trained token under Recompute::kSelectiveOp: the model's FLOPs and, in every
// layer, every_second_mm_flops once more. What HFU counts.
double selective_op_flops_per_token(const ModelSpec& m);

}  // namespace plumb::plan
