#include "plan/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "common/error.h"
#include "common/strings.h"

#include "plan/flops.h"
#include "plan/layout_names.h"

namespace plumb::plan {
namespace {

// Bytes of HBM traffic per byte of activation a layer keeps: each kept tensor is written by one
// operation and read by the next (docs/plan.md, "Memory-bound operations").
constexpr double kTrafficPerActivationByte = 2;
// Element-wise kernels of one layer's forward pass (norms, bias, dropout, residual, activation,
// softmax, rotary), each costing kKernelOverheadS beyond its traffic (NVIDIA Nsight traces of
// Megatron-LM GPT layers show 20–30 such kernels per layer).
constexpr double kKernelsPerLayer = 24;
// Achievable fraction of HBM bandwidth for streaming kernels (STREAM-like copy on A100/H100
// reaches ~90% of the datasheet figure).
constexpr double kHbmEfficiency = 0.9;
// Adam step traffic per parameter it updates: read fp32 master, momentum, variance and the
// gradient (4 + 4 + 4 + 4), write the three back and the bf16 weight (12 + 2).
constexpr double kAdamBytesPerParam = 30;
// Runtime context, cuBLAS/cuDNN workspaces and allocator slack (PyTorch reports 1–3 GB in use
// before the first tensor on H100).
constexpr double kReservedBytes = 2e9;
// NCCL_BUFFSIZE (4 MiB) × send and receive × 16 channels per communicator.
constexpr double kNcclBytesPerCommunicator = 4.0 * (1 << 20) * 2 * 16;
constexpr double kActivationBytes = 2;  // bf16 activations and gradients
constexpr double kFp8Bytes = 1;        // an FP8 value
// HBM bytes per value an FP8 GEMM operand costs to quantise with current (per-tensor) scaling, as
// Transformer Engine does it: one pass reads the bf16 tensor for its amax (2 B), a second reads it
// again (2 B) and writes the FP8 copy (1 B) and, for the other GEMM of the backward that needs it
// transposed (Hopper's FP8 tensor cores take only the TN layout), the transposed FP8 copy (1 B).
// TE docs, "Using FP8 with Transformer Engine" (current scaling: the scale comes from the amax of
// the tensor being cast, so the cast cannot start before a full read) and its columnwise usage.
constexpr double kQuantiseBytesPerValue = 2 + 2 + 1 + 1;
// Of those, the amax pass's read of the bf16 tensor.
constexpr double kAmaxReadBytesPerValue = 2;
// Kernels per quantised tensor under current scaling: the amax, the scale from it, the
// cast(-transpose) (Transformer Engine, pytorch/csrc/quantizer.cpp,
// Float8CurrentScalingQuantizer::quantize_impl: nvte_compute_amax, nvte_compute_scale_from_amax,
// nvte_quantize_v2).
constexpr double kQuantiseKernelsPerTensor = 3;

struct Ctx {
  const ModelSpec& m;
  const HardwareSpec& hw;
  const Network& net;
  const Layout& p;
  double peak = 0;  // FLOP/s
  double peak_bf16 = 0;  // FLOP/s of what stays in bf16 under fp8/fp4: attention scores, logits
  double gemm_efficiency = 0;
  const Efficiencies& e;
  double layer_flops = 0;  // forward FLOPs per token of an average layer
  int moe_layers = 0;
  double routed_flops = 0;  // forward FLOPs per token of the routed experts, averaged over layers
  QuantisedValues quantised;  // per token, averaged over layers; zero unless fp8/fp4
  bool fp16 = false;          // the run's precision is fp16 (Megatron's gradient buffer in fp16)
};

// Seconds to move `bytes` through HBM at kHbmEfficiency of its bandwidth: every memory-bound
// pass the step prices.
double hbm_seconds(const Ctx& c, double bytes) {
  return bytes / (c.hw.hbm_tbps * 1e12 * kHbmEfficiency);
}

double avg_layer_forward_flops(const ModelSpec& m) {
  double total = 0;
  for (int layer = 0; layer < m.layers; ++layer) total += layer_forward_flops(m, layer);
  return total / m.layers;
}

int moe_layer_count(const ModelSpec& m) { return m.moe ? m.layers - m.moe->first_dense_layers : 0; }

// The values per token an FP8 (or FP4) step quantises for an average layer's GEMMs; none in
// bf16/fp16.
QuantisedValues avg_quantised_values(const ModelSpec& m, const std::string& precision) {
  QuantisedValues total;
  if (precision != "fp8" && precision != "fp4") return total;
  for (int layer = 0; layer < m.layers; ++layer) {
    const QuantisedValues v = gemm_quantised_values(m, layer);
    total.forward += v.forward / m.layers;
    total.backward += v.backward / m.layers;
  }
  return total;
}

// Forward FLOPs per token of the routed experts (2 per weight of top_k experts), averaged over
// the layers: what runs as grouped GEMMs at the experts' own width.
double routed_expert_flops(const ModelSpec& m) {
  if (!m.moe) return 0;
  return 2.0 * m.moe->top_k * d(ffn_params(m, m.moe->expert_ffn_hidden)) * moe_layer_count(m) /
         m.layers;
}

// What of `comm` an overlap with `hiding` seconds of compute leaves exposed: all beyond the
// compute, and of the rest the share the calibrated overlap does not hide (all hidden unless
// calibrated).
double exposed_behind(const Ctx& c, double comm, double hiding) {
  return comm - c.e.overlap * std::min(comm, std::max(0.0, hiding));
}

double tokens_per_micro_batch(const Ctx& c) { return d(c.p.micro_batch) * d(c.m.seq_len) / c.p.cp; }

// The share of an average layer that is a MoE layer.
double moe_share(const Ctx& c) { return c.m.moe ? d(c.moe_layers) / c.m.layers : 0; }

// Tokens one device holds between attention and the MoE layer: sequence parallelism splits the
// micro-batch over tp.
double local_tokens(const Ctx& c) { return tokens_per_micro_batch(c) / c.p.tp; }

// GShard capacity (Lepikhin et al. 2021, Section 2.2 "expert capacity"; DeepSpeed-MoE
// deepspeed/moe/sharded_moe.py, _capacity: ceil(tokens / experts · capacity_factor), which
// top2gating calls with the factor doubled): the slots each expert holds for one device's tokens.
// 0 without a capacity factor (dropless).
double expert_capacity(const Ctx& c) {
  if (!c.m.moe || c.p.capacity_factor <= 0) return 0;
  const MoeSpec& moe = *c.m.moe;
  return std::ceil(local_tokens(c) / d(moe.experts) * c.p.capacity_factor * moe.top_k);
}

// Expert slots per routed copy of a token, experts · capacity / (top_k · tokens): what a capacity
// buffer adds to the expert GEMMs and to the all-to-all, which carry every slot, filled or
// padded (GShard Algorithm 2 dispatches the [experts, capacity, h] tensor). 1 when dropless.
double capacity_padding(const Ctx& c) {
  const double capacity = expert_capacity(c);
  if (capacity <= 0) return 1;
  return capacity * d(c.m.moe->experts) / (c.m.moe->top_k * local_tokens(c));
}

// Tokens each local expert's GEMM gets: the device's tokens gathered over etp, top_k copies each,
// spread evenly over the experts/ep experts the device holds (its capacity, padded, with one).
double tokens_per_expert(const Ctx& c) {
  return local_tokens(c) * c.p.expert_tp() * c.m.moe->top_k * c.p.ep / c.m.moe->experts *
         capacity_padding(c);
}

// HBM bytes per [tokens × experts × capacity] slot that GShard's einsum gating moves in one
// forward pass (DeepSpeed-MoE sharded_moe.py, top2gating and MOELayer.forward): two fp32
// combine tensors written by einsum("se,sc->sec") (4 + 4), summed (read 8, write 4), the boolean
// dispatch mask from the sum (read 4, write 1), both cast to bf16 for the einsums (read 5,
// write 4) and read by them (4).
constexpr double kEinsumBytesPerSlot = 4 + 4 + 12 + 5 + 9 + 4;

// GShard's one-hot dispatch and combine (Algorithm 2: einsum("sec,sm->ecm") and
// einsum("sec,ecm->sm")): each a GEMM over tokens · experts · capacity · h, 2 FLOPs per
// multiply-add, run whatever the mask holds. Forward FLOPs of one MoE layer on one device.
double einsum_dispatch_flops(const Ctx& c) {
  if (!c.p.einsum_dispatch) return 0;
  return 2 * 2 * local_tokens(c) * d(c.m.moe->experts) * expert_capacity(c) * d(c.m.hidden);
}

// HBM traffic of a MoE layer's routing per forward pass: the router's scores (fp32, read and
// written by softmax and top-k, 3 passes) and the permutation before dispatch and after combine
// (each reads and writes top_k copies of h bf16 values) — Megatron-Core's token dispatcher.
// With GShard's einsum dispatch the permutation is the einsums (einsum_dispatch_flops), and the
// [tokens × experts × capacity] gating tensors take its place (kEinsumBytesPerSlot).
double routing_traffic(const Ctx& c) {
  const double tokens = local_tokens(c);
  const double scores = 3 * 4 * tokens * d(c.m.moe->experts);
  if (c.p.einsum_dispatch) {
    return scores + kEinsumBytesPerSlot * tokens * d(c.m.moe->experts) * expert_capacity(c);
  }
  const double permute = 2 * 2 * tokens * c.m.moe->top_k * d(c.m.hidden) * kActivationBytes;
  return scores + permute;
}
constexpr double kRoutingKernels = 8;  // router GEMM aside: softmax, top-k, aux loss, (un)permute

// Forward time of one layer for one micro-batch on one device, without communication: GEMMs at
// peak × efficiency, element-wise traffic at HBM bandwidth, a fixed cost per kernel.
struct LayerCompute {
  double gemm = 0;
  double scores = 0;  // attention's quadratic FLOPs (Q·Kᵀ, scores·V)
  double memory = 0;
  double kernels = 0;
  // FP8 quantisation of the GEMM operands (quantise_seconds): not part of total(), since the
  // backward's is its own count, not twice the forward's.
  double quantise_forward = 0;
  double quantise_backward = 0;
  double total() const { return gemm + scores + memory + kernels; }
};

// The tensors one pass of an average layer quantises: a dense layer's four GEMMs (QKV, O, FC1,
// FC2) one operand each; a MoE layer's attention two, and for each local expert its FC1 and FC2
// operand apart — Transformer Engine's GroupedLinear splits the tokens by expert and quantises
// each split with its own quantizer (tex.split_quantize), and for current scaling launches each
// split's kernels one by one ("Currently only have fused kernel for FP8 delayed scaling",
// pytorch/csrc/extensions/cast.cpp, multi_tensor_quantize_impl) — plus two for shared experts.
double quantised_tensors_per_pass(const Ctx& c) {
  constexpr double kDense = 4;
  if (!c.m.moe) return kDense;
  const double local_experts = d(c.m.moe->experts) / c.p.ep;
  const double moe = 2 + 2 * local_experts + (c.m.moe->shared_experts > 0 ? 2 : 0);
  return moe_share(c) * moe + (1 - moe_share(c)) * kDense;
}

// The forward GEMM inputs an average layer quantises straight out of a norm, as tensors (and
// values per token: each is h wide). Megatron-Core's Transformer Engine layer spec fuses the norm
// into the GEMM that reads it (megatron/core/models/gpt/gpt_layer_specs.py: linear_qkv and a
// dense MLP's linear_fc1 are column_parallel_layer_norm_linear, TELayerNormColumnParallelLinear),
// and TE's LayerNormLinear hands the norm its input quantizer (layernorm_linear.py,
// with_quantized_norm); for current scaling the norm kernel then computes the amax as it writes
// its output (pytorch/csrc/extensions/normalization.cpp, Impl::FUSED_NORM_AMAX_FP8, "Compute norm
// and amax in high precision, then quantize to FP8", since TE 2.8), and quantize_with_amax
// launches only the scale and the cast. Not fused: MLA's down-projections (a separate TENorm
// before plain TELinear modules), a MoE layer's experts (TENorm as pre_mlp_layernorm, the tokens
// quantised after dispatch), the attention output and the activation's output (Megatron-Core's
// own bias_swiglu_impl unless use_te_activation_func), and every backward gradient.
double norm_fused_quantised_tensors(const Ctx& c) {
  const double attention = c.m.mla ? 0 : 1;
  return attention + (1 - moe_share(c));
}

// FP8 (current scaling) quantisation of one layer's GEMM operands for one micro-batch on one
// device: kQuantiseBytesPerValue per value at 90% of HBM bandwidth, and three kernels per
// quantised tensor; a norm-fused input (norm_fused_quantised_tensors) skips the amax pass, its
// bf16 read (2 B a value) and its kernel.
std::pair<double, double> quantise_seconds(const Ctx& c, double tokens) {
  if (c.quantised.forward <= 0) return {0, 0};
  const double kernels =
      quantised_tensors_per_pass(c) * kQuantiseKernelsPerTensor * c.e.kernel_overhead_s;
  const double fused = norm_fused_quantised_tensors(c);
  const double fused_kernels = fused * c.e.kernel_overhead_s;
  const double fused_bytes = kAmaxReadBytesPerValue * fused * d(c.m.hidden) * tokens;
  const double bytes = kQuantiseBytesPerValue * tokens;
  return {hbm_seconds(c, bytes * c.quantised.forward - fused_bytes) + kernels - fused_kernels,
          hbm_seconds(c, bytes * c.quantised.backward) + kernels};
}

// The fraction of peak the dense GEMMs (and the output layer's) reach before their width.
double dense_gemm_efficiency(const Ctx& c) { return c.gemm_efficiency * c.e.gemm; }

// A routed expert's GEMMs: [tokens × h] · [h × f/etp] and back, as slow as the smaller of the
// expert's width per device and the tokens it gets (a 2,048-wide expert split 8 ways is a
// 256-wide GEMM; docs/plan.md, "Expert GEMMs").
double expert_gemm_efficiency(const Ctx& c) {
  const double width = d(c.m.moe->expert_ffn_hidden) / c.p.expert_tp();
  return c.gemm_efficiency * c.e.expert_gemm *
         gemm_width_factor(std::min(width, tokens_per_expert(c)));
}

// What attention's score FLOPs grow by when the fused attention kernel runs on padded heads
// (MlaSpec::attention_pad_head_dim): Q·Kᵀ and scores·V are 2·s FLOPs per token and per column of
// each head's Q/K and V (flops.h, attention_score_flops), so the padded kernel runs
// (max(d_qk, pad) + max(d_v, pad)) / (d_qk + d_v) times the model's. ModelLink's MLA
// (multi_head_latent_attention.py at d4feda79): DeepSeek-V2's d_qk 192, d_v 128 give
// (192 + 192)/320 = 1.2 under --shape-order BNSD (V to 192), (256 + 256)/320 = 1.6 under SBH.
double attention_padding(const ModelSpec& m) {
  if (!m.mla || m.mla->attention_pad_head_dim <= 0) return 1;
  const double pad = d(m.mla->attention_pad_head_dim);
  const double qk = d(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
  const double v = d(m.mla->v_head_dim);
  return (std::max(qk, pad) + std::max(v, pad)) / (qk + v);
}

// PyTorch eager mode (Layout::eager), the Llama reference code's element-wise ops one kernel each
// (torchtitan/models/norms.py RMSNorm and models/llama/model.py at 9dec370), HBM bytes per value:
// RMSNorm x.float() (read 2, write 4), pow(2) (4 + 4), mean (4), x·rsqrt (4 + 4), type_as (4 + 2),
// ·weight (2 + 2); rotary embeddings on Q and K x.float() (2 + 4), the complex product (4 + 4),
// type_as (4 + 2); each residual add 2 + 2 + 2; SwiGLU silu (2 + 2) and its product (2 + 2 + 2).
constexpr double kEagerRmsNormBytes = 6 + 8 + 4 + 8 + 6 + 4;
constexpr double kEagerRopeBytes = 6 + 8 + 6;
constexpr double kEagerResidualBytes = 6;
constexpr double kEagerSwigluBytes = 4 + 6;
// Their kernels per layer: each RMSNorm 8 (float, pow, mean, add, rsqrt, mul, type_as, mul), rotary
// 6 (float, mul, type_as for Q and K), the two residual adds, silu and mul; with GQA repeat_kv's
// two copies.
constexpr double kEagerKernelsPerLayer = 2 * 8 + 6 + 2 + 2;

// HBM bytes per token of one layer's forward element-wise work in eager mode: two RMSNorms and two
// residual adds over h, rotary over Q and K, SwiGLU over f, and under GQA repeat_kv copying K and
// V from kv width to Q's (read 2, write 2 per value). Llama 3 8B: 72·4096 + 20·5120 +
// 4·(1024 + 4096) + 12·4096 + 10·14336 = 610,304.
double eager_traffic_per_token(const ModelSpec& m) {
  const double h = d(m.hidden);
  const double q = d(q_width(m));
  const double k = d(k_width(m));
  const double repeat_kv = k < q ? 2 * 2 * (k + q) : 0;
  return 2 * kEagerRmsNormBytes * h + kEagerRopeBytes * (q + k) + repeat_kv +
         2 * kEagerResidualBytes * h + kEagerSwigluBytes * d(m.ffn_hidden);
}

double eager_kernels(const ModelSpec& m) {
  return kEagerKernelsPerLayer + (k_width(m) < q_width(m) ? 2 : 0);
}

// HBM traffic and kernels of one layer's forward element-wise work: the fused kernels' (each kept
// activation written once and read once) or, in eager mode, the reference code's op by op.
std::pair<double, double> elementwise_work(const Ctx& c) {
  if (c.p.eager) {
    return {eager_traffic_per_token(c.m) * tokens_per_micro_batch(c) / c.p.tp, eager_kernels(c.m)};
  }
  Layout no_recompute = c.p;
  no_recompute.recompute = Recompute::kNone;
  return {kTrafficPerActivationByte * layer_activation_bytes(c.m, no_recompute), kKernelsPerLayer};
}

LayerCompute layer_forward(const Ctx& c) {
  const double tokens = tokens_per_micro_batch(c);
  const double score_flops = attention_score_flops(c.m) * tokens / c.p.tp;
  const double flops = c.layer_flops * tokens / c.p.tp;
  LayerCompute t;
  const double efficiency = dense_gemm_efficiency(c) * gemm_width_factor(d(c.m.hidden) / c.p.tp);
  const double routed = c.routed_flops * tokens / c.p.tp;
  t.gemm = (flops - score_flops - routed) / (c.peak * efficiency);
  if (routed > 0) {
    t.gemm += routed * capacity_padding(c) / (c.peak * expert_gemm_efficiency(c));
    // The einsums' GEMMs are h wide whatever tp: [experts·capacity × tokens] · [tokens × h].
    const double einsum_rate = c.peak * dense_gemm_efficiency(c) * gemm_width_factor(d(c.m.hidden));
    t.gemm += moe_share(c) * einsum_dispatch_flops(c) / einsum_rate;
  }
  t.scores = score_flops * attention_padding(c.m) / (c.peak_bf16 * c.gemm_efficiency * c.e.attention);
  auto [traffic, kernels] = elementwise_work(c);
  if (c.m.moe) {
    traffic += moe_share(c) * routing_traffic(c);
    kernels += moe_share(c) * kRoutingKernels;
  }
  t.memory = hbm_seconds(c, traffic);
  t.kernels = kernels * c.e.kernel_overhead_s;
  std::tie(t.quantise_forward, t.quantise_backward) = quantise_seconds(c, tokens / c.p.tp);
  return t;
}

// Forward + backward (twice the forward) + recomputation: full repeats the forward, selective
// repeats attention's score part (Korthikanti Section 5). Under FP8 the forward's and the
// backward's quantisation each once (and the forward's again under full recomputation).
// torchtitan's op-level policy (kSelectiveOp) keeps the matmuls' outputs but every second one's and
// flash attention's, so it repeats the forward's element-wise work, its kernels, its quantisation
// and every_second_mm_flops of its GEMMs.
double recompute_seconds(const Ctx& c, const LayerCompute& f) {
  switch (c.p.recompute) {
    case Recompute::kFull:
      return f.total() + f.quantise_forward;
    case Recompute::kSelective:
      return f.scores;
    case Recompute::kSelectiveOp: {
      const double mm_share = every_second_mm_flops(c.m) / (c.layer_flops - attention_score_flops(c.m));
      return f.gemm * mm_share + f.memory + f.kernels + f.quantise_forward;
    }
    case Recompute::kNone:
      return 0;
  }
  return 0;
}

double layer_compute_seconds(const Ctx& c, const LayerCompute& f) {
  return 3 * f.total() + f.quantise_forward + f.quantise_backward + recompute_seconds(c, f);
}

// The forward passes a layer runs per micro-batch: 1, or 2 under full recomputation.
int forward_passes(const Layout& p) { return p.recompute == Recompute::kFull ? 2 : 1; }

GroupShape tp_group(const Ctx& c) { return group_shape(c.p.tp, 1, c.net.cluster()); }
GroupShape cp_group(const Ctx& c) { return group_shape(c.p.cp, c.p.tp, c.net.cluster()); }
// MoE parallel folding (Megatron-Core, Liu et al. 2025): the MoE layers number the ranks of
// tp × cp × dp as etp innermost, then ep, then the expert-data-parallel rest — an EP group is ep
// ranks etp apart, so 64-way EP with etp 1 on 8-GPU nodes spans 8 nodes.
GroupShape etp_group(const Ctx& c) { return group_shape(c.p.expert_tp(), 1, c.net.cluster()); }
GroupShape ep_group(const Ctx& c) { return group_shape(c.p.ep, c.p.expert_tp(), c.net.cluster()); }
GroupShape dp_group(const Ctx& c) {
  return group_shape(c.p.dp * c.p.cp, c.p.tp, c.net.cluster());
}
GroupShape expert_dp_group(const Ctx& c) {
  return group_shape(static_cast<int>(expert_replicas(c.p)), c.p.ep * c.p.expert_tp(),
                     c.net.cluster());
}

// Sequence parallelism: an allgather before and a reduce-scatter after attention and the MLP in
// the forward pass, the mirror in the backward (Korthikanti Section 4.2.2): 2 of each per layer
// and forward pass count, on the whole micro-batch's activations.
// Under FP8 (and FP4, priced as FP8) the all-gathers carry the quantised GEMM input, 1 byte a
// value: Transformer Engine's LayerNormLinear gathers the norm's FP8 output (layernorm_linear.py,
// gather_along_first_dim(ln_out, tp_group, quantizer=...)), and in the backward a row-parallel
// Linear gathers its FP8 output gradient ("FP8 with all-gather", base.py grad_output_preprocess);
// distributed.py's gather_along_first_dim sends only the FP8 data (_all_gather_fp8, the scale is
// shared; _all_gather_mxfp8 adds one 1-byte scale per 32 values, left out). The reduce-scatters
// carry a GEMM's bf16 output and stay at 2 bytes.
double layer_tp_seconds(const Ctx& c) {
  if (c.p.tp <= 1) return 0;
  const double values = tokens_per_micro_batch(c) * d(c.m.hidden);
  const double gather_bytes = values * (c.quantised.forward > 0 ? kFp8Bytes : kActivationBytes);
  const GroupShape g = tp_group(c);
  const double pair = c.net.time(Collective::kAllGather, gather_bytes, g).seconds +
                      c.net.time(Collective::kReduceScatter, values * kActivationBytes, g).seconds;
  // Attention's pair always; the MLP's only in dense layers (a MoE layer's tokens are gathered
  // over the etp group by its dispatcher, layer_ep_seconds).
  return (2 - moe_share(c)) * pair * (1 + forward_passes(c.p)) / c.e.comm_of(CommDim::kTp);
}

// Bytes per value MoE dispatch sends: bf16 2; fp8 1 and an fp32 scale per 128 values
// (DeepSeek-V3 Section 3.3.2: fine-grained 1×128 activation quantisation before dispatch).
double dispatch_bytes(DispatchPrecision p) { return p == DispatchPrecision::kFp8 ? 1 + 4.0 / 128 : 2; }

// One dispatch or combine of a device's tokens, `value_bytes` per value: top_k copies of h values
// each (Lepikhin et al. 2021, GShard; Megatron-Core's all-to-all dispatcher). With node-limited
// routing (DeepSeek-V3 Section 3.2.2) a token crosses the network once per node its experts are
// on — at most max_nodes_per_token of the group's nodes, (n−1)/n of them remote — and its copies
// fan out inside the node over the scale-up links; the two overlap, the slower paces. The DeepEP
// dispatcher does the same on any group that spans nodes, limited or not: its normal kernels send
// a token over RDMA once per target node and forward it over NVLink to the experts' GPUs there
// (deepseek-ai/DeepEP README: "kernels optimized for asymmetric-domain bandwidth forwarding, such
// as forwarding data from NVLink domain to RDMA domain"; get_dispatch_layout's
// num_tokens_per_rdma_rank counts tokens per node; Megatron-Core moe/README.md: the flex
// dispatcher with DeepEP "removes redundant tokens during cross-node communication"), so at most
// min(n, top_k, max_nodes_per_token) copies of a token cross the network. With a capacity factor
// every expert slot is sent, filled or padded (capacity_padding).
double a2a_seconds(const Ctx& c, double value_bytes) {
  const GroupShape g = ep_group(c);
  const MoeSpec& moe = *c.m.moe;
  const double token_bytes =
      local_tokens(c) * d(c.m.hidden) * value_bytes * capacity_padding(c);
  const double bytes = token_bytes * moe.top_k;
  const int limit = moe.max_nodes_per_token;
  const bool per_node = c.p.dispatcher == Dispatcher::kDeepEP && g.nodes > 1;
  if (!per_node && (limit <= 0 || g.nodes <= limit)) {
    return c.net.time(Collective::kAllToAll, bytes, g).seconds;
  }
  const Link across = layer_link(c.net.cluster(), g.widest);
  const Link inside = c.net.cluster().node;
  const double remote = remote_copies(moe.top_k, limit, g.nodes, per_node);
  const double network = token_bytes * remote / (across.gbps * 1e9) + across.latency_s * (g.nodes - 1);
  const double fan_out = bytes / (inside.gbps * 1e9) + inside.latency_s * (g.per_node - 1);
  return std::max(network, fan_out);
}

// The allgather token dispatcher (Megatron-Core MoEAllGatherTokenDispatcher, token_dispatcher.py,
// core_r0.6–r0.8; --moe-token-dispatcher-type allgather): token_permutation all-gathers every
// token's hidden state (with its top_k expert indices and probabilities) over the ep × etp ranks
// of the MoE layer ("this allgather spans the communication domain of TP*EP"), each rank picks
// the rows routed to its own experts; token_unpermutation scatter-adds the experts' outputs into
// a buffer of all the gathered tokens and reduce-scatters it back. Each token goes once, whatever
// top_k, to every rank of the group; the backward runs the mirror (a reduce-scatter and an
// all-gather of the same size). One pass, forward or backward: the all-gather and the
// reduce-scatter of the ep·etp ranks' tokens, h bf16 values each, plus top_k (int64 index, fp32
// probability) per token in the forward.
// With --fp32-combine the combine's buffer is fp32 (4 bytes a value): MindSpeed's
// allgather_token_unpermutation (mindspeed/core/transformer/moe/token_dispatcher.py at 4ea42a23,
// the commit ModelLink d4feda79's README pins; ModelLink registers it for
// MoEAllGatherTokenDispatcher.token_unpermutation when --moe-permutation-async-comm is set,
// modellink/patchs/megatron_patch.py) allocates it "torch.zeros(global_hidden_shape,
// dtype=torch.float, ...)", index_puts the experts' outputs into it as float and hands it to
// reduce_scatter_to_sequence_parallel_region_from_moe: the forward's reduce-scatter and the
// backward's all-gather of its gradient (autograd keeps the fp32 dtype) carry 4 bytes a value;
// the dispatch's all-gather and its backward reduce-scatter stay bf16. Megatron-Core's own
// token_unpermutation allocates the buffer in hidden_states.dtype (bf16).
double allgather_dispatch_seconds(const Ctx& c, bool forward) {
  const int ranks = c.p.ep * c.p.expert_tp();
  if (ranks <= 1) return 0;
  const GroupShape g = group_shape(ranks, 1, c.net.cluster());
  const double tokens = local_tokens(c) * ranks;
  const double dispatched = tokens * d(c.m.hidden) * kActivationBytes;
  const double combined = tokens * d(c.m.hidden) * (c.p.fp32_combine ? 4.0 : kActivationBytes);
  if (!forward) {
    return c.net.time(Collective::kAllGather, combined, g).seconds +
           c.net.time(Collective::kReduceScatter, dispatched, g).seconds;
  }
  const double routing = tokens * c.m.moe->top_k * (8 + 4);
  return c.net.time(Collective::kAllGather, dispatched + routing, g).seconds +
         c.net.time(Collective::kReduceScatter, combined, g).seconds;
}

// MoE dispatch and combine of one average layer: in each forward pass dispatch at the dispatch
// precision and combine in bf16, in the backward both in bf16; with etp > 1 the tokens are
// gathered over the etp group before dispatch and reduce-scattered after combine. The allgather
// dispatcher instead gathers over the whole ep × etp group (allgather_dispatch_seconds).
double layer_ep_seconds(const Ctx& c) {
  if (!c.m.moe || c.moe_layers == 0) return 0;
  if (c.p.dispatcher == Dispatcher::kAllGather) {
    const double pass = allgather_dispatch_seconds(c, true);
    const double backward = allgather_dispatch_seconds(c, false);
    return moe_share(c) * (pass * forward_passes(c.p) + backward) / c.e.comm_of(CommDim::kEp);
  }
  double pass = 0, backward = 0;
  if (c.p.ep > 1) {
    const double bf16 = a2a_seconds(c, kActivationBytes);
    const double dispatch = c.p.dispatch == DispatchPrecision::kBf16
                                ? bf16
                                : a2a_seconds(c, dispatch_bytes(c.p.dispatch));
    pass = dispatch + bf16;
    backward = 2 * bf16;
  }
  if (c.p.expert_tp() > 1) {
    const double gathered = local_tokens(c) * c.p.expert_tp() * d(c.m.hidden) * kActivationBytes;
    const GroupShape g = etp_group(c);
    const double pair = c.net.time(Collective::kAllGather, gathered, g).seconds +
                        c.net.time(Collective::kReduceScatter, gathered, g).seconds;
    pass += pair;
    backward += pair;
  }
  return moe_share(c) * (pass * forward_passes(c.p) + backward) / c.e.comm_of(CommDim::kEp);
}

// Ring attention (Liu et al. 2023; Megatron-Core context parallelism): K and V chunks go round
// the cp ranks while attention computes; the backward sends dK, dV too. Only what attention's
// own time does not hide is exposed. K and V as attention uses them: kv_heads·head_dim each, and
// for MLA the up-projected heads·(qk_nope + qk_rope) and heads·v_head_dim (Megatron-Core's MLA
// hands those, not the latent, to the context-parallel core attention).
// DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv:2309.14509, Section 3.1; MindSpeed's
// UlyssesContextAttention, ulysses_cp_algo): each rank holds s/cp tokens of every head; an
// all-to-all over the cp ranks before attention turns Q, K and V into all s tokens of heads/cp
// heads, and one after attention turns its output back. Four all-to-alls per layer and forward
// pass, of the rank's Q, K, V and output at their widths (over tp, as the heads are), and four
// in the backward (their gradients). They sit between the projections and attention, which
// waits for them: none is hidden.
double ulysses_seconds(const Ctx& c) {
  const double tokens = tokens_per_micro_batch(c) / c.p.tp;
  const GroupShape g = cp_group(c);
  double pass = 0;
  for (int64_t width : {q_width(c.m), k_width(c.m), v_width(c.m), o_width(c.m)}) {
    pass += c.net.time(Collective::kAllToAll, tokens * d(width) * kActivationBytes, g).seconds;
  }
  return pass * (forward_passes(c.p) + 1) / c.e.comm_of(CommDim::kCp);
}

double layer_cp_seconds(const Ctx& c, const LayerCompute& f) {
  if (c.p.cp <= 1) return 0;
  if (c.p.cp_algo == CpAlgo::kUlysses) return ulysses_seconds(c);
  const double kv = tokens_per_micro_batch(c) * d(k_width(c.m) + v_width(c.m)) / c.p.tp *
                    kActivationBytes;
  const double ring = c.net.time(Collective::kAllGather, kv * c.p.cp, cp_group(c)).seconds /
                      c.e.comm_of(CommDim::kCp);
  const double forward = exposed_behind(c, ring, f.scores);
  const double backward = exposed_behind(c, 2 * ring, 2 * f.scores);
  return forward * forward_passes(c.p) + backward;
}

// The output layer and the loss on the last stage: 2·h·V FLOPs per token forward, twice that
// backward; the softmax reads and writes the V logits in fp32 about three times. In bf16 under
// fp8 (DeepSeek-V3 Section 3.3.1 keeps the output head in its original precision).
double logits_seconds(const Ctx& c) {
  const double tokens = tokens_per_micro_batch(c);
  const double flops = 3 * 2 * d(c.m.hidden) * d(c.m.vocab) * tokens / c.p.tp;
  const double traffic = 3 * 4 * d(c.m.vocab) * tokens / c.p.tp;
  return flops / (c.peak_bf16 * dense_gemm_efficiency(c)) + hbm_seconds(c, traffic);
}

// HBM bytes per logit of one fp32 cross-entropy over bf16 logits, forward only: under autocast
// cross_entropy runs in float32 (torch.amp docs, "CUDA Ops that can autocast to float32":
// cross_entropy, log_softmax, nll_loss), so the logits are cast (2 B read, 4 B written) and
// log_softmax reads the fp32 copy for each row's max, again for the sum of exponentials and again
// for its output, which it writes (3 · 4 + 4 B): aten/src/ATen/native/cuda/SoftMax.cu,
// cunn_SoftMaxForward — the shared-memory variant takes a row only below (sharedMemPerBlock −
// reduction scratch) / 4 B, about 12,280 fp32 values in a 48 KB block, and a vocabulary row of
// 50,368 is past it. nll_loss then reads one value per token.
constexpr double kMetricBytesPerLogit = 2 + 4 + 3 * 4 + 4;
// LLM Foundry's MPT trains with two metrics, each its own torch.nn.CrossEntropyLoss(
// reduction='sum') over the logits (llmfoundry/models/mpt/modeling_mpt.py at b2a43a147,
// ComposerMPTCausalLM: train_metrics = [LanguageCrossEntropy(), LanguagePerplexity()];
// composer/metrics/nlp.py: LanguagePerplexity subclasses LanguageCrossEntropy, whose update calls
// self.loss_fn(logits, target)); MosaicGPT, its predecessor, listed the same pair.
constexpr double kTrainMetricPasses = 2;

// Composer's training metrics on the last stage, every micro-batch (Layout::train_metrics):
// after the backward, under torch.no_grad() and the run's precision context
// (composer/trainer/trainer.py v0.16.4, _train_microbatch → _eval_train_metrics), each metric runs
// one fp32 cross-entropy over the micro-batch's [tokens × vocab] logits; no backward.
double train_metrics_seconds(const Ctx& c) {
  if (!c.p.train_metrics) return 0;
  const double logits = tokens_per_micro_batch(c) * d(c.m.vocab) / c.p.tp;
  return hbm_seconds(c, kTrainMetricPasses * kMetricBytesPerLogit * logits);
}

// One activation (and one gradient) per virtual stage boundary and micro-batch, scattered over
// TP (Narayanan et al. Section 4.1, scatter/gather optimisation).
double pp_seconds_per_micro_batch(const Ctx& c) {
  if (c.p.pp <= 1) return 0;
  const double bytes = tokens_per_micro_batch(c) * d(c.m.hidden) * kActivationBytes / c.p.tp;
  const GroupShape g = group_shape(2, c.p.tp * c.p.cp * c.p.dp, c.net.cluster());
  return 2 * c.p.vpp * c.net.time(Collective::kSendRecv, bytes, g).seconds /
         c.e.comm_of(CommDim::kPp);
}

// What the pacing device runs per micro-batch: its decoder layers (MTP modules counted as layers)
// and its share of the output layer's micro-batches.
struct StageLoad {
  double layers = 0;
  double output = 0;  // 1 on the last stage; under DualPipe half on the device holding both ends
};

StageLoad stage_load(const Ctx& c, int stage) {
  const bool last = stage == c.p.pp - 1;
  return {stage_layers(c.m.layers, c.p.pp, stage) + (last ? d(c.m.mtp_layers) : 0.0),
          last ? 1.0 : 0.0};
}

// The slowest device paces the pipeline: of the first stage, the second (the middle stages take
// the extra layers first) and the last (the output layer and MTP), the one with the most work.
// Under DualPipe a device runs stage i for half the micro-batches and stage pp−1−i for the other
// half (DeepSeek-V3 Section 3.2.1).
StageLoad pacing_stage(const Ctx& c, double layer_s, double output_s) {
  auto load = [&](int stage) {
    StageLoad l = stage_load(c, stage);
    if (c.p.pipeline_schedule() == Schedule::kDualPipe && c.p.pp > 1) {
      const StageLoad mirror = stage_load(c, c.p.pp - 1 - stage);
      l = {(l.layers + mirror.layers) / 2, (l.output + mirror.output) / 2};
    }
    return l;
  };
  StageLoad best = load(0);
  for (int stage : {1, c.p.pp - 1}) {
    if (stage <= 0 || stage >= c.p.pp) continue;
    const StageLoad l = load(stage);
    if (l.layers * layer_s + l.output * output_s > best.layers * layer_s + best.output * output_s) {
      best = l;
    }
  }
  return best;
}

struct MicroBatch {
  double compute = 0, tp = 0, cp = 0, ep = 0, pp = 0;
  double forward = 0, backward = 0;  // compute of the forward and the backward pass
  double weight_grad = 0;            // of the backward, the weight-gradient GEMMs (= forward GEMMs)
  double total() const { return compute + tp + cp + ep + pp; }
};

// The shared experts' GEMMs of one MoE layer for one micro-batch, forward, backward and any
// recomputation: 2 FLOPs per weight of shared_experts FFNs of expert_ffn_hidden, split over tp
// like the layer's other GEMMs and priced at their rate.
double shared_expert_seconds(const Ctx& c) {
  if (!c.m.moe || c.m.moe->shared_experts == 0) return 0;
  const double flops = 2.0 * c.m.moe->shared_experts * d(ffn_params(c.m, c.m.moe->expert_ffn_hidden)) *
                       tokens_per_micro_batch(c) / c.p.tp;
  const double rate = c.peak * dense_gemm_efficiency(c) * gemm_width_factor(d(c.m.hidden) / c.p.tp);
  return flops * (2 + forward_passes(c.p)) / rate;
}

// Communication the step overlaps with computation exposes only what exceeds it: the MoE
// all-to-all under --ep-overlap (DualPipe's paired forward and backward chunks; Megatron-Core's
// 1F1B a2a overlap) behind the MoE layers' compute, or under --shared-expert-overlap behind the
// shared experts' compute alone (DeepSeek-V2, arXiv:2405.04434, Section 3.1.3: "we overlap the
// computation of shared experts with the expert parallel all-to-all communication"; Megatron-Core
// --moe-shared-expert-overlap), TP under --tp-overlap (Transformer Engine's userbuffers, Ascend
// MC2) behind the GEMMs, PP sends under DualPipe behind the paired chunk. Megatron-Core's 1F1B
// a2a overlap pairs layer by layer, whole layers on both sides (megatron/core/models/common/
// model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run: combine_bwd | dispatch_fwd,
// dispatch_bwd | combine_fwd on the communication stream against pre_dispatch_fwd (attention) |
// mlp_bwd, mlp_bwd_dw, mlp_fwd | pre_dispatch_bwd on the compute stream), so a MoE layer's
// attention hides its all-to-all as well as its experts do; dense layers, the embedding and the
// output layer have no all-to-all to pair with and hide none.
void hide_overlapped(const Ctx& c, double moe_compute, double shared_compute, double gemm,
                     MicroBatch& mb) {
  if (c.p.ep_overlap) {
    mb.ep = exposed_behind(c, mb.ep, moe_compute);
  } else if (c.p.shared_expert_overlap) {
    mb.ep = exposed_behind(c, mb.ep, shared_compute);
  }
  if (c.p.tp_overlap) mb.tp = exposed_behind(c, mb.tp, gemm);
  if (c.p.pipeline_schedule() == Schedule::kDualPipe) mb.pp = exposed_behind(c, mb.pp, mb.compute);
}

// Parameters a device holds, averaged over stages; DualPipe holds two stages' worth.
DeviceParams held_params(const Ctx& c) {
  DeviceParams n = device_params(c.m, c.p);
  if (c.p.pipeline_schedule() == Schedule::kDualPipe) n = {2 * n.dense, 2 * n.experts};
  return n;
}

// HBM bytes per parameter of Megatron's gradient accumulation without fusion, every micro-batch
// (Megatron-LM core_r0.6.0, the revision ModelLink's examples/README.md checks out):
// LinearWithGradAccumulationAndAsyncCommunication.backward computes
// "grad_weight = grad_output.t().matmul(total_input)" (megatron/core/tensor_parallel/layers.py),
// a gradient in the parameters' dtype, and the DDP hook on the parameter's grad accumulator then
// runs "param.main_grad.add_(param.grad.data)" (megatron/core/distributed/
// distributed_data_parallel.py, _make_param_hook): main_grad read and written, the gradient read.
// main_grad is fp32 ("grad_dtype = torch.float if accumulate_allreduce_grads_in_fp32 else
// param.dtype", ibid.; megatron/training/arguments.py sets accumulate_allreduce_grads_in_fp32 under
// --bf16: "bfloat16 requires gradient accumulation and all-reduce to be done in fp32"), fp16 under
// --fp16 without it. With the fusion the GEMM accumulates into main_grad itself
// (fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32, MindSpeed's npu_matmul_add_fp32 on
// Ascend), so the add is the whole difference: the fused GEMM's own output (fp32 read and
// written) is no cheaper than the unfused one's bf16 write, and plumb prices GEMMs by their FLOPs.
double grad_accum_bytes_per_param(const Ctx& c) {
  const double main_grad = (c.fp16 && !c.p.fp32_grad_reduce) ? 2 : 4;
  return 2 * main_grad + kActivationBytes;
}

// That add for one micro-batch over every parameter the device holds, at HBM bandwidth, on the
// compute stream inside the backward (the hook runs as each gradient is produced). The experts
// take it too: Megatron-Core's GroupedMLP (core_r0.6.0 moe/experts.py, gg.ops.gmm; on Ascend
// MindSpeed's npu_gmm, whose backward returns dw, mindspeed/ops/gmm.py at 4ea42a23) has no fused
// path and always returns a plain weight gradient to the same hook.
double grad_accum_seconds(const Ctx& c) {
  if (c.p.grad_accum_fusion) return 0;
  return hbm_seconds(c, held_params(c).total() * grad_accum_bytes_per_param(c));
}

MicroBatch micro_batch_seconds(const Ctx& c) {
  const LayerCompute f = layer_forward(c);
  const double layer_s = layer_compute_seconds(c, f);
  const double output_s = logits_seconds(c);
  const StageLoad stage = pacing_stage(c, layer_s, output_s);
  const double layers = stage.layers;
  MicroBatch mb;
  mb.compute = layers * layer_s + stage.output * ((1 + c.m.mtp_layers) * output_s +
                                                  train_metrics_seconds(c));
  mb.tp = layers * layer_tp_seconds(c);
  mb.cp = layers * layer_cp_seconds(c, f);
  mb.ep = layers * layer_ep_seconds(c);
  mb.pp = pp_seconds_per_micro_batch(c);
  mb.forward = layers * f.total();
  mb.backward = layers * 2 * f.total();
  const double accumulate = grad_accum_seconds(c);
  mb.compute += accumulate;
  mb.backward += accumulate;
  mb.weight_grad = layers * f.gemm;
  const double gemm = layers * f.gemm * (2 + forward_passes(c.p));
  hide_overlapped(c, layers * moe_share(c) * layer_s,
                  layers * moe_share(c) * shared_expert_seconds(c), gemm, mb);
  return mb;
}

// Compute slows while a collective runs beside it: the communication kernels take SMs and HBM
// bandwidth from the GEMMs. Lee et al. 2025, "Characterizing Compute-Communication Overlap in
// GPU-Accelerated Distributed Deep Learning" (arXiv:2507.03114), measure an average compute
// slowdown of 18.9% (at most 40.0%) while communication overlaps it, against the same compute
// alone (GPT and LLaMA training on 4 A100, H100, MI250 and MI210).
constexpr double kOverlapComputeSlowdown = 0.189;

// What an overlap of `comm` with `hiding` seconds of compute costs the step: what it leaves
// exposed (exposed_behind) and the slowdown of the compute its hidden part ran beside.
double contended_behind(const Ctx& c, double comm, double hiding) {
  const double hidden = comm - exposed_behind(c, comm, hiding);
  return comm - hidden + kOverlapComputeSlowdown * hidden;
}

// The units ZeRO-3 gathers and reduces one at a time: PyTorch FSDP wraps each transformer block
// as its own unit (Composer's fsdp_wrap_fn on MPTBlock, torchtitan's fully_shard per
// TransformerBlock) and issues one all-gather per unit and pass and one reduce-scatter per unit
// (Zhao et al. 2023, "PyTorch FSDP", VLDB, Section 3.2); DeepSpeed ZeRO-3 fetches each
// submodule's parameters likewise. The layers of the device's stage.
double zero3_units(const Ctx& c) { return std::max(1.0, d(c.m.layers) / c.p.pp); }

struct DpTimes {
  double reduce = 0, gather = 0;
};

// ZeRO run unit by unit, each micro-batch: ZeRO-3, and PyTorch FSDP's ZeRO-2 (SHARD_GRAD_OP).
bool per_unit(const Layout& p) { return p.zero >= 3 || (p.fsdp && p.zero == 2); }

// The reduction of `params` gradients over `g` (allreduce, or with ZeRO reduce-scatter then
// allgather of the updated weights: the same volume, Rajbhandari et al. 2020 Section 7), bf16, or
// fp32 under fp32_grad_reduce (the weights are still gathered in bf16). Run unit by unit
// (per_unit), one collective per unit (zero3_units), each paying its own latency.
DpTimes dp_times(const Ctx& c, double params, const GroupShape& g) {
  if (g.ranks <= 1 || params <= 0) return {};
  const double reduce_bytes = params * (c.p.fp32_grad_reduce ? 4 : 2);
  const double gather_bytes = params * 2;
  const double rate = c.e.comm_of(CommDim::kDp);
  if (c.p.zero == 0) return {c.net.time(Collective::kAllReduce, reduce_bytes, g).seconds / rate, 0};
  const double units = per_unit(c.p) ? zero3_units(c) : 1;
  return {units * c.net.time(Collective::kReduceScatter, reduce_bytes / units, g).seconds / rate,
          units * c.net.time(Collective::kAllGather, gather_bytes / units, g).seconds / rate};
}

// HBM bytes per parameter that PyTorch FSDP's post-backward moves over each unit's unsharded
// gradient, every micro-batch (torch/distributed/fsdp, torch 2.1-2.2): the parameters are views
// of the unit's flat parameter (FlatParamHandle._get_unflat_views: flat_param.split, then view),
// so autograd's split backward concatenates their gradients into one flat gradient (a copy: bf16
// read and written, 4 B); _post_backward_hook casts it to the reduce dtype when that differs
// (flat_param.grad.to(handle._reduce_dtype): 2 B read, 4 B written under fp32_grad_reduce); and
// _reduce_grad divides it in place by the gradient pre-divide factor before the reduce-scatter
// (_div_if_needed(padded_unsharded_grad, _gradient_predivide_factor), a factor > 1 on 2 ranks or
// more: the reduce dtype's bytes read and written). The all-gather needs no copy: it writes into
// the padded flat parameter the views point into (_all_gather_flat_param, all_gather_into_tensor).
double fsdp_grad_pass_bytes(const Layout& p) {
  const double reduce = p.fp32_grad_reduce ? 4 : 2;
  const double cast = p.fp32_grad_reduce ? 2 + 4 : 0;
  return 2 * kActivationBytes + cast + 2 * reduce;
}

// Those passes for one micro-batch over the parameters the device holds unsharded, at HBM
// bandwidth; they run on FSDP's post-backward stream beside the next unit's backward and are
// priced in full (memory-bound kernels beside the backward's own element-wise ones).
double fsdp_grad_pass_seconds(const Ctx& c) {
  if (!c.p.fsdp || c.p.zero < 2) return 0;
  const DeviceParams n = held_params(c);
  const double params = (dp_group(c).ranks > 1 ? n.dense : 0) +
                        (expert_dp_group(c).ranks > 1 ? n.experts : 0);
  return hbm_seconds(c, params * fsdp_grad_pass_bytes(c.p));
}

// Gradient reduction: the dense weights over their dp·cp replicas, the experts' over the smaller
// expert-data-parallel group (tp·cp·dp/(ep·etp) ranks, ep·etp apart). Overlapped with the last
// micro-batch's backward and the first one's forward (Megatron --overlap-grad-reduce /
// --overlap-param-gather, DeepSpeed overlap_comm). ZeRO-3 gathers weights for each micro-batch's forward and backward
// and reduce-scatters its gradients after each micro-batch's backward (PyTorch FSDP reduces
// every micro-batch: Composer calls no no_sync); unit by unit, so that all but one unit's
// collectives hide behind the compute of another unit: the first unit's all-gather of the
// forward and of the backward and the last unit's reduce-scatter have nothing to run beside (FSDP
// prefetches only the next unit: forward_prefetch off by default, backward_prefetch
// BACKWARD_PRE/POST one unit ahead; Zhao et al. 2023 Section 3.3). The rest runs beside the
// compute of every layer, which it slows by kOverlapComputeSlowdown (contended_behind); the
// ZeRO 0-2 overlap above, beside one micro-batch's pass, is left as it was (docs/plan.md,
// section 7: with the slowdown there megatron-sc21's largest error grew from 5.3% to 5.7%).
double dp_seconds(const Ctx& c, const MicroBatch& mb, bool overlap) {
  const DeviceParams n = held_params(c);
  const DpTimes dense = dp_times(c, n.dense, dp_group(c));
  const DpTimes experts = dp_times(c, n.experts, expert_dp_group(c));
  const double reduce = dense.reduce + experts.reduce;
  const double gather = dense.gather + experts.gather;
  if (per_unit(c.p)) {
    // ZeRO-3 gathers a unit for its forward and again for its backward; FSDP's SHARD_GRAD_OP
    // keeps the forward's gathered unit for the backward (reshard_after_forward off) and frees
    // it in the post-backward, so it gathers once per micro-batch; the first unit's gather(s)
    // and the last unit's reduce-scatter are unhidden either way.
    const double gathers = c.p.zero >= 3 ? 2 : 1;
    const double per_micro_batch = gathers * gather + reduce;
    const double unhidden = per_micro_batch / zero3_units(c);
    return (unhidden + contended_behind(c, per_micro_batch - unhidden, mb.compute) +
            fsdp_grad_pass_seconds(c)) *
           d(c.p.micro_batches());
  }
  if (!overlap) return reduce + gather;
  return exposed_behind(c, reduce, mb.backward) + exposed_behind(c, gather, mb.forward);
}

// Adam over the parameters this device updates: with ZeRO-1 or more, its shard of each part.
double optimizer_seconds(const Ctx& c) {
  const DeviceParams n = held_params(c);
  const bool sharded = c.p.zero >= 1;
  const double params = n.dense / (sharded ? dense_replicas(c.p) : 1) +
                        n.experts / (sharded ? expert_replicas(c.p) : 1);
  return hbm_seconds(c, params * kAdamBytesPerParam);
}

int communicators(const Layout& p) {
  int n = 0;
  for (int size : {p.tp, p.cp, p.ep, p.dp, p.pp}) n += size > 1 ? 1 : 0;
  return n;
}

// The dispatch's receive buffer and the combine's input: top_k copies of the device's tokens.
// The allgather dispatcher's gathered tokens and the buffer its combine scatter-adds into: two
// tensors of the ep·etp ranks' tokens, the second fp32 under --fp32-combine.
double moe_buffer_bytes(const Ctx& c) {
  if (!c.m.moe || c.moe_layers == 0) return 0;
  if (c.p.dispatcher == Dispatcher::kAllGather) {
    const double combine_bytes = c.p.fp32_combine ? 4.0 : kActivationBytes;
    return local_tokens(c) * c.p.ep * c.p.expert_tp() * d(c.m.hidden) *
           (kActivationBytes + combine_bytes);
  }
  return 2 * local_tokens(c) * c.p.expert_tp() * c.m.moe->top_k * d(c.m.hidden) * kActivationBytes;
}

MemoryUse memory_use(const Ctx& c) {
  const StageMemory s = largest_stage(c.m, c.p);
  MemoryUse u;
  u.weights = s.states.weights;
  u.grads = s.states.gradients;
  u.optimizer = s.states.optimizer;
  u.activations = s.activations;
  u.stage = s.stage;
  u.stage_layers = s.layers;
  u.stage_embedding = s.embedding;
  u.stage_output = s.output;
  // The sequence-parallel allgather output of one layer's input and NCCL's own buffers.
  const double gathered = tokens_per_micro_batch(c) * d(c.m.hidden) * kActivationBytes;
  u.buffers = (c.p.tp > 1 ? 2 * gathered : 0) + communicators(c.p) * kNcclBytesPerCommunicator +
              moe_buffer_bytes(c);
  u.reserved = kReservedBytes;
  u.capacity = c.hw.hbm_gb * 1e9;
  return u;
}

// FLOPs per token the hardware runs: model FLOPs plus recomputation.
double hardware_flops_per_token(const ModelSpec& m, Recompute r) {
  switch (r) {
    case Recompute::kFull:
      return full_recompute_flops_per_token(m);
    case Recompute::kSelective:
      return model_flops_per_token(m) + attention_score_flops(m) * m.layers;
    case Recompute::kSelectiveOp:
      return selective_op_flops_per_token(m);
    case Recompute::kNone:
      return model_flops_per_token(m);
  }
  return 0;
}

// The peak attention scores and the output layer run at: FP8 (and FP4) training keeps attention
// and the output head in bf16 (DeepSeek-V3, arXiv:2412.19437, Section 3.3.1: "the embedding
// module, the output head, MoE gating modules, normalization operators, and attention
// operators" retain their original precision). A device without a bf16 peak uses its fp16 one,
// or the run's own.
double bf16_peak(const HardwareSpec& hw, const std::string& precision, double peak) {
  if (precision != "fp8" && precision != "fp4") return peak;
  for (const char* name : {"bf16", "fp16"}) {
    const auto it = hw.peak_tflops.find(name);
    if (it != hw.peak_tflops.end()) return it->second * 1e12;
  }
  return peak;
}

}  // namespace

// Pipeline fill and drain per schedule, with T = F + B the time of one micro-batch on the pacing
// stage and W its weight-gradient part: 1F1B (p−1)·T (Narayanan et al. 2021); interleaved
// (p−1)·T/v (ibid.); ZB-H1 (p−1)·(T − 2W) — F + B − 2W, the B pass split into input and weight
// gradients (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", Section 3; DeepSeek-V3 Table 2,
// "ZB1P"); DualPipe (p/2 − 1)·(T + B − 3W) — (F&B + B − 3W) of DeepSeek-V3 Table 2, the paired
// F&B chunk taking T.
double pipeline_bubble(const Layout& p, const StagePass& pass) {
  const double t = pass.total;
  switch (p.pipeline_schedule()) {
    case Schedule::kOneFOneB:
      return (p.pp - 1.0) * t;
    case Schedule::kInterleaved:
      return (p.pp - 1.0) / p.vpp * t;
    case Schedule::kZeroBubble:
      return (p.pp - 1.0) * std::max(0.0, t - 2 * pass.weight_grad);
    case Schedule::kDualPipe:
      return (p.pp / 2.0 - 1) * std::max(0.0, t + pass.backward - 3 * pass.weight_grad);
  }
  return 0;
}

double overhead_share(const Prediction& p) {
  const Breakdown& b = p.breakdown;
  return p.step_time_s > 0 ? (b.total() - b.compute) / p.step_time_s : 0;
}

double remote_copies(int top_k, int max_nodes, int nodes, bool once_per_node) {
  if (nodes <= 1) return 0;
  int copies = max_nodes > 0 ? std::min(max_nodes, top_k) : top_k;
  if (once_per_node) copies = std::min(copies, nodes);
  return copies * (nodes - 1.0) / nodes;
}

ComputeModel compute_model(const HardwareSpec& hw) {
  ComputeModel c;
  c.efficiency_assumed = !hw.efficiency;
  c.gemm_efficiency = hw.efficiency.value_or(kAssumedMamfEfficiency) * kFrameworkGemmShare;
  return c;
}

bool beyond_max_devices(const Layout& p) {
  return d(p.tp) * p.cp * p.pp * p.dp > d(kMaxDevices);  // in double: cannot overflow
}

std::string too_many_devices(const Layout& p) {
  return fmt::format("tp {} × cp {} × pp {} × dp {} = {:.4g} devices, more than the {} plumb plans "
                     "for", p.tp, p.cp, p.pp, p.dp, d(p.tp) * p.cp * p.pp * p.dp, kMaxDevices);
}

namespace {

// Collects a layout's problems; a message is formatted only when someone reads it (search calls
// layout_valid millions of times with none).
class LayoutCheck {
 public:
  explicit LayoutCheck(std::vector<std::string>* problems) : problems_(problems) {}
  template <typename Message>
  void fail(Message&& message) {
    ok_ = false;
    if (problems_) problems_->push_back(message());
  }
  bool ok() const { return ok_; }

 private:
  std::vector<std::string>* problems_;
  bool ok_ = true;
};

// MoE parallel folding: ep × etp ranks inside the tp × cp × dp ranks of one stage.
void check_experts(const ModelSpec& m, const Layout& p, LayoutCheck& check) {
  if (!m.moe) {
    if (p.ep > 1) check.fail([&] { return fmt::format("ep {} needs a MoE model", p.ep); });
    if (p.etp > 0 && p.etp != p.tp) {
      check.fail([&] { return fmt::format("etp {} needs a MoE model", p.etp); });
    }
    if (p.ep_overlap) check.fail([] { return std::string("--ep-overlap needs a MoE model"); });
    if (p.shared_expert_overlap) {
      check.fail([] { return std::string("--shared-expert-overlap needs a MoE model"); });
    }
    if (p.capacity_factor > 0) {
      check.fail([] { return std::string("--capacity-factor needs a MoE model"); });
    }
    if (p.einsum_dispatch) {
      check.fail([] { return std::string("--einsum-dispatch needs a MoE model"); });
    }
    if (p.dispatcher != Dispatcher::kAllToAll) {
      check.fail([&] {
        return fmt::format("--dispatcher {} needs a MoE model",
                           name_of(kDispatcherNames, p.dispatcher));
      });
    }
    if (p.fp32_combine) {
      check.fail([] { return std::string("--fp32-combine needs a MoE model"); });
    }
    return;
  }
  if (p.fp32_combine && p.dispatcher != Dispatcher::kAllGather) {
    check.fail([] {
      return std::string("--fp32-combine is MindSpeed's allgather unpermutation: it needs "
                         "--dispatcher allgather");
    });
  }
  if (p.einsum_dispatch && p.capacity_factor <= 0) {
    check.fail([] {
      return std::string("--einsum-dispatch needs --capacity-factor: GShard's einsums run over "
                         "each expert's capacity");
    });
  }
  if (p.shared_expert_overlap && m.moe->shared_experts == 0) {
    check.fail([] {
      return std::string("--shared-expert-overlap needs a model with shared experts");
    });
  }
  const int64_t folded = int64_t{p.tp} * p.cp * p.dp;
  if (folded % (int64_t{p.ep} * p.expert_tp()) != 0) {
    check.fail([&] {
      return fmt::format("ep {} × etp {} must divide tp {} × cp {} × dp {} = {}, the ranks the MoE "
                         "layers fold over", p.ep, p.expert_tp(), p.tp, p.cp, p.dp, folded);
    });
  }
  if (m.moe->experts % p.ep != 0) {
    check.fail([&] { return fmt::format("ep {} must divide the {} experts", p.ep, m.moe->experts); });
  }
}

void check_schedule(const Layout& p, LayoutCheck& check) {
  const Schedule schedule = p.pipeline_schedule();
  if (schedule == Schedule::kInterleaved && p.vpp < 2) {
    check.fail([] { return std::string("the interleaved schedule needs vpp > 1"); });
  }
  const bool one_chunk = schedule == Schedule::kZeroBubble || schedule == Schedule::kDualPipe;
  if (one_chunk && p.vpp > 1) {
    check.fail([&] {
      return fmt::format("the {} schedule runs one chunk per stage: vpp must be 1, not {}",
                         schedule == Schedule::kDualPipe ? "DualPipe" : "zero-bubble", p.vpp);
    });
  }
  if (schedule == Schedule::kDualPipe && (p.pp < 2 || p.pp % 2 != 0 || p.micro_batches() % 2 != 0)) {
    check.fail([&] {
      return fmt::format("DualPipe needs an even pp ≥ 2 and an even number of micro-batches (pp {}, "
                         "{} micro-batches)", p.pp, p.micro_batches());
    });
  }
  if (schedule == Schedule::kZeroBubble && p.pp < 2) {
    check.fail([] { return std::string("the zero-bubble schedule needs pp ≥ 2"); });
  }
}

// Eager mode and torchtitan's op-level policy are priced from the code of a dense Llama block:
// its element-wise ops and the order of its matmuls.
void check_reference_code(const ModelSpec& m, const Layout& p, LayoutCheck& check) {
  const bool dense = !m.moe && !m.mla;
  if (p.eager && (!dense || m.ffn_type != FfnType::kSwiglu)) {
    check.fail([] {
      return std::string("--eager prices the Llama reference code's element-wise ops (RMSNorm, "
                         "rotary, SwiGLU): it needs a dense SwiGLU model without MLA");
    });
  }
  if (p.recompute == Recompute::kSelectiveOp && !dense) {
    check.fail([] {
      return std::string("--recompute selective-op prices torchtitan's policy by the matmul order "
                         "of a dense Llama block: it needs a dense model without MLA");
    });
  }
}

}  // namespace

bool layout_valid(const ModelSpec& m, const Layout& p, int64_t devices,
                  std::vector<std::string>* problems) {
  LayoutCheck check(problems);
  if (beyond_max_devices(p)) {
    check.fail([&] { return too_many_devices(p); });
  } else if (p.devices() != devices) {
    check.fail([&] {
      return fmt::format("tp {} × cp {} × pp {} × dp {} = {} devices, not {}", p.tp, p.cp, p.pp,
                         p.dp, p.devices(), devices);
    });
  }
  if (m.heads % p.tp != 0) {
    check.fail([&] { return fmt::format("{} attention heads do not divide by tp {}", m.heads, p.tp); });
  } else if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    check.fail([&] { return fmt::format("{} KV heads do not divide by tp {}", m.kv_heads, p.tp); });
  }
  if (m.layers < int64_t{p.pp} * p.vpp) {
    check.fail([&] {
      return fmt::format("{} layers cannot fill pp {} × vpp {} stages", m.layers, p.pp, p.vpp);
    });
  }
  // Ulysses splits the heads over the cp ranks of each tp rank (Jacobs et al. 2023, Section 3.1).
  if (p.cp > 1 && p.cp_algo == CpAlgo::kUlysses && m.heads % (int64_t{p.tp} * p.cp) != 0) {
    check.fail([&] {
      return fmt::format("{} attention heads do not divide by tp {} × cp {} (Ulysses splits the heads "
                         "over the cp ranks)", m.heads, p.tp, p.cp);
    });
  }
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0) {
    check.fail([&] {
      return fmt::format("sequence {} does not split into 2 × cp {} chunks", m.seq_len, p.cp);
    });
  }
  const int64_t per_step = static_cast<int64_t>(p.dp) * p.micro_batch;
  if (p.global_batch % per_step != 0) {
    check.fail([&] {
      return fmt::format("global batch {} is not a multiple of dp {} × micro-batch {}",
                         p.global_batch, p.dp, p.micro_batch);
    });
  } else if (p.vpp > 1 && p.micro_batches() % p.pp != 0) {
    check.fail([&] {
      return fmt::format("the interleaved schedule needs micro-batches ({}) a multiple of pp {}",
                         p.micro_batches(), p.pp);
    });
  }
  check_experts(m, p, check);
  check_schedule(p, check);
  check_reference_code(m, p, check);
  // PyTorch FSDP's sharding strategies that plumb prices: SHARD_GRAD_OP and FULL_SHARD.
  if (p.fsdp && p.zero < 2) {
    check.fail([&] {
      return fmt::format("--fsdp prices PyTorch FSDP's SHARD_GRAD_OP (ZeRO 2) or FULL_SHARD "
                         "(ZeRO 3); got ZeRO {}",
                         p.zero);
    });
  }
  return check.ok();
}

int64_t global_batch_near(const Layout& p, const ModelSpec& m, double batch_tokens) {
  int64_t unit = static_cast<int64_t>(p.dp) * p.micro_batch * (p.vpp > 1 ? p.pp : 1);
  if (p.pipeline_schedule() == Schedule::kDualPipe) unit *= 2;  // an even number of micro-batches
  const double sequences = batch_tokens / d(m.seq_len);
  return std::max<int64_t>(1, std::llround(sequences / d(unit))) * unit;
}

std::vector<std::string> layout_problems(const ModelSpec& m, const Layout& p, int64_t devices) {
  std::vector<std::string> problems;
  layout_valid(m, p, devices, &problems);
  return problems;
}

Predictor::Predictor(const ModelSpec& m, const HardwareSpec& hw, const Network& net,
                     std::string precision, ComputeModel compute)
    : m_(m), hw_(hw), net_(net), precision_(std::move(precision)), compute_(compute) {
  const auto peak = hw.peak_tflops.find(precision_);
  if (peak == hw.peak_tflops.end()) {
    std::vector<std::string> known;
    for (const auto& [name, value] : hw.peak_tflops) known.push_back(name);
    throw Error(fmt::format("--precision {}: {} gives no peak for it; it gives: {}", precision_,
                            hw.name, join(known, ", ")));
  }
  peak_ = peak->second * 1e12;
  peak_bf16_ = bf16_peak(hw, precision_, peak_);
  mfu_peak_ = peak_;  // MFU is against the chip's own peak for the precision
  // FP8 and FP4 GEMMs in a training step: at most kLowPrecisionGemmSpeedup × the bf16 rate.
  peak_ = std::min(peak_, peak_bf16_ * kLowPrecisionGemmSpeedup);
  layer_forward_flops_ = avg_layer_forward_flops(m);
  model_flops_ = model_flops_per_token(m);
  moe_layers_ = moe_layer_count(m);
  routed_flops_ = routed_expert_flops(m);
  quantised_ = avg_quantised_values(m, precision_);
  fp16_ = precision_ == "fp16";
  for (const auto& [name, r] : kRecomputeNames) {
    hardware_flops_[static_cast<size_t>(r)] = hardware_flops_per_token(m, r);
  }
}


MemoryUse Predictor::memory(const Layout& p) const {
  return memory_use(Ctx{m_, hw_, net_, p, peak_, peak_bf16_, compute_.gemm_efficiency,
                        compute_.tuned, layer_forward_flops_, moe_layers_, routed_flops_, quantised_,
                        fp16_});
}

Prediction Predictor::operator()(const Layout& p) const {
  const Ctx c{m_, hw_, net_, p, peak_, peak_bf16_, compute_.gemm_efficiency, compute_.tuned,
              layer_forward_flops_,
              moe_layers_, routed_flops_, quantised_, fp16_};
  const MicroBatch mb = micro_batch_seconds(c);
  const double micro_batches = d(p.micro_batches());
  Prediction r;
  r.layout = p;
  r.precision = precision_;
  Breakdown& b = r.breakdown;
  b.compute = micro_batches * mb.compute;
  b.tp = micro_batches * mb.tp;
  b.cp = micro_batches * mb.cp;
  b.ep = micro_batches * mb.ep;
  b.pp = micro_batches * mb.pp;
  b.bubble = pipeline_bubble(p, {mb.total(), mb.backward, mb.weight_grad});
  b.dp = dp_seconds(c, mb, compute_.overlap_dp);
  b.optimizer = optimizer_seconds(c);
  r.step_time_s = b.total();
  const double tokens = d(p.global_batch) * d(m_.seq_len);
  const double devices = d(p.devices());
  r.tokens_per_s = tokens / r.step_time_s;
  r.tflops_per_device = model_flops_ * r.tokens_per_s / devices / 1e12;
  r.hardware_tflops_per_device =
      hardware_flops_[static_cast<size_t>(p.recompute)] * r.tokens_per_s / devices / 1e12;
  r.mfu = r.tflops_per_device * 1e12 / mfu_peak_;
  r.hfu = r.hardware_tflops_per_device * 1e12 / mfu_peak_;
  r.comm_wait_share = b.communication() / r.step_time_s;
  r.memory = memory_use(c);
  return r;
}

}  // namespace plumb::plan
