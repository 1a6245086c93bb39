// Floating-point operations of a decoder-only transformer, per token. A multiply-add is 2 FLOPs.
// Sources: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
// Using Megatron-LM", Section 5.1 and Appendix (per layer forward 24·B·s·h² + 4·B·s²·h, logits
// 2·B·s·h·V, backward twice the forward); Ainslie et al. 2023 (GQA); Shazeer 2020 (SwiGLU).
#pragma once

#include "plan/model.h"

namespace plumb::plan {

// Forward FLOPs per token of one decoder layer: its weight matmuls (2 per weight: attention
// projections, the FFN — for MoE the top_k routed and the shared experts, and the router) and
// attention's quadratic term 4·s·h (Q·Kᵀ and the weighted sum of V, over the whole sequence as
// Narayanan et al. count it).
double layer_forward_flops(const ModelSpec& m, int layer);

// Forward FLOPs per token of the whole model: every layer and the output layer 2·h·V.
double forward_flops_per_token(const ModelSpec& m);

// Model FLOPs per trained token: forward + backward (2× forward) = 3× forward. What MFU counts,
// whatever recomputation the plan does.
double model_flops_per_token(const ModelSpec& m);

// Hardware FLOPs per trained token with full activation recomputation: the layers' forward runs
// twice (4× their forward), the output layer is not recomputed. What HFU counts.
double full_recompute_flops_per_token(const ModelSpec& m);

}  // namespace plumb::plan
