// The step-time predictor: one training step of a layout, as Megatron-LM runs it (1F1B pipeline,
// interleaved, zero-bubble or DualPipe; TP with sequence parallelism; DP gradient reduction
// overlapped with the last backward; ZeRO stages; MoE all-to-all with node-limited routing,
// parallel folding and overlap; context-parallel ring attention). Every term is
// a small function in step.cc with its source; docs/plan.md derives each one.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "plan/flops.h"
#include "plan/hardware.h"
#include "plan/memory.h"
#include "plan/model.h"
#include "plan/network.h"

namespace plumb::plan {

// Seconds of one step by where they go; communication is what compute waits for (exposed).
struct Breakdown {
  double compute = 0;    // forward, backward and recomputation of every micro-batch
  double tp = 0;         // tensor-parallel allgather / reduce-scatter
  double cp = 0;         // context-parallel KV exchange beyond what attention hides
  double ep = 0;         // MoE dispatch and combine all-to-all
  double pp = 0;         // pipeline send/receive between stages
  double bubble = 0;     // pipeline fill and drain: (p−1)/(v·m) of the pipelined time
  double dp = 0;         // gradient reduction and ZeRO gathers not hidden behind compute
  double optimizer = 0;  // the optimizer step, bound by HBM bandwidth

  double communication() const { return tp + cp + ep + pp + dp; }
  double total() const { return compute + communication() + bubble + optimizer; }
};

struct MemoryUse {
  double weights = 0;  // bytes per device
  double grads = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;   // communication buffers
  double reserved = 0;  // runtime context and workspaces, never available to the model
  double capacity = 0;
  // The pipeline stage these bytes are of: the fullest (plan/memory.h, largest_stage).
  int stage = 0;
  int stage_layers = 0;
  bool stage_embedding = false;  // it holds the input embedding
  bool stage_output = false;     // it holds the output layer (and MTP modules)
  double total() const { return weights + grads + optimizer + activations + buffers; }
  bool fits() const { return total() + reserved <= capacity; }
};

struct Prediction {
  Layout layout;
  std::string precision;
  double step_time_s = 0;
  Breakdown breakdown;
  double tokens_per_s = 0;
  double tflops_per_device = 0;           // model FLOPs (no recomputation) per second per device
  double hardware_tflops_per_device = 0;  // with recomputation
  double mfu = 0;
  double hfu = 0;
  double comm_wait_share = 0;  // exposed communication / step time
  MemoryUse memory;
};

// (exposed communication + bubble + optimizer) / step: the share of a step that is not compute,
// what a prediction band's spread grows with (plan/band.h).
double overhead_share(const Prediction& p);

// The fraction of a chip's best-shape GEMM rate (its catalog `efficiency`, measured as MAMF) that
// a training framework's GEMMs reach with their own shapes, and with the rest of the step around
// them, times how a GEMM slows as its per-device width h/tp shrinks: w/(w + w½), w½ = 128. Both
// constants were fitted once, for all chips, over both validation sets on A100 (docs/plan.md,
// "Validation"); h/tp = 1536 gives 0.84 × 0.923 × 0.869 = 0.67 of peak.
inline constexpr double kFrameworkGemmShare = 0.84;
inline constexpr double kGemmHalfWidth = 128;
inline double gemm_width_factor(double width) { return width / (width + kGemmHalfWidth); }
// FP8 (and FP4) GEMMs of a training step run at most this many times the bf16 rate, not the
// peaks' 2×: per-tensor or block scaling and the GEMMs' own shapes take part of the gain (NVIDIA
// reports 1.3–1.6× end-to-end over bf16 for FP8 recipes in NeMo, "Faster Training Throughput in
// FP8 Precision with NVIDIA NeMo", 2025). The operands' quantisation is priced on its own
// (step.cc, quantise_seconds) and the TP all-gathers carry FP8 (step.cc, layer_tp_seconds), so
// this is the GEMMs' rate alone. Refitted (was 1.5, fitted before the casts were priced, which
// counted them twice) on ALL twelve FP8 BUILD rows: the seven of moe-ascend (DeepSeek-V3 on H800;
// Megatron-Bridge 25.09 DeepSeek-V3, Qwen3-235B-A22B, Qwen3-30B-A3B on H100 and B200) and the
// five build FP8 rows of moe-ascend-more (Megatron-Bridge 26.04.01 DeepSeek-V3 and Qwen3-30B-A3B
// on B200; 25.11 Llama 3 8B on B200, Llama 3.1 405B on 1024 H100; 26.04.01 Llama 3 70B on 64
// H100) — both classes, dense and MoE, so one class does not set it. Their mean |error| is flat
// from 1.6 to 1.8 (10.5% ± 0.05) with its least at 1.65; moe-ascend keeps its 12% target there
// (docs/plan.md, "Validation", FP8). No check row was looked at.
inline constexpr double kLowPrecisionGemmSpeedup = 1.65;
// For a chip whose catalog has no measured efficiency: the median of those that do (0.78).
inline constexpr double kAssumedMamfEfficiency = 0.78;

// Launch and tail of one element-wise kernel (norms, bias, dropout, residual, activation,
// softmax, rotary): ~4 µs on current GPUs (NVIDIA Nsight traces of Megatron-LM GPT layers).
inline constexpr double kKernelOverheadS = 4e-6;

// The dimensions whose communication a measured step can correct, in Breakdown's order.
enum class CommDim { kTp, kCp, kEp, kPp, kDp };
inline constexpr size_t kCommDims = 5;

// What `plumb plan --calibrate STEP_RECORD` corrects (plan/step_fit.h; docs/plan.md section 13):
// multipliers on the rates the model derives from the catalog, 1 as documented, and the cost of
// one small kernel. A GEMM multiplier scales the fraction of peak the GEMMs of its class reach;
// a communication multiplier the bandwidth a dimension's collectives reach (its time divides by
// it); `overlap` the share of what the modelled overlaps hide that they do hide.
struct Efficiencies {
  double gemm = 1;         // dense GEMMs: projections, dense FFN, shared experts, logits
  double expert_gemm = 1;  // the routed experts' grouped GEMMs
  double attention = 1;    // attention's score FLOPs (Q·Kᵀ, scores·V)
  double kernel_overhead_s = kKernelOverheadS;
  std::array<double, kCommDims> comm = {1, 1, 1, 1, 1};  // by CommDim
  double overlap = 1;
  double comm_of(CommDim d) const { return comm[static_cast<size_t>(d)]; }
  bool operator==(const Efficiencies&) const = default;
};

struct ComputeModel {
  double gemm_efficiency = 0;  // fraction of peak the step's GEMMs reach
  bool efficiency_assumed = false;  // the catalog gave none; kAssumedMamfEfficiency was used
  bool overlap_dp = true;      // gradient reduction overlaps the last micro-batch's backward
  Efficiencies tuned;          // 1 everywhere unless calibrated from measured steps
};

ComputeModel compute_model(const HardwareSpec& hw);

// What is wrong with a layout for this model and device count, every problem at once (empty:
// valid). Devices must be tp·cp·pp·dp, at most kMaxDevices; heads and KV heads divisible by tp; layers ≥ pp·vpp;
// global batch a multiple of dp·micro-batch; ep dividing the experts and ep·etp dividing tp·cp·dp
// (MoE parallel folding); the schedule's own needs (interleaved ⇔ vpp > 1; DualPipe an even pp
// and micro-batch count; zero-bubble pp ≥ 2).
std::vector<std::string> layout_problems(const ModelSpec& m, const Layout& p, int64_t devices);
// Tokens per step when none is given: Llama 3 405B's batch after its ramp-up, 16M tokens
// ("The Llama 3 Herd of Models", Section 3.4.1: 4M, 8M, then 16M tokens per batch).
inline constexpr double kDefaultBatchTokens = 16.0 * 1024 * 1024;

// The global batch nearest to `batch_tokens` tokens per step that the layout can run: a multiple
// of dp × micro-batch (× pp for the interleaved schedule, × 2 for DualPipe), at least one.
int64_t global_batch_near(const Layout& p, const ModelSpec& m, double batch_tokens);

// tp × cp × pp × dp above kMaxDevices (computed so that it cannot overflow), and the message
// saying so: "tp 8 × cp 1 × pp 1 × dp 16777216 = 1.342e+08 devices, more than the 16777216 plumb
// plans for".
bool beyond_max_devices(const Layout& p);
std::string too_many_devices(const Layout& p);

// The same checks; messages are formatted only into a non-null `problems` (search calls it with
// none, millions of times).
bool layout_valid(const ModelSpec& m, const Layout& p, int64_t devices,
                  std::vector<std::string>* problems = nullptr);

// One micro-batch on the pacing stage: all of it (T = F + B with what communication it exposes),
// its backward pass B and, of that, the weight-gradient GEMMs W.
struct StagePass {
  double total = 0;
  double backward = 0;
  double weight_grad = 0;
};
// Pipeline fill and drain of the layout's schedule (DeepSeek-V3 report, Table 2, with F + B = T):
// 1F1B (p−1)·T; interleaved (p−1)·T/v; ZB-H1 (p−1)·(T − 2W); DualPipe (p/2 − 1)·(T + B − 3W).
double pipeline_bubble(const Layout& p, const StagePass& pass);

// Copies of one token's hidden state a device sends over the scale-out network per dispatch when
// its EP group spans `nodes` nodes: top_k·(n−1)/n; with node-limited routing (max_nodes > 0) at
// most one per target node, min(max_nodes, top_k)·(n−1)/n (DeepSeek-V3 Section 3.2.2); sent
// once per target node (the DeepEP dispatcher), at most one per node of the group as well,
// min(n, max_nodes, top_k)·(n−1)/n.
double remote_copies(int top_k, int max_nodes, int nodes, bool once_per_node = false);

// Predicts layouts of one model on one machine. What depends on the model alone (FLOPs per layer,
// MoE layers) is computed once, so a search pays only for the layout (bench/plan_search).
class Predictor {
 public:
  // Throws plumb::Error when the hardware has no peak for `precision`.
  Predictor(const ModelSpec& m, const HardwareSpec& hw, const Network& net, std::string precision,
            ComputeModel compute);
  // Assumes layout_problems(model, p, devices) is empty.
  Prediction operator()(const Layout& p) const;
  // Memory per device alone: cheaper, for dropping layouts that cannot fit.
  MemoryUse memory(const Layout& p) const;

  const ModelSpec& model() const { return m_; }
  const HardwareSpec& hardware() const { return hw_; }
  const Network& network() const { return net_; }
  const ComputeModel& compute() const { return compute_; }
  const std::string& precision() const { return precision_; }

 private:
  const ModelSpec& m_;
  const HardwareSpec& hw_;
  const Network& net_;
  std::string precision_;
  ComputeModel compute_;
  double peak_ = 0;                  // FLOP/s the GEMMs run at (kLowPrecisionGemmSpeedup applied)
  double mfu_peak_ = 0;              // FLOP/s: the catalog's peak for the precision
  double peak_bf16_ = 0;             // FLOP/s of attention scores and logits (bf16 under fp8)
  double layer_forward_flops_ = 0;   // per token, averaged over layers
  double model_flops_ = 0;           // per token
  int moe_layers_ = 0;
  double routed_flops_ = 0;          // per token, the routed experts' share of layer_forward_flops_
  QuantisedValues quantised_;        // per token, what fp8/fp4 casts for an average layer's GEMMs
  bool fp16_ = false;                // the run is fp16 (Megatron's gradient buffer then fp16)
  std::array<double, 4> hardware_flops_{};  // per token, by Recompute
};

}  // namespace plumb::plan
