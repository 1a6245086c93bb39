#include "plan/step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/error.h"
#include "common/strings.h"

#include "plan/flops.h"

namespace plumb::plan {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

// Bytes of HBM traffic per byte of activation a layer keeps: each kept tensor is written by one
// operation and read by the next (docs/plan.md, "Memory-bound operations").
constexpr double kTrafficPerActivationByte = 2;
// Element-wise kernels of one layer's forward pass (norms, bias, dropout, residual, activation,
// softmax, rotary) and what each costs beyond its traffic: launch and tail, ~4 µs on current
// GPUs (NVIDIA Nsight traces of Megatron-LM GPT layers show 20–30 such kernels per layer).
constexpr double kKernelsPerLayer = 24;
constexpr double kKernelOverheadS = 4e-6;
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

struct Ctx {
  const ModelSpec& m;
  const HardwareSpec& hw;
  const Network& net;
  const Layout& p;
  double peak = 0;  // FLOP/s
  double peak_bf16 = 0;  // FLOP/s of what stays in bf16 under fp8/fp4: attention scores, logits
  double gemm_efficiency = 0;
  double layer_flops = 0;  // forward FLOPs per token of an average layer
  int moe_layers = 0;
};

double avg_layer_forward_flops(const ModelSpec& m) {
  double total = 0;
  for (int layer = 0; layer < m.layers; ++layer) total += layer_forward_flops(m, layer);
  return total / m.layers;
}

int moe_layer_count(const ModelSpec& m) { return m.moe ? m.layers - m.moe->first_dense_layers : 0; }

double tokens_per_micro_batch(const Ctx& c) { return d(c.p.micro_batch) * d(c.m.seq_len) / c.p.cp; }

// Forward time of one layer for one micro-batch on one device, without communication: GEMMs at
// peak × efficiency, element-wise traffic at HBM bandwidth, a fixed cost per kernel.
struct LayerCompute {
  double gemm = 0;
  double scores = 0;  // attention's quadratic FLOPs (Q·Kᵀ, scores·V)
  double memory = 0;
  double kernels = 0;
  double total() const { return gemm + scores + memory + kernels; }
};

LayerCompute layer_forward(const Ctx& c) {
  const double tokens = tokens_per_micro_batch(c);
  const double score_flops = attention_score_flops(c.m) * tokens / c.p.tp;
  const double flops = c.layer_flops * tokens / c.p.tp;
  Layout no_recompute = c.p;
  no_recompute.recompute = Recompute::kNone;
  LayerCompute t;
  const double efficiency = c.gemm_efficiency * gemm_width_factor(d(c.m.hidden) / c.p.tp);
  t.gemm = (flops - score_flops) / (c.peak * efficiency);
  t.scores = score_flops / (c.peak_bf16 * c.gemm_efficiency);
  t.memory = kTrafficPerActivationByte * layer_activation_bytes(c.m, no_recompute) /
             (c.hw.hbm_tbps * 1e12 * kHbmEfficiency);
  t.kernels = kKernelsPerLayer * kKernelOverheadS;
  return t;
}

// Forward + backward (twice the forward) + recomputation: full repeats the forward, selective
// repeats attention's score part (Korthikanti Section 5).
double layer_compute_seconds(const Ctx& c, const LayerCompute& f) {
  double recompute = 0;
  if (c.p.recompute == Recompute::kFull) recompute = f.total();
  if (c.p.recompute == Recompute::kSelective) recompute = f.scores;
  return 3 * f.total() + recompute;
}

// The forward passes a layer runs per micro-batch: 1, or 2 under full recomputation.
int forward_passes(const Layout& p) { return p.recompute == Recompute::kFull ? 2 : 1; }

GroupShape tp_group(const Ctx& c) { return group_shape(c.p.tp, 1, c.net.cluster()); }
GroupShape cp_group(const Ctx& c) { return group_shape(c.p.cp, c.p.tp, c.net.cluster()); }
GroupShape ep_group(const Ctx& c) { return group_shape(c.p.ep, c.p.tp * c.p.cp, c.net.cluster()); }
GroupShape dp_group(const Ctx& c) {
  return group_shape(c.p.dp * c.p.cp, c.p.tp, c.net.cluster());
}

// Sequence parallelism: an allgather before and a reduce-scatter after attention and the MLP in
// the forward pass, the mirror in the backward (Korthikanti Section 4.2.2): 2 of each per layer
// and forward pass count, on the whole micro-batch's activations.
double layer_tp_seconds(const Ctx& c) {
  if (c.p.tp <= 1) return 0;
  const double bytes = tokens_per_micro_batch(c) * d(c.m.hidden) * kActivationBytes;
  const GroupShape g = tp_group(c);
  const double pair = c.net.time(Collective::kAllGather, bytes, g).seconds +
                      c.net.time(Collective::kReduceScatter, bytes, g).seconds;
  return 2 * pair * (1 + forward_passes(c.p));
}

// MoE dispatch and combine in each forward and backward pass: each device sends its tokens'
// top_k copies of h values (Lepikhin et al. 2021, GShard; Megatron-Core token dispatcher).
double layer_ep_seconds(const Ctx& c, int moe_layers) {
  if (!c.m.moe || c.p.ep <= 1 || moe_layers == 0) return 0;
  const double bytes = tokens_per_micro_batch(c) / c.p.tp * c.m.moe->top_k * d(c.m.hidden) *
                       kActivationBytes;
  const double a2a = c.net.time(Collective::kAllToAll, bytes, ep_group(c)).seconds;
  return 2 * a2a * (1 + forward_passes(c.p)) * moe_layers / c.m.layers;
}

// Ring attention (Liu et al. 2023; Megatron-Core context parallelism): K and V chunks go round
// the cp ranks while attention computes; the backward sends dK, dV too. Only what attention's
// own time does not hide is exposed. K and V as attention uses them: kv_heads·head_dim each, and
// for MLA the up-projected heads·(qk_nope + qk_rope) and heads·v_head_dim (Megatron-Core's MLA
// hands those, not the latent, to the context-parallel core attention).
double layer_cp_seconds(const Ctx& c, const LayerCompute& f) {
  if (c.p.cp <= 1) return 0;
  const double kv = tokens_per_micro_batch(c) * d(k_width(c.m) + v_width(c.m)) / c.p.tp *
                    kActivationBytes;
  const double ring = c.net.time(Collective::kAllGather, kv * c.p.cp, cp_group(c)).seconds;
  const double forward = std::max(0.0, ring - f.scores);
  const double backward = std::max(0.0, 2 * ring - 2 * f.scores);
  return forward * forward_passes(c.p) + backward;
}

// The output layer and the loss on the last stage: 2·h·V FLOPs per token forward, twice that
// backward; the softmax reads and writes the V logits in fp32 about three times. In bf16 under
// fp8 (DeepSeek-V3 Section 3.3.1 keeps the output head in its original precision).
double logits_seconds(const Ctx& c) {
  const double tokens = tokens_per_micro_batch(c);
  const double flops = 3 * 2 * d(c.m.hidden) * d(c.m.vocab) * tokens / c.p.tp;
  const double traffic = 3 * 4 * d(c.m.vocab) * tokens / c.p.tp;
  return flops / (c.peak_bf16 * c.gemm_efficiency) +
         traffic / (c.hw.hbm_tbps * 1e12 * kHbmEfficiency);
}

// One activation (and one gradient) per virtual stage boundary and micro-batch, scattered over
// TP (Narayanan et al. Section 4.1, scatter/gather optimisation).
double pp_seconds_per_micro_batch(const Ctx& c) {
  if (c.p.pp <= 1) return 0;
  const double bytes = tokens_per_micro_batch(c) * d(c.m.hidden) * kActivationBytes / c.p.tp;
  const GroupShape g = group_shape(2, c.p.tp * c.p.cp * c.p.dp, c.net.cluster());
  return 2 * c.p.vpp * c.net.time(Collective::kSendRecv, bytes, g).seconds;
}

// Layers of the fullest pipeline stage: ceil(layers / pp), however its vpp chunks split them
// (Megatron-LM places uneven layers with --decoder-first/last-pipeline-num-layers; 126 layers on
// pp 16 are priced as the 8 of the slowest stage, whatever vpp).
int layers_per_stage(const Layout& p, const ModelSpec& m) { return (m.layers + p.pp - 1) / p.pp; }

struct MicroBatch {
  double compute = 0, tp = 0, cp = 0, ep = 0, pp = 0, backward = 0, forward = 0;
  double total() const { return compute + tp + cp + ep + pp; }
};

MicroBatch micro_batch_seconds(const Ctx& c) {
  const LayerCompute f = layer_forward(c);
  const int layers = layers_per_stage(c.p, c.m);
  MicroBatch mb;
  mb.compute = layers * layer_compute_seconds(c, f) + logits_seconds(c);
  mb.tp = layers * layer_tp_seconds(c);
  mb.cp = layers * layer_cp_seconds(c, f);
  mb.ep = layers * layer_ep_seconds(c, c.moe_layers);
  mb.pp = pp_seconds_per_micro_batch(c);
  mb.forward = layers * f.total();
  mb.backward = layers * 2 * f.total();
  return mb;
}

// Gradient reduction over the data-parallel (and context-parallel) replicas: an allreduce, or
// with ZeRO a reduce-scatter then an allgather of the updated bf16 weights (Rajbhandari et al.
// 2020, Section 7: the same volume). Overlapped with the last micro-batch's backward and the
// first one's forward (Megatron --overlap-grad-reduce / --overlap-param-gather, DeepSpeed
// overlap_comm); ZeRO-3 gathers weights for each micro-batch's forward and backward.
double dp_seconds(const Ctx& c, const MicroBatch& mb, bool overlap) {
  const int replicas = c.p.dp * c.p.cp;
  if (replicas <= 1) return 0;
  const double params = params_per_device(c.m, c.p);
  const double bytes = params * 2;
  const GroupShape g = dp_group(c);
  double reduce = 0, gather = 0;
  if (c.p.zero == 0) {
    reduce = c.net.time(Collective::kAllReduce, bytes, g).seconds;
  } else {
    reduce = c.net.time(Collective::kReduceScatter, bytes, g).seconds;
    gather = c.net.time(Collective::kAllGather, bytes, g).seconds;
  }
  if (c.p.zero >= 3) {
    const double per_micro_batch = 2 * gather + reduce;
    const double exposed = std::max(0.0, per_micro_batch - mb.compute);
    return exposed * d(c.p.micro_batches());
  }
  if (!overlap) return reduce + gather;
  return std::max(0.0, reduce - mb.backward) + std::max(0.0, gather - mb.forward);
}

double optimizer_seconds(const Ctx& c) {
  double params = params_per_device(c.m, c.p);
  if (c.p.zero >= 1) params /= static_cast<double>(c.p.dp) * c.p.cp;
  return params * kAdamBytesPerParam / (c.hw.hbm_tbps * 1e12 * kHbmEfficiency);
}

int communicators(const Layout& p) {
  int n = 0;
  for (int size : {p.tp, p.cp, p.ep, p.dp, p.pp}) n += size > 1 ? 1 : 0;
  return n;
}

MemoryUse memory_use(const Ctx& c) {
  const ModelStates s = model_states(c.m, c.p);
  MemoryUse u;
  u.weights = s.weights;
  u.grads = s.gradients;
  u.optimizer = s.optimizer;
  u.activations = activation_bytes(c.m, c.p);
  // The sequence-parallel allgather output of one layer's input and NCCL's own buffers.
  const double gathered = tokens_per_micro_batch(c) * d(c.m.hidden) * kActivationBytes;
  u.buffers = (c.p.tp > 1 ? 2 * gathered : 0) + communicators(c.p) * kNcclBytesPerCommunicator;
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

bool layout_valid(const ModelSpec& m, const Layout& p, int64_t devices,
                  std::vector<std::string>* problems) {
  bool ok = true;
  // Records a problem; the message is formatted only when someone reads it.
  auto fail = [&](auto&& message) {
    ok = false;
    if (problems) problems->push_back(message());
  };
  if (beyond_max_devices(p)) {
    fail([&] { return too_many_devices(p); });
  } else if (p.devices() != devices) {
    fail([&] {
      return fmt::format("tp {} × cp {} × pp {} × dp {} = {} devices, not {}", p.tp, p.cp, p.pp,
                         p.dp, p.devices(), devices);
    });
  }
  if (m.heads % p.tp != 0) {
    fail([&] { return fmt::format("{} attention heads do not divide by tp {}", m.heads, p.tp); });
  } else if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    fail([&] { return fmt::format("{} KV heads do not divide by tp {}", m.kv_heads, p.tp); });
  }
  if (m.layers < int64_t{p.pp} * p.vpp) {
    fail([&] {
      return fmt::format("{} layers cannot fill pp {} × vpp {} stages", m.layers, p.pp, p.vpp);
    });
  }
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0) {
    fail([&] {
      return fmt::format("sequence {} does not split into 2 × cp {} chunks", m.seq_len, p.cp);
    });
  }
  const int64_t per_step = static_cast<int64_t>(p.dp) * p.micro_batch;
  if (p.global_batch % per_step != 0) {
    fail([&] {
      return fmt::format("global batch {} is not a multiple of dp {} × micro-batch {}",
                         p.global_batch, p.dp, p.micro_batch);
    });
  } else if (p.vpp > 1 && p.micro_batches() % p.pp != 0) {
    fail([&] {
      return fmt::format("the interleaved schedule needs micro-batches ({}) a multiple of pp {}",
                         p.micro_batches(), p.pp);
    });
  }
  if (p.ep > 1 && !m.moe) fail([&] { return fmt::format("ep {} needs a MoE model", p.ep); });
  if (p.ep > 1 && m.moe && (p.dp % p.ep != 0 || m.moe->experts % p.ep != 0)) {
    fail([&] {
      return fmt::format("ep {} must divide dp {} and the {} experts", p.ep, p.dp, m.moe->experts);
    });
  }
  return ok;
}

int64_t global_batch_near(const Layout& p, const ModelSpec& m, double batch_tokens) {
  const int64_t unit = static_cast<int64_t>(p.dp) * p.micro_batch * (p.vpp > 1 ? p.pp : 1);
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
  layer_forward_flops_ = avg_layer_forward_flops(m);
  model_flops_ = model_flops_per_token(m);
  moe_layers_ = moe_layer_count(m);
}

MemoryUse Predictor::memory(const Layout& p) const {
  return memory_use(Ctx{m_, hw_, net_, p, peak_, peak_bf16_, compute_.gemm_efficiency,
                        layer_forward_flops_, moe_layers_});
}

Prediction Predictor::operator()(const Layout& p) const {
  const Ctx c{m_, hw_, net_, p, peak_, peak_bf16_, compute_.gemm_efficiency, layer_forward_flops_,
              moe_layers_};
  const MicroBatch mb = micro_batch_seconds(c);
  const double micro_batches = d(p.micro_batches());
  const double fill = (p.pp - 1.0) / p.vpp;
  Prediction r;
  r.layout = p;
  r.precision = precision_;
  Breakdown& b = r.breakdown;
  b.compute = micro_batches * mb.compute;
  b.tp = micro_batches * mb.tp;
  b.cp = micro_batches * mb.cp;
  b.ep = micro_batches * mb.ep;
  b.pp = micro_batches * mb.pp;
  b.bubble = fill * mb.total();
  b.dp = dp_seconds(c, mb, compute_.overlap_dp);
  b.optimizer = optimizer_seconds(c);
  r.step_time_s = b.total();
  const double tokens = d(p.global_batch) * d(m_.seq_len);
  const double devices = d(p.devices());
  r.tokens_per_s = tokens / r.step_time_s;
  r.tflops_per_device = model_flops_ * r.tokens_per_s / devices / 1e12;
  r.hardware_tflops_per_device =
      hardware_flops_per_token(m_, p.recompute) * r.tokens_per_s / devices / 1e12;
  r.mfu = r.tflops_per_device * 1e12 / peak_;
  r.hfu = r.hardware_tflops_per_device * 1e12 / peak_;
  r.comm_wait_share = b.communication() / r.step_time_s;
  r.memory = memory_use(c);
  return r;
}

}  // namespace plumb::plan
