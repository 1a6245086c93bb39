// The step predictor's relations, each checked against its formula: the pipeline bubble of 1F1B
// and the interleaved schedule, MFU and HFU from the FLOP counts, the breakdown adding up, the
// layout checks' messages and the global batch a layout can run.
#include "plan/step.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "plan/flops.h"
#include "plan/models.h"

namespace plumb::plan {
namespace {

HardwareSpec a100() {
  HardwareSpec hw;
  hw.name = "A100";
  hw.peak_tflops = {{"bf16", 312}};
  hw.hbm_gb = 80;
  hw.hbm_tbps = 2.039;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 300;
  hw.scaleout_gbps_per_device = 25;
  hw.efficiency = 0.869;
  return hw;
}

struct Fixture {
  ModelSpec m = test_models::gpt3();
  HardwareSpec hw = a100();
  Network net{default_cluster(hw), Algorithm::kAuto};
  Predictor predict{m, hw, net, "bf16", compute_model(hw)};
};

Layout gpt3_layout(int pp, int vpp, int64_t global_batch) {
  Layout p;
  p.tp = 8;
  p.pp = pp;
  p.vpp = vpp;
  p.dp = 16;
  p.global_batch = global_batch;
  p.recompute = Recompute::kFull;
  return p;
}

// Narayanan et al. 2021, Section 2.2: the bubble is (p−1)/m of the pipelined time with 1F1B and
// (p−1)/(v·m) with v interleaved stages. p = 8, m = 1536/16 = 96: 7/96; v = 4: 7/384.
TEST(Step, PipelineBubbleAsNarayanan) {
  Fixture f;
  for (int vpp : {1, 4}) {
    const Prediction r = f.predict(gpt3_layout(8, vpp, 1536));
    const Breakdown& b = r.breakdown;
    const double pipelined = b.compute + b.tp + b.cp + b.ep + b.pp;
    EXPECT_NEAR(b.bubble / pipelined, 7.0 / (vpp * 96), 1e-12) << "vpp " << vpp;
  }
}

// MFU counts model FLOPs (3 × forward, no recomputation) per second per device against peak;
// HFU adds full recomputation's second forward of the layers (Korthikanti Section 6).
TEST(Step, MfuAndHfuFromTheFlopCounts) {
  Fixture f;
  const Layout p = gpt3_layout(8, 1, 1536);
  const Prediction r = f.predict(p);
  const double tokens = 1536.0 * 2048;
  EXPECT_NEAR(r.tokens_per_s, tokens / r.step_time_s, 1e-6);
  const double devices = 8 * 8 * 16;
  EXPECT_NEAR(r.mfu, model_flops_per_token(f.m) * tokens / r.step_time_s / devices / 312e12, 1e-12);
  EXPECT_NEAR(r.hfu, full_recompute_flops_per_token(f.m) * tokens / r.step_time_s / devices / 312e12,
              1e-12);
  EXPECT_NEAR(r.hfu / r.mfu, full_recompute_flops_per_token(f.m) / model_flops_per_token(f.m), 1e-12);
  EXPECT_DOUBLE_EQ(r.step_time_s, r.breakdown.total());
  EXPECT_NEAR(r.comm_wait_share, r.breakdown.communication() / r.step_time_s, 1e-12);
}

// Compute is GEMM-bound for GPT-3: within 10% above the pure GEMM time at peak × efficiency
// (the rest is element-wise traffic and per-kernel cost), never below it.
TEST(Step, ComputeIsTheGemmTimePlusMemoryBoundWork) {
  Fixture f;
  Layout p;
  p.global_batch = 1;
  const Prediction r = f.predict(p);
  const double gemm = model_flops_per_token(f.m) * 2048 / (312e12 * 0.869 * kFrameworkGemmShare);
  EXPECT_GT(r.breakdown.compute, gemm);
  EXPECT_LT(r.breakdown.compute, 1.1 * gemm);
}

// Selective recomputation adds only attention's score FLOPs (4·s·h per token and layer); full
// adds the whole forward of the layers.
TEST(Step, RecomputationCostsWhatItRepeats) {
  Fixture f;
  Layout p;
  p.global_batch = 1;
  const double none = f.predict(p).breakdown.compute;
  p.recompute = Recompute::kSelective;
  const double selective = f.predict(p).breakdown.compute;
  p.recompute = Recompute::kFull;
  const double full = f.predict(p).breakdown.compute;
  const double eff = 312e12 * 0.869 * kFrameworkGemmShare;
  EXPECT_NEAR(selective - none, 4.0 * 2048 * 12288 * 2048 * 96 / eff, 1e-9);
  EXPECT_GT(full - none, 0.3 * none);  // the layers' forward is about a third of fwd + bwd
  EXPECT_LT(full - none, 0.34 * none);
}

TEST(Step, TensorParallelCommunicationIsExposedAndDataParallelHides) {
  Fixture f;
  const Prediction r = f.predict(gpt3_layout(8, 1, 1536));
  EXPECT_GT(r.breakdown.tp, 0);
  EXPECT_EQ(r.breakdown.ep, 0);
  EXPECT_EQ(r.breakdown.cp, 0);
  ComputeModel no_overlap = compute_model(f.hw);
  no_overlap.overlap_dp = false;
  const Predictor serial(f.m, f.hw, f.net, "bf16", no_overlap);
  EXPECT_GT(serial(gpt3_layout(8, 1, 1536)).breakdown.dp, r.breakdown.dp);
}

TEST(Step, MemoryFitsAgainstCapacityLessTheReserve) {
  Fixture f;
  Layout one;  // all of GPT-3 on one device: 175B × 16 bytes
  one.global_batch = 1;
  const MemoryUse u = f.predict.memory(one);
  EXPECT_FALSE(u.fits());
  EXPECT_NEAR(u.weights + u.grads + u.optimizer, 16.0 * parameter_count(f.m), 1.0);
  EXPECT_DOUBLE_EQ(u.capacity, 80e9);
  EXPECT_TRUE(f.predict.memory(gpt3_layout(8, 1, 1536)).fits());
}

TEST(Step, LayoutProblemsNameEveryMistakeAtOnce) {
  const ModelSpec m = test_models::gpt3();
  Layout p;
  p.tp = 5;
  p.pp = 128;
  p.dp = 3;
  p.micro_batch = 2;
  p.global_batch = 1000;
  p.ep = 2;
  const std::vector<std::string> problems = layout_problems(m, p, 1024);
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(problems[0], "tp 5 × cp 1 × pp 128 × dp 3 = 1920 devices, not 1024");
  EXPECT_EQ(problems[1], "96 attention heads do not divide by tp 5");
  EXPECT_EQ(problems[2], "96 layers cannot fill pp 128 × vpp 1 stages");
  EXPECT_EQ(problems[3], "global batch 1000 is not a multiple of dp 3 × micro-batch 2");
  EXPECT_EQ(problems[4], "ep 2 needs a MoE model");
  EXPECT_TRUE(layout_problems(m, gpt3_layout(8, 1, 1536), 1024).empty());
}

// 16M tokens of 2048-token sequences is 8192 sequences: with dp 16 × mbs 2 a multiple of 32;
// interleaving also needs a multiple of pp.
// Issue 10: 2^31 devices made dp -2147483648. Sizes whose product passes kMaxDevices are refused
// with the product computed without overflow; pp × vpp is formed in 64 bits.
TEST(Step, DevicesBeyondTheMaximumAreRefusedWithoutOverflow) {
  const ModelSpec m = test_models::gpt3();
  Layout p;
  p.tp = 8;
  p.dp = 1 << 24;
  p.global_batch = int64_t{1} << 24;
  EXPECT_TRUE(beyond_max_devices(p));
  EXPECT_EQ(layout_problems(m, p, 1 << 24).front(),
            "tp 8 × cp 1 × pp 1 × dp 16777216 = 1.342e+08 devices, more than the 16777216 plumb "
            "plans for");
  p.tp = 1 << 24;
  p.pp = 1 << 24;
  p.cp = 1 << 24;
  EXPECT_EQ(too_many_devices(p),
            "tp 16777216 × cp 16777216 × pp 16777216 × dp 16777216 = 7.923e+28 devices, more than "
            "the 16777216 plumb plans for");
  Layout deep;
  deep.pp = 1 << 16;
  deep.vpp = 1 << 16;  // pp × vpp = 2^32: overflowed an int and passed the layers check
  deep.dp = 1;
  const std::vector<std::string> problems = layout_problems(m, deep, 1 << 16);
  EXPECT_NE(std::find(problems.begin(), problems.end(),
                      "96 layers cannot fill pp 65536 × vpp 65536 stages"),
            problems.end());
}

TEST(Step, GlobalBatchNearTheTokensAskedFor) {
  const ModelSpec m = test_models::gpt3();
  Layout p = gpt3_layout(8, 1, 0);
  p.micro_batch = 2;
  EXPECT_EQ(global_batch_near(p, m, 16.0 * 1024 * 1024), 8192);
  EXPECT_EQ(global_batch_near(p, m, 100.0 * 2048), 96);   // 100 → nearest multiple of 32
  EXPECT_EQ(global_batch_near(p, m, 1.0), 32);             // at least one per replica
  p.vpp = 2;
  EXPECT_EQ(global_batch_near(p, m, 100.0 * 2048), 256);  // a multiple of 32 × 8, at least one
}

// FP8 runs the GEMMs at the fp8 peak but attention's scores and the output layer at the bf16
// one (DeepSeek-V3 Section 3.3.1). Against a device whose bf16 peak is its fp8 peak (624), GPT-3
// on one device (one micro-batch of T = 2048 tokens, no recomputation) takes longer by what those
// FLOPs lose at half the rate: scores 3 passes × 96 layers × 4·2048·12288 and logits
// 3·2·12288·50257, per token × 2048 tokens, / (624e12 × 0.869 × 0.84).
TEST(Step, Fp8KeepsScoresAndLogitsAtTheBf16Peak) {
  // bf16 416 × kLowPrecisionGemmSpeedup (1.65) = 686 ≥ 624: the GEMMs run at the fp8 peak on both
  // chips, only the scores and the logits differ.
  HardwareSpec mixed = a100();
  mixed.peak_tflops = {{"bf16", 416}, {"fp8", 624}};
  HardwareSpec flat = mixed;
  flat.peak_tflops = {{"bf16", 624}, {"fp8", 624}};
  const ModelSpec m = test_models::gpt3();
  const Network net{default_cluster(mixed), Algorithm::kAuto};
  Layout p;
  p.global_batch = 1;
  const double slow = Predictor(m, mixed, net, "fp8", compute_model(mixed))(p).breakdown.compute;
  const double fast = Predictor(m, flat, net, "fp8", compute_model(flat))(p).breakdown.compute;
  const double bf16_flops = (3.0 * 96 * 4 * 2048 * 12288 + 3.0 * 2 * 12288 * 50257) * 2048;
  const double rate = 0.869 * kFrameworkGemmShare;
  EXPECT_NEAR(slow - fast, bf16_flops / (416e12 * rate) - bf16_flops / (624e12 * rate), 1e-9);
  // A bf16 run on the same chip differs only by FP8's quantisation of the GEMM operands.
  EXPECT_LT(Predictor(m, flat, net, "bf16", compute_model(flat))(p).breakdown.compute, fast);
}

// FP8 current scaling quantises each GEMM operand at 6 B of HBM traffic per value and three
// kernels per operand (step.cc, kQuantiseBytesPerValue, kQuantiseKernelsPerTensor), except that
// the two inputs a dense layer's norms produce (QKV's and FC1's, h wide each) have their amax
// computed by the norm (TE's FUSED_NORM_AMAX_FP8): 2 B and one kernel less each. GPT-3 (h 12288,
// GELU FFN 49152) quantises per token and layer 86,016 values forward and 110,592 backward
// (flops.h, gemm_quantised_values); on one A100-like device whose bf16 and fp8 peaks are equal,
// one micro-batch of 2048 tokens, the fp8 step is longer than the bf16 one by 96 layers × (6 B ×
// 2048 × 196,608 / (2.039 TB/s × 0.9) − 2 B × 2048 × 2 × 12,288 / (2.039 TB/s × 0.9) + (2 passes
// × 4 operands × 3 kernels − 2) × 4 µs) = 96 × (1.3165 ms − 0.0549 ms + 88 µs) = 129.6 ms.
TEST(Step, Fp8QuantisesEveryGemmOperand) {
  HardwareSpec flat = a100();
  flat.peak_tflops = {{"bf16", 624}, {"fp8", 624}};
  const ModelSpec m = test_models::gpt3();
  const Network net{default_cluster(flat), Algorithm::kAuto};
  Layout p;
  p.global_batch = 1;
  p.recompute = Recompute::kNone;
  const double fp8 = Predictor(m, flat, net, "fp8", compute_model(flat))(p).breakdown.compute;
  const double bf16 = Predictor(m, flat, net, "bf16", compute_model(flat))(p).breakdown.compute;
  const double rate = 2.039e12 * 0.9;
  const double per_layer = 6.0 * 2048 * (86016 + 110592) / rate - 2.0 * 2048 * 2 * 12288 / rate +
                           (2 * 4 * 3 - 2) * 4e-6;
  EXPECT_NEAR(fp8 - bf16, 96 * per_layer, 1e-9);
  EXPECT_NEAR(fp8 - bf16, 0.1296, 0.0001);
}

// The norm-fused inputs (step.cc, norm_fused_quantised_tensors): a dense layer 2 (QKV, FC1), a
// MoE layer 1 (QKV; the experts' inputs are quantised after dispatch), an MLA layer none of its
// attention's (a separate TENorm before the down-projections). The saving is the forward's only,
// so under full recomputation GPT-3 as in Fp8QuantisesEveryGemmOperand saves it twice per layer
// and micro-batch (forward and recomputed forward): 2 B × 2048 × 2 × 12,288 / (2.039 TB/s × 0.9)
// + 2 kernels × 4 µs = 54.85 µs + 8 µs = 62.85 µs each time.
TEST(Step, Fp8NormFusedInputsSkipTheAmaxPass) {
  HardwareSpec flat = a100();
  flat.peak_tflops = {{"bf16", 624}, {"fp8", 624}};
  const ModelSpec m = test_models::gpt3();
  const Network net{default_cluster(flat), Algorithm::kAuto};
  Layout p;
  p.global_batch = 1;
  p.recompute = Recompute::kFull;
  const double fp8 = Predictor(m, flat, net, "fp8", compute_model(flat))(p).breakdown.compute;
  const double bf16 = Predictor(m, flat, net, "bf16", compute_model(flat))(p).breakdown.compute;
  const double rate = 2.039e12 * 0.9;
  const double forward = 6.0 * 2048 * 86016 / rate + 4 * 3 * 4e-6;
  const double backward = 6.0 * 2048 * 110592 / rate + 4 * 3 * 4e-6;
  const double saving = 2.0 * 2048 * 2 * 12288 / rate + 2 * 4e-6;
  EXPECT_NEAR(fp8 - bf16, 96 * (2 * (forward - saving) + backward), 1e-9);
  EXPECT_NEAR(saving, 62.85e-6, 0.01e-6);
}

// A MoE layer quantises each local expert's FC1 and FC2 operand apart (Transformer Engine's
// GroupedLinear under current scaling). Qwen3-30B-A3B on one such device, ep 1 (all 128 experts
// local), one micro-batch of 4096 tokens: per layer 6 B × 4096 × (28,672 + 35,840) / (2.039 TB/s
// × 0.9) = 0.864 ms of traffic and 2 passes × (2 + 2 × 128) tensors × 3 kernels × 4 µs = 6.192 ms
// of kernels, less the norm-fused QKV input's amax pass (2 B × 4096 × 2048 / (2.039 TB/s × 0.9)
// = 9.14 µs and one 4 µs kernel), 48 layers: 338.1 ms. At ep 8 (16 local experts) the kernels
// are 0.816 ms a layer.
TEST(Step, Fp8QuantisesEachLocalExpertApart) {
  HardwareSpec flat = a100();
  flat.peak_tflops = {{"bf16", 624}, {"fp8", 624}};
  const ModelSpec m = test_models::qwen3_30b_a3b();
  const Network net{default_cluster(flat), Algorithm::kAuto};
  Layout p;
  p.global_batch = 1;
  p.recompute = Recompute::kNone;
  const double fp8 = Predictor(m, flat, net, "fp8", compute_model(flat))(p).breakdown.compute;
  const double bf16 = Predictor(m, flat, net, "bf16", compute_model(flat))(p).breakdown.compute;
  const double rate = 2.039e12 * 0.9;
  const double traffic = 6.0 * 4096 * (28672 + 35840) / rate - 2.0 * 4096 * 2048 / rate;
  const double kernels = (2 * (2 + 2 * 128) * 3 - 1) * 4e-6;
  EXPECT_NEAR(fp8 - bf16, 48 * (traffic + kernels), 1e-9);
  EXPECT_NEAR(fp8 - bf16, 0.3381, 0.0001);
}

TEST(Step, Fp8GemmsAtMostKLowPrecisionGemmSpeedupTimesBf16) {
  HardwareSpec twice = a100();
  twice.peak_tflops = {{"bf16", 312}, {"fp8", 624}};
  HardwareSpec capped = twice;
  capped.peak_tflops = {{"bf16", 312}, {"fp8", 312 * kLowPrecisionGemmSpeedup}};
  const ModelSpec m = test_models::gpt3();
  const Network net{default_cluster(twice), Algorithm::kAuto};
  Layout p;
  p.global_batch = 1;
  EXPECT_DOUBLE_EQ(Predictor(m, twice, net, "fp8", compute_model(twice))(p).step_time_s,
                   Predictor(m, capped, net, "fp8", compute_model(capped))(p).step_time_s);
  EXPECT_DOUBLE_EQ(kLowPrecisionGemmSpeedup, 1.65);
}

// Under FP8 the sequence-parallel all-gathers carry the FP8 GEMM input (1 B a value; Transformer
// Engine gathers the norm's FP8 output forward and the FP8 output gradient backward) and the
// reduce-scatters the bf16 GEMM output (2 B). GPT-3 at tp 8 inside one 8-device node, a
// micro-batch of 2048 tokens × h 12288: the all-gather moves 25.2 MB instead of 50.3 MB, the
// reduce-scatter 50.3 MB either way, so the exposed TP time scales by
// (AG(25.2 MB) + RS(50.3 MB)) / (AG(50.3 MB) + RS(50.3 MB)).
TEST(Step, Fp8TensorParallelAllGathersCarryOneBytePerValue) {
  HardwareSpec hw = a100();
  hw.peak_tflops = {{"bf16", 312}, {"fp8", 624}};
  const ModelSpec m = test_models::gpt3();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Layout p = gpt3_layout(8, 1, 1536);
  const double bf16 = Predictor(m, hw, net, "bf16", compute_model(hw))(p).breakdown.tp;
  const double fp8 = Predictor(m, hw, net, "fp8", compute_model(hw))(p).breakdown.tp;
  const GroupShape g = group_shape(8, 1, default_cluster(hw));
  const double values = 2048.0 * 12288;
  const double ag1 = net.time(Collective::kAllGather, values, g).seconds;
  const double ag2 = net.time(Collective::kAllGather, 2 * values, g).seconds;
  const double rs2 = net.time(Collective::kReduceScatter, 2 * values, g).seconds;
  ASSERT_GT(bf16, 0);
  EXPECT_NEAR(fp8 / bf16, (ag1 + rs2) / (ag2 + rs2), 1e-12);
  // 0.767: a quarter of the bytes fewer, less than a quarter of the time (the per-step latency
  // terms of the α–β model do not halve).
  EXPECT_NEAR(fp8 / bf16, 0.767, 0.001);
}

TEST(Step, UnknownPrecisionNamesWhatTheHardwareGives) {
  Fixture f;
  try {
    const Predictor p(f.m, f.hw, f.net, "fp8", compute_model(f.hw));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--precision fp8: A100 gives no peak for it; it gives: bf16");
  }
}

// ModelLink's MLA pads the heads before its fused attention (multi_head_latent_attention.py at
// d4feda79): DeepSeek-V3's layer (d_qk 192, d_v 128), 61 layers, one micro-batch of 4096 tokens on
// one A100-like device, no recomputation. Score FLOPs per token and layer 2 · 4096 · 128 · (192 +
// 128) = 335,544,320; × 4096 tokens / (312 TFLOP/s × 0.869 × 0.84) = 6.0347 ms a forward. V padded
// to 192 (BNSD) runs 384/320 = 1.2 of it: 0.2 × 3 passes × 61 layers × 6.0347 ms = 220.87 ms more;
// everything padded to 256 (SBH) 512/320 = 1.6: 662.61 ms. Model FLOPs (and so MFU's numerator)
// do not change.
TEST(Step, PaddedAttentionHeadsCostTheirColumns) {
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  ModelSpec m = test_models::deepseek_v3();
  m.mtp_layers = 0;
  Layout p;
  p.global_batch = 1;
  p.recompute = Recompute::kNone;
  auto run = [&](int64_t pad) {
    m.mla->attention_pad_head_dim = pad;
    return Predictor(m, hw, net, "bf16", compute_model(hw))(p);
  };
  const Prediction plain = run(0);
  const Prediction bnsd = run(192);
  const Prediction sbh = run(256);
  const double scores = 2.0 * 4096 * 128 * 320 * 4096 / (312e12 * 0.869 * kFrameworkGemmShare);
  EXPECT_NEAR(scores, 6.0347e-3, 1e-7);
  EXPECT_NEAR(bnsd.breakdown.compute - plain.breakdown.compute, 0.2 * 3 * 61 * scores, 1e-9);
  EXPECT_NEAR(bnsd.breakdown.compute - plain.breakdown.compute, 0.22087, 0.00001);
  EXPECT_NEAR(sbh.breakdown.compute - plain.breakdown.compute, 0.6 * 3 * 61 * scores, 1e-9);
  EXPECT_NEAR(sbh.breakdown.compute - plain.breakdown.compute, 0.66261, 0.00001);
  EXPECT_DOUBLE_EQ(bnsd.tokens_per_s * bnsd.step_time_s, plain.tokens_per_s * plain.step_time_s);
  EXPECT_LT(bnsd.mfu, plain.mfu);
  // A pad below both widths pads nothing.
  EXPECT_DOUBLE_EQ(run(64).breakdown.compute, plain.breakdown.compute);
}

// DeepSpeed-Ulysses (Jacobs et al. 2023, Section 3.1): Llama 3 8B at 8192 tokens on cp 4 holds
// 2048 tokens per rank; each layer's forward all-to-alls Q (4096 wide), K and V (1024 each, GQA)
// and the output (4096): 2048 · 2 B · 10,240 = 41.9 MB over the 4 ranks of one node, and the
// backward the same, none hidden: 32 layers × 2 passes × the four all-to-alls. Ring attention
// hides its K, V exchange behind attention. Ulysses splits the 32 heads over tp × cp ranks, so cp
// 64 is refused.
TEST(Step, UlyssesAllToAllsQkvAndOutputUnhidden) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.cp = 4;
  p.global_batch = 1;
  p.cp_algo = CpAlgo::kUlysses;
  const GroupShape g = group_shape(4, 1, net.cluster());
  double pass = 0;
  for (double width : {4096.0, 1024.0, 1024.0, 4096.0}) {
    pass += net.time(Collective::kAllToAll, 2048 * width * 2, g).seconds;
  }
  EXPECT_NEAR(2048 * 2 * (4096 + 1024 + 1024 + 4096) / 1e6, 41.9, 0.05);
  const double ulysses = predict(p).breakdown.cp;
  EXPECT_NEAR(ulysses, 32 * 2 * pass, 1e-12);
  EXPECT_GT(ulysses, 0);
  p.cp_algo = CpAlgo::kRing;
  EXPECT_LT(predict(p).breakdown.cp, ulysses);
  Layout wide;
  wide.cp = 64;
  wide.global_batch = 1;
  wide.cp_algo = CpAlgo::kUlysses;
  EXPECT_EQ(layout_problems(m, wide, 64),
            std::vector<std::string>{"32 attention heads do not divide by tp 1 × cp 64 (Ulysses "
                                     "splits the heads over the cp ranks)"});
}

// ZeRO-3 as PyTorch FSDP runs it (step.cc, dp_seconds): one all-gather per unit (transformer
// block) and pass and one reduce-scatter per unit, each micro-batch; the first unit's two gathers
// and the last unit's reduce-scatter (1/L of it) exposed, the rest hidden behind the micro-batch's
// compute, which it slows by 18.9% of the time it runs beside it (Lee et al. 2025). Llama 3 8B
// (32 layers) on dp 16 (two nodes of 8): 8.03e9 / 32 parameters per unit.
TEST(Step, ZeroThreeGathersUnitByUnitAndSlowsTheComputeBeside) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.dp = 16;
  p.zero = 3;
  p.micro_batch = 1;
  p.global_batch = 16;
  const double params = device_params(m, p).dense;
  const GroupShape g = group_shape(16, 1, net.cluster());
  const double units = 32;
  const double gather = units * net.time(Collective::kAllGather, 2 * params / units, g).seconds;
  const double reduce = units * net.time(Collective::kReduceScatter, 2 * params / units, g).seconds;
  // Per unit the latency is paid again: 32 collectives cost more than one of all the bytes.
  EXPECT_GT(gather, net.time(Collective::kAllGather, 2 * params, g).seconds);
  const Prediction one = predict(p);
  const double per_micro_batch = 2 * gather + reduce;
  const double unhidden = per_micro_batch / units;
  const double hidden = per_micro_batch - unhidden;
  ASSERT_LT(hidden, one.breakdown.compute);  // all of it fits behind the compute
  EXPECT_NEAR(one.breakdown.dp, unhidden + 0.189 * hidden, 1e-12);
  // Two micro-batches: each gathers and reduces again.
  p.global_batch = 32;
  EXPECT_NEAR(predict(p).breakdown.dp, 2 * one.breakdown.dp, 1e-12);
}

// fp32_grad_reduce (PyTorch FSDP reduce_dtype float32: Composer's mixed_precision DEFAULT,
// torchtitan's default) sends 4 bytes a gradient instead of 2; the gathers stay bf16. On one node
// of 8 (ring, 7 steps of the node link's latency) the reduce-scatter's bandwidth term doubles:
// for ZeRO 1 (one collective) t(4 B) − 7α = 2 · (t(2 B) − 7α).
TEST(Step, Fp32GradReduceDoublesTheReducedBytes) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kRing};
  ComputeModel serial = compute_model(hw);
  serial.overlap_dp = false;
  const Predictor predict{m, hw, net, "bf16", serial};
  Layout p;
  p.dp = 8;
  p.zero = 1;
  p.global_batch = 8;
  const double params = device_params(m, p).dense;
  const GroupShape g = group_shape(8, 1, net.cluster());
  const double latency = 7 * net.cluster().node.latency_s;
  const double gather = net.time(Collective::kAllGather, 2 * params, g).seconds;
  const double bf16 = net.time(Collective::kReduceScatter, 2 * params, g).seconds;
  const double fp32 = net.time(Collective::kReduceScatter, 4 * params, g).seconds;
  EXPECT_NEAR(fp32 - latency, 2 * (bf16 - latency), 1e-12);
  EXPECT_NEAR(predict(p).breakdown.dp, gather + bf16, 1e-12);
  p.fp32_grad_reduce = true;
  EXPECT_NEAR(predict(p).breakdown.dp, gather + fp32, 1e-12);
}

// PyTorch FSDP (fsdp: true) passes over each unit's unsharded gradient every micro-batch (step.cc,
// fsdp_grad_pass_bytes): the split backward's concatenation of the views' bf16 gradients (2 B read,
// 2 written), the cast to fp32 (2 read, 4 written) and the in-place pre-divide (4 read, 4 written):
// 18 B a parameter, 8 B when the reduce dtype is bf16 (no cast, a bf16 divide). Llama 3 8B's
// 8.03e9 parameters × 18 B at 0.9 × 2.039 TB/s of A100 HBM: 78.8 ms a micro-batch, added to the
// exposed DP time; Megatron-style ZeRO-3 (fsdp false) has none of it.
TEST(Step, FsdpPassesOverTheUnshardedGradientEachMicroBatch) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.dp = 16;
  p.zero = 3;
  p.global_batch = 16;
  p.fp32_grad_reduce = true;
  const double params = device_params(m, p).dense;
  EXPECT_NEAR(params / 1e9, 8.03, 0.005);
  const double megatron = predict(p).breakdown.dp;
  p.fsdp = true;
  const double pass = params * 18 / (0.9 * 2.039e12);
  EXPECT_NEAR(pass, 0.0788, 0.0005);
  EXPECT_NEAR(predict(p).breakdown.dp - megatron, pass, 1e-12);
  p.global_batch = 32;  // two micro-batches: twice over
  p.fsdp = false;
  const double megatron_two = predict(p).breakdown.dp;
  p.fsdp = true;
  EXPECT_NEAR(predict(p).breakdown.dp - megatron_two, 2 * pass, 1e-12);
  p.global_batch = 16;  // bf16 reduction: 4 B of concatenation and 4 B of divide
  p.fp32_grad_reduce = false;
  p.fsdp = false;
  const double bf16 = predict(p).breakdown.dp;
  p.fsdp = true;
  EXPECT_NEAR(predict(p).breakdown.dp - bf16, params * 8 / (0.9 * 2.039e12), 1e-12);
  p.dp = 1;  // nothing to reduce, no pass
  p.global_batch = 1;
  EXPECT_EQ(predict(p).breakdown.dp, 0);
}

// Megatron without gradient accumulation fusion (grad_accum_fusion false; ModelLink always): every
// micro-batch the DDP hook runs main_grad.add_(grad) over each parameter the device holds: the
// fp32 main_grad read and written and the bf16 gradient read, 4 + 4 + 2 = 10 B a parameter (6 B
// under fp16, whose main_grad is fp16 unless fp32_grad_reduce). Llama 3 8B at tp 8: 8.03e9 / 8 =
// 1.004e9 parameters a device × 10 B at 0.9 × 2.039 TB/s of A100 HBM = 5.47 ms of compute a
// micro-batch, twice over for two micro-batches; none with the fusion (the default).
TEST(Step, UnfusedGradientAccumulationAddsIntoMainGradEachMicroBatch) {
  const ModelSpec m = test_models::llama3_8b();
  HardwareSpec hw = a100();
  hw.peak_tflops["fp16"] = 312;
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.tp = 8;
  p.global_batch = 2;  // two micro-batches of one sequence
  const double params = device_params(m, p).total();
  EXPECT_NEAR(params / 1e9, 1.004, 0.001);
  const double fused = predict(p).breakdown.compute;
  p.grad_accum_fusion = false;
  const double add = params * 10 / (0.9 * 2.039e12);
  EXPECT_NEAR(add, 5.47e-3, 0.01e-3);
  EXPECT_NEAR(predict(p).breakdown.compute - fused, 2 * add, 1e-12);
  // fp16: an fp16 main_grad, 2 + 2 + 2 B; fp32 again under fp32_grad_reduce.
  const Predictor fp16{m, hw, net, "fp16", compute_model(hw)};
  p.grad_accum_fusion = true;
  const double fp16_fused = fp16(p).breakdown.compute;
  p.grad_accum_fusion = false;
  EXPECT_NEAR(fp16(p).breakdown.compute - fp16_fused, 2 * params * 6 / (0.9 * 2.039e12), 1e-12);
  p.fp32_grad_reduce = true;
  EXPECT_NEAR(fp16(p).breakdown.compute - fp16_fused, 2 * add, 1e-12);
}

// Composer's training metrics (train_metrics; LLM Foundry's MPT): after each micro-batch's
// backward, LanguageCrossEntropy and LanguagePerplexity each run one fp32 cross-entropy over the
// logits, forward only: the autocast cast (2 B read, 4 B written) and log_softmax's three reads of
// the fp32 copy and its write (16 B), 22 B a logit, twice. One sequence of 2,048 tokens and MPT's
// 50,368 vocabulary: 103,153,664 logits × 44 B = 4.539 GB at 0.9 × 2.039 TB/s of A100 HBM =
// 2.473 ms of compute per micro-batch.
TEST(Step, ComposerTrainMetricsReadTheLogitsTwiceInFp32) {
  ModelSpec m = test_models::gpt3();
  m.vocab = 50368;
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.global_batch = 2;  // two micro-batches of one sequence
  const double without = predict(p).breakdown.compute;
  p.train_metrics = true;
  const double metrics = 2048.0 * 50368 * 44 / (0.9 * 2.039e12);
  EXPECT_NEAR(metrics, 2.473e-3, 0.001e-3);
  EXPECT_NEAR(predict(p).breakdown.compute - without, 2 * metrics, 1e-12);
}

// FSDP's SHARD_GRAD_OP (zero 2 with fsdp) keeps each unit's gathered weights from its forward to
// its backward and reduce-scatters its gradients after it, unit by unit, every micro-batch: one
// gather and one reduce-scatter per unit, the first unit's gather and the last unit's
// reduce-scatter (1/L) exposed, the rest behind the compute it slows by 18.9%, plus the gradient
// passes. Without fsdp, ZeRO-2 stays Megatron's: one reduce-scatter behind the last backward and
// one gather behind the first forward, each of all the bytes.
TEST(Step, FsdpShardGradOpGathersEachUnitOncePerMicroBatch) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.dp = 16;
  p.zero = 2;
  p.global_batch = 16;
  p.fp32_grad_reduce = true;
  const double params = device_params(m, p).dense;
  const GroupShape g = group_shape(16, 1, net.cluster());
  const double units = 32;
  const double gather = units * net.time(Collective::kAllGather, 2 * params / units, g).seconds;
  const double reduce = units * net.time(Collective::kReduceScatter, 4 * params / units, g).seconds;
  const double whole_gather = net.time(Collective::kAllGather, 2 * params, g).seconds;
  const double whole_reduce = net.time(Collective::kReduceScatter, 4 * params, g).seconds;
  const Prediction megatron = predict(p);
  ASSERT_GT(megatron.breakdown.compute, whole_gather + whole_reduce);
  EXPECT_NEAR(megatron.breakdown.dp, 0, 1e-12);  // all of it hidden, nothing slowed
  p.fsdp = true;
  const double per_micro_batch = gather + reduce;
  const double unhidden = per_micro_batch / units;
  const double pass = params * 18 / (0.9 * 2.039e12);
  const Prediction one = predict(p);
  EXPECT_NEAR(one.breakdown.dp, unhidden + 0.189 * (per_micro_batch - unhidden) + pass, 1e-12);
  p.global_batch = 48;  // three micro-batches: each gathers and reduces again
  EXPECT_NEAR(predict(p).breakdown.dp, 3 * one.breakdown.dp, 1e-12);
}

// torchtitan's op-level policy (selective-op) repeats the forward's element-wise work and every
// second matmul: against full recomputation it saves the scores (what selective repeats) and the
// GEMMs of the mms it keeps, L·(layer − scores − every second mm)·tokens at the GEMM rate.
// Llama 3 8B, one micro-batch of 8192 tokens on the A100 above.
TEST(Step, SelectiveOpRepeatsTheElementwiseWorkAndEverySecondMatmul) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.global_batch = 1;
  auto compute = [&](Recompute r) {
    p.recompute = r;
    return predict(p).breakdown.compute;
  };
  const double none = compute(Recompute::kNone);
  const double selective = compute(Recompute::kSelective);
  const double full = compute(Recompute::kFull);
  const double op = compute(Recompute::kSelectiveOp);
  const double kept_mm = layer_forward_flops(m, 0) - attention_score_flops(m) - every_second_mm_flops(m);
  const double rate = 312e12 * 0.869 * kFrameworkGemmShare * gemm_width_factor(4096);
  EXPECT_NEAR((full - none) - (selective - none) - (op - none), 32 * kept_mm * 8192 / rate, 1e-9);
  EXPECT_GT(op, selective);
  EXPECT_LT(op, full);
  const Prediction r = predict(p);
  EXPECT_NEAR(r.hfu / r.mfu, selective_op_flops_per_token(m) / model_flops_per_token(m), 1e-12);
}

// Eager mode prices the Llama reference code's element-wise ops: Llama 3 8B moves 610,304 bytes per
// token and layer forward (2 RMSNorms 36·h each, rotary 20·(q + k), repeat_kv 4·(k + q), 2
// residual adds 6·h each, SwiGLU 10·f) in 28 kernels, against the fused kernels' 2 × 139,264 kept
// bytes in 24: 331,776 bytes and 4 kernels more, three times (forward and backward) per layer, and
// four times under selective-op, which repeats them.
TEST(Step, EagerModeMovesTheReferenceCodesElementwiseBytes) {
  const ModelSpec m = test_models::llama3_8b();
  const HardwareSpec hw = a100();
  const Network net{default_cluster(hw), Algorithm::kAuto};
  const Predictor predict{m, hw, net, "bf16", compute_model(hw)};
  Layout p;
  p.global_batch = 1;
  const double fused = predict(p).breakdown.compute;
  p.eager = true;
  const double eager = predict(p).breakdown.compute;
  const double per_layer = 331776.0 * 8192 / (2.039e12 * 0.9) + 4 * kKernelOverheadS;
  EXPECT_NEAR(eager - fused, 3 * 32 * per_layer, 1e-9);
  p.recompute = Recompute::kSelectiveOp;
  const double eager_op = predict(p).breakdown.compute;
  p.eager = false;
  EXPECT_NEAR(eager_op - predict(p).breakdown.compute, 4 * 32 * per_layer, 1e-9);
}

// Both are priced from a dense Llama block's code: refused, with one line each, elsewhere.
TEST(Step, EagerAndSelectiveOpNeedADenseLlamaBlock) {
  Layout p;
  p.eager = true;
  p.recompute = Recompute::kSelectiveOp;
  p.ep = 8;
  p.dp = 8;
  p.global_batch = 8;
  const std::vector<std::string> problems = layout_problems(test_models::deepseek_v3(), p, 8);
  EXPECT_NE(std::find(problems.begin(), problems.end(),
                      "--eager prices the Llama reference code's element-wise ops (RMSNorm, rotary, "
                      "SwiGLU): it needs a dense SwiGLU model without MLA"),
            problems.end());
  EXPECT_NE(std::find(problems.begin(), problems.end(),
                      "--recompute selective-op prices torchtitan's policy by the matmul order of a "
                      "dense Llama block: it needs a dense model without MLA"),
            problems.end());
  p.ep = 1;
  p.recompute = Recompute::kNone;
  EXPECT_EQ(layout_problems(test_models::gpt3(), p, 8),
            std::vector<std::string>{"--eager prices the Llama reference code's element-wise ops "
                                     "(RMSNorm, rotary, SwiGLU): it needs a dense SwiGLU model "
                                     "without MLA"});
  EXPECT_TRUE(layout_problems(test_models::llama3_8b(), p, 8).empty());
}

}  // namespace
}  // namespace plumb::plan
