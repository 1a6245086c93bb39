// Memory per device of a training plan: model states (Rajbhandari et al. 2020, "ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", Section 3 and Figure 1) and
// activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", Section 4, Table 2).
#pragma once

#include <cstdint>

#include "plan/model.h"

namespace plumb::plan {

// What the backward recomputes: nothing; attention's score part (Korthikanti et al. 2022, Section
// 5, Megatron's --recompute-granularity selective); every layer's forward (full); or torchtitan's
// op-level selective checkpointing (kSelectiveOp: its selective_ac_option 'op' policy keeps the
// outputs of the matmuls, flash attention and the max/abs of FP8 scaling, "except every second
// mm", and recomputes the rest of the layer's forward — torchtitan/parallelisms/
// parallelize_llama.py at 9dec370, _save_list and _custom_policy; the same at e7c0cae).
enum class Recompute { kNone, kSelective, kFull, kSelectiveOp };

// The most devices a plan may span: 2^24 = 16,777,216, far beyond any cluster built (the largest
// announced hold a few hundred thousand accelerators). It keeps every layout size inside an int
// and the products the planner forms from them inside int64.
inline constexpr int64_t kMaxDevices = int64_t{1} << 24;

// The pipeline schedule (docs/plan.md, "Schedules"): 1F1B (Narayanan et al. 2021), its interleaved
// form with vpp > 1 virtual stages, ZB-H1 zero bubble (Qi et al. 2024, "Zero Bubble Pipeline
// Parallelism") and DualPipe (DeepSeek-AI 2024, DeepSeek-V3 report Section 3.2.1).
enum class Schedule { kOneFOneB, kInterleaved, kZeroBubble, kDualPipe };
// What MoE dispatch sends: bf16 tokens, or fp8 with a scale per 128 values (DeepSeek-V3 Section
// 3.3.2: "quantize the activation before MoE up-projections into FP8, then apply dispatch").
enum class DispatchPrecision { kBf16, kFp8 };
// How context parallelism splits attention: ring attention (Liu et al. 2023; Megatron-Core's
// context parallelism, MindSpeed's megatron_cp_algo), K and V chunks passed round the cp ranks
// behind attention's computation; or DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv:2309.14509;
// MindSpeed's ulysses_cp_algo), an all-to-all of Q, K, V before attention and of its output
// after, which turns the sequence split into a split of the heads.
enum class CpAlgo { kRing, kUlysses };
// Megatron-Core's MoE token dispatcher (--moe-token-dispatcher-type): alltoall sends each token's
// top_k copies to the ranks of their experts; allgather gathers every token of the tp × ep ranks
// onto each of them and reduce-scatters the experts' outputs back (MoEAllGatherTokenDispatcher);
// deepep is the flex dispatcher with DeepSeek's DeepEP kernels (--moe-token-dispatcher-type flex
// --moe-flex-dispatcher-backend deepep), which send a token across the scale-out network once per
// node its experts are on and forward it inside the node over NVLink (step.cc, a2a_seconds).
enum class Dispatcher { kAllToAll, kAllGather, kDeepEP };

struct Layout {
  int tp = 1;     // tensor parallel (with sequence parallelism)
  int pp = 1;     // pipeline stages
  int dp = 1;     // data parallel
  int ep = 1;     // expert parallel: the MoE layers' experts over ep ranks
  int etp = 0;    // expert tensor parallel of the MoE layers (Megatron-Core --expert-tensor-
                  // parallel-size); 0: the same as tp. MoE layers fold ep × etp over the ranks
                  // of tp × cp × dp (Liu et al. 2025, "MoE Parallel Folding").
  int cp = 1;     // context parallel (the sequence split over cp ranks)
  int vpp = 1;    // virtual pipeline stages per device (interleaved 1F1B)
  int zero = 0;   // 0: none, 1: optimizer states, 2: + gradients, 3: + weights sharded over dp
  int64_t micro_batch = 1;
  int64_t global_batch = 0;  // sequences per step; 0: one micro-batch per data-parallel rank
  Recompute recompute = Recompute::kNone;
  bool flash_attention = true;  // no s×s score matrix kept (Dao et al. 2022)
  Schedule schedule = Schedule::kOneFOneB;  // with vpp > 1: interleaved (pipeline_schedule)
  bool ep_overlap = false;  // MoE all-to-all overlapped with computation (DualPipe, Megatron's
                            // --overlap-moe-expert-parallel-comm): only the excess is exposed
  bool shared_expert_overlap = false;  // the all-to-all behind the shared experts' computation
                                       // only (DeepSeek-V2 Section 3.1.3; Megatron-Core's
                                       // --moe-shared-expert-overlap)
  bool tp_overlap = false;  // TP collectives overlapped with the GEMMs (Transformer Engine's
                            // userbuffers, Ascend MC2)
  // Gradients reduced in fp32 (4 B a value) rather than bf16: PyTorch FSDP's
  // MixedPrecision(reduce_dtype=torch.float32), as Composer's mixed_precision 'DEFAULT' sets it
  // (composer/trainer/mosaic_fsdp_utils.py, get_mixed_precision, from v0.16.4) and torchtitan's
  // mixed_precision_reduce default; the parameters are still gathered in bf16.
  bool fp32_grad_reduce = false;
  // Sharded by PyTorch FSDP (torch.distributed.fsdp: Composer/LLM Foundry's FSDP1, torchtitan's
  // fully_shard) rather than Megatron's distributed optimizer or its own FSDP: with ZeRO 2 or 3,
  // every micro-batch's gradients are reduce-scattered unit by unit after passes over each unit's
  // unsharded gradient in HBM, and ZeRO 2 (SHARD_GRAD_OP) gathers each unit once per micro-batch
  // (step.cc, fsdp_grad_pass_seconds and dp_seconds).
  bool fsdp = false;
  // Composer's training metrics, updated after every micro-batch's backward on its logits
  // (composer/trainer/trainer.py, _train_microbatch: "Use microbatch outputs to update training
  // metrics", _eval_train_metrics under torch.no_grad() and the run's precision context): LLM
  // Foundry's MPT lists LanguageCrossEntropy and LanguagePerplexity, each a
  // torch.nn.CrossEntropyLoss over the [tokens × vocab] logits (step.cc, train_metrics_seconds).
  bool train_metrics = false;
  // The allgather dispatcher's combine in fp32: MindSpeed's allgather_token_unpermutation (the
  // patch ModelLink applies under --moe-permutation-async-comm) scatter-adds the experts' outputs
  // into an fp32 buffer of the gathered tokens and reduce-scatters that fp32 buffer (step.cc,
  // allgather_dispatch_seconds). Read only with the allgather dispatcher.
  bool fp32_combine = false;
  // PyTorch eager mode (no torch.compile) running the Llama reference code's element-wise ops one
  // by one: RMSNorm as eight kernels, partly in fp32, rotary embeddings through complex fp32, SwiGLU as
  // silu then mul (torchtitan/models/norms.py RMSNorm and models/llama/model.py at 9dec370; Meta's
  // llama/model.py, which both copy). Their HBM traffic replaces the fused kernels' (step.cc,
  // eager_traffic_per_token). SwiGLU models only.
  bool eager = false;
  // Megatron's gradient accumulation fusion (--gradient-accumulation-fusion, on by default): the
  // weight-gradient GEMM of every tensor-parallel linear layer accumulates into the fp32 main_grad
  // itself (fused_weight_gradient_mlp_cuda.wgrad_gemm_accum_fp32; MindSpeed's
  // npu_matmul_add_fp32 on Ascend). Without it (--no-gradient-accumulation-fusion, and always in
  // ModelLink, whose own argument keeps it off) the GEMM returns a bf16 gradient and the DDP
  // parameter hook adds it into main_grad, one element-wise pass per micro-batch over every
  // parameter the device holds (step.cc, grad_accum_seconds).
  bool grad_accum_fusion = true;
  DispatchPrecision dispatch = DispatchPrecision::kBf16;
  CpAlgo cp_algo = CpAlgo::kRing;
  Dispatcher dispatcher = Dispatcher::kAllToAll;
  // GShard-style capacity (Lepikhin et al. 2021): each expert takes a fixed buffer of
  // ceil(tokens / experts · factor · top_k) slots per device, padded or dropping; 0: dropless
  // (Megatron-Core's default). DeepSpeed-MoE --moe-train-capacity-factor, Megatron-Core
  // --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity.
  double capacity_factor = 0;
  // Dispatch and combine as GShard's one-hot einsums over [tokens × experts × capacity]
  // (Lepikhin et al. 2021, Algorithm 2; DeepSpeed-MoE sharded_moe.py, which AscendSpeed and
  // ModelLink's Mixtral use) instead of a permutation; needs a capacity factor.
  bool einsum_dispatch = false;

  int expert_tp() const { return etp > 0 ? etp : tp; }
  // The schedule that runs: 1F1B with vpp > 1 virtual stages is the interleaved one.
  Schedule pipeline_schedule() const {
    return schedule == Schedule::kOneFOneB && vpp > 1 ? Schedule::kInterleaved : schedule;
  }

  int64_t devices() const { return static_cast<int64_t>(tp) * cp * pp * dp; }
  // Micro-batches each pipeline runs per step: global batch / (dp · micro-batch).
  int64_t micro_batches() const {
    return global_batch > 0 ? global_batch / (static_cast<int64_t>(dp) * micro_batch) : 1;
  }
};

struct ModelStates {
  double weights = 0;    // bytes per device
  double gradients = 0;
  double optimizer = 0;
};

// Parameters one device holds before ZeRO, averaged over the stages: the dense part over tp·pp,
// the routed experts over etp·pp·ep.
struct DeviceParams {
  double dense = 0;
  double experts = 0;
  double total() const { return dense + experts; }
};
DeviceParams device_params(const ModelSpec& m, const Layout& p);
double params_per_device(const ModelSpec& m, const Layout& p);  // device_params(m, p).total()

// The devices holding the same dense weights: dp · cp (context-parallel ranks hold the same
// weights, and Megatron's distributed optimizer shards over both).
double dense_replicas(const Layout& p);
// The devices holding the same expert: Megatron-Core's expert-data-parallel group,
// tp·cp·dp / (ep·etp) (the MoE layers fold ep × etp over the attention's tp × cp × dp ranks;
// dp·cp / ep when etp = tp). The experts' gradients are reduced, and their ZeRO shards taken,
// over this smaller group.
double expert_replicas(const Layout& p);

// Mixed-precision Adam: bf16 weights (2 B) and gradients (2 B), fp32 master weights, momentum and
// variance (12 B) per parameter; ZeRO stage k divides the first k of (optimizer, gradients,
// weights) — in that order — by the replicas of each part: dense_replicas for the dense weights,
// expert_replicas for the routed experts'.
ModelStates model_states(const ModelSpec& m, const Layout& p);

// Activation bytes of one layer for one micro-batch with tensor and sequence parallelism:
// s·b·h/t · (34 + 5·a·s/h) without recomputation, s·b·h/t · 34 with selective recomputation of
// attention (or FlashAttention, which keeps no s×s scores), 2·s·b·h/t (the layer's input) with
// full recomputation. 2-byte activations; s is the sequence share of one CP rank. The 34 is
// attention 11 + layer norms 4 + MLP 19 (Korthikanti Section 4.1); the MLP's 19 = 2 (input) +
// 17 for an FFN of width 4h, scaled here by the FFN's width (top_k + shared experts for MoE) and
// by 1.5 for SwiGLU's third projection.
double layer_activation_bytes(const ModelSpec& m, const Layout& p);

// Activations on the first pipeline stage, the fullest with 1F1B: it holds pp micro-batches in
// flight of its layers/pp layers — the whole model's layers' worth of one micro-batch; the
// interleaved schedule holds (1 + (p−1)/(p·v)) times that (Korthikanti Section 4.2.3). The
// even-split average; stage_memory below is what one stage holds.
double activation_bytes(const ModelSpec& m, const Layout& p);

// Decoder layers of pipeline stage `stage` (0-based) of pp. An even split when pp divides the
// layers; otherwise the middle stages take one more first and the first and last stages, which
// also hold the embedding and the output layer, the fewer (as Llama 3 405B ran 126 layers on 16
// stages: 7 on the first and last, 8 on the others; Dubey et al. 2024, Section 3.3.2).
int stage_layers(int layers, int pp, int stage);
// The first decoder layer of a stage.
int stage_first_layer(int layers, int pp, int stage);

// Micro-batches in flight on a stage at its peak, in units of all its layers' activations for one
// micro-batch (m = micro-batches per step): 1F1B and ZB-H1 min(pp − stage, m) (Narayanan et al.
// 2021; Qi et al. 2024 keep 1F1B's memory); interleaved (pp − stage − 1)·2 + (v − 1)·pp + 1 chunks
// of 1/v of the stage (Megatron-LM's warm-up count), at most m·v; DualPipe pp + 1 (DeepSeek-V3
// report, Table 2), at most m.
double in_flight(const Layout& p, int stage);

struct StageMemory {
  int stage = 0;         // 0-based; with DualPipe the device holding stages `stage` and pp−1−stage
  int layers = 0;        // decoder layers the device holds (MTP modules not counted)
  bool embedding = false;  // holds the input embedding
  bool output = false;     // holds the output layer (and the MTP modules)
  ModelStates states;
  double activations = 0;  // bytes
  double total() const { return states.weights + states.gradients + states.optimizer + activations; }
};

// What the device of one stage holds: its layers' dense weights over tp and experts over etp·ep,
// the embedding (first stage), the output layer (last stage; a tied embedding keeps its copy there
// when pp > 1, as Megatron-LM does), the MTP modules (last stage, as DeepSeek-V3 places them);
// under DualPipe two mirrored stages (two copies of the parameters, DeepSeek-V3 Table 2). The
// activations: in_flight × its layers' activations, and the last stage's fp32 logits kept for the
// loss's backward (s·b·V/tp × 4 bytes for the one micro-batch between its forward and backward).
StageMemory stage_memory(const ModelSpec& m, const Layout& p, int stage);
// The fullest of the stages that can be: the first (most in flight, the embedding), the second
// (all its layers, one micro-batch fewer), the last (the output layer, logits and MTP).
StageMemory largest_stage(const ModelSpec& m, const Layout& p);

}  // namespace plumb::plan
