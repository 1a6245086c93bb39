// Issue 15's rules, each against a worked example: expert states sharded over the
// expert-data-parallel group, MoE parallel folding (validity and where an EP group sits), the
// schedules' bubbles (DeepSeek-V3 Table 2), node-limited routing's traffic, the pipeline stages'
// layers and micro-batches in flight, and the fullest stage.
#include <gtest/gtest.h>

#include "plan/memory.h"
#include "plan/models.h"
#include "plan/network.h"
#include "plan/step.h"

namespace plumb::plan {
namespace {

// DeepSeek-V3's shape (report Section 4.2) with plain multi-head attention and no MTP module, so
// that the numbers below depend on the MoE rules alone.
ModelSpec deepseek_like() {
  ModelSpec m = test_models::deepseek_v3();
  m.mla.reset();
  m.mtp_layers = 0;
  return m;
}

// DeepSeek-V3's published layout: 2,048 H800, PP16, EP64 (no TP), ZeRO-1, DualPipe.
Layout deepseek_layout() {
  Layout p;
  p.pp = 16;
  p.dp = 128;
  p.ep = 64;
  p.zero = 1;
  p.global_batch = 15360;
  p.schedule = Schedule::kDualPipe;
  return p;
}

// Routed experts: 58 MoE layers × 256 experts × 3·7168·2048 = 653,908,770,816 weights; over
// pp 16 × ep 64 = 638,582,784 per device. The expert-data-parallel group is
// tp·cp·dp/(ep·etp) = 128/64 = 2 devices, so ZeRO-1 keeps 12 B / 2 per expert weight:
// 3,831,496,704 bytes, where sharding over all 128 data-parallel ranks gave 59.9 MB.
TEST(Moe, ExpertStatesShardOverTheExpertDataParallelGroup) {
  const ModelSpec m = deepseek_like();
  const Layout p = deepseek_layout();
  const DeviceParams n = device_params(m, p);
  EXPECT_DOUBLE_EQ(n.experts, 653908770816.0 / 1024);
  EXPECT_DOUBLE_EQ(expert_replicas(p), 2);
  EXPECT_DOUBLE_EQ(dense_replicas(p), 128);
  const ModelStates s = model_states(m, p);
  EXPECT_DOUBLE_EQ(s.optimizer, 12 * n.dense / 128 + 12 * n.experts / 2);
  EXPECT_NEAR(12 * n.experts / 2, 3.8315e9, 1e5);
  // The dense 18.2 B weights (MHA here: 61 × 4h² of attention, 12.5 B, the FFNs, router and
  // embeddings) are 1.14 B per stage, sharded 128 ways: 0.107 GB more.
  EXPECT_NEAR(s.optimizer / 1e9, 3.938, 0.001);
  // ep = dp: each expert on one device of its stage, nothing to shard it over.
  Layout whole = p;
  whole.ep = 128;
  EXPECT_DOUBLE_EQ(expert_replicas(whole), 1);
  EXPECT_DOUBLE_EQ(model_states(m, whole).optimizer,
                   12 * device_params(m, whole).dense / 128 + 12 * device_params(m, whole).experts);
}

// MoE parallel folding: ep × etp fold over tp × cp × dp, so ep need not divide dp. tp 2, dp 32
// (64 ranks a stage) hold ep 64 with etp 1, not with etp 2 (128 ranks).
TEST(Moe, FoldingNeedsEpTimesEtpToDivideTheStage) {
  const ModelSpec m = deepseek_like();
  Layout p;
  p.tp = 2;
  p.dp = 32;
  p.ep = 64;
  p.etp = 1;
  p.global_batch = 64;
  EXPECT_TRUE(layout_problems(m, p, 64).empty());
  EXPECT_DOUBLE_EQ(expert_replicas(p), 1);  // 2 · 32 / (64 · 1)
  p.etp = 2;
  const std::vector<std::string> problems = layout_problems(m, p, 64);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "ep 64 × etp 2 must divide tp 2 × cp 1 × dp 32 = 64, the ranks the MoE "
                         "layers fold over");
  p.ep = 3;
  p.etp = 1;
  EXPECT_EQ(layout_problems(m, p, 64),
            (std::vector<std::string>{
                "ep 3 × etp 1 must divide tp 2 × cp 1 × dp 32 = 64, the ranks the MoE layers fold "
                "over",
                "ep 3 must divide the 256 experts"}));
}

// Megatron-Core numbers the MoE layers' ranks etp innermost, then ep: a 64-way EP group of
// etp 1 is 64 consecutive ranks, 8 nodes of 8 — not 16, as ep ranks tp = 2 apart would span.
TEST(Moe, AnEpGroupSitsWhereMegatronPutsIt) {
  ClusterSpec c;
  c.devices_per_node = 8;
  EXPECT_EQ(group_shape(64, 1, c).nodes, 8);
  EXPECT_EQ(group_shape(64, 2, c).nodes, 16);
}

// DeepSeek-V3 Table 2 with F = 1, B = 2 (a full backward), W = 1, PP = 16: 1F1B (PP−1)(F+B) = 45,
// ZB1P (PP−1)(F+B−2W) = 15, DualPipe (PP/2−1)(F&B+B−3W) = 7 · (3 + 2 − 3) = 14 (F&B = F + B);
// interleaved with v = 4: 45 / 4.
TEST(Moe, ScheduleBubblesAsDeepSeekV3Table2) {
  const StagePass pass{3, 2, 1};
  Layout p;
  p.pp = 16;
  EXPECT_DOUBLE_EQ(pipeline_bubble(p, pass), 45);
  p.schedule = Schedule::kZeroBubble;
  EXPECT_DOUBLE_EQ(pipeline_bubble(p, pass), 15);
  p.schedule = Schedule::kDualPipe;
  EXPECT_DOUBLE_EQ(pipeline_bubble(p, pass), 14);
  p.schedule = Schedule::kOneFOneB;
  p.vpp = 4;
  EXPECT_DOUBLE_EQ(pipeline_bubble(p, pass), 45.0 / 4);
}

// Each schedule's own needs.
TEST(Moe, SchedulesRefuseWhatTheyCannotRun) {
  const ModelSpec m = deepseek_like();
  Layout p = deepseek_layout();
  p.global_batch = 128 * 3;  // 3 micro-batches
  EXPECT_EQ(layout_problems(m, p, 2048),
            (std::vector<std::string>{"DualPipe needs an even pp ≥ 2 and an even number of "
                                      "micro-batches (pp 16, 3 micro-batches)"}));
  p.global_batch = 15360 + 128 * 8;  // 128 micro-batches, a multiple of pp as interleaving needs
  p.vpp = 2;
  EXPECT_EQ(layout_problems(m, p, 2048),
            (std::vector<std::string>{
                "the DualPipe schedule runs one chunk per stage: vpp must be 1, not 2"}));
  p.vpp = 1;
  p.schedule = Schedule::kInterleaved;
  EXPECT_EQ(layout_problems(m, p, 2048),
            (std::vector<std::string>{"the interleaved schedule needs vpp > 1"}));
}

// Node-limited routing: an EP group over 8 nodes sends top_k·7/8 = 7 copies of a token across
// the network; with at most 4 nodes per token, 4·7/8 = 3.5. Within one node, none.
TEST(Moe, NodeLimitedRoutingSendsATokenOncePerNode) {
  EXPECT_DOUBLE_EQ(remote_copies(8, 0, 8), 7);
  EXPECT_DOUBLE_EQ(remote_copies(8, 4, 8), 3.5);
  EXPECT_DOUBLE_EQ(remote_copies(2, 4, 8), 1.75);  // fewer experts than the limit
  EXPECT_DOUBLE_EQ(remote_copies(8, 4, 1), 0);
}

// DeepEP sends a token over the network once per node its experts are on, and a token has at
// most as many target nodes as the group has: on 4 nodes, top 8 with the limit 4, min(4, 4, 8)·3/4
// = 3 copies cross, where the plain all-to-all's top_k·3/4 = 6 do (the limit alone does nothing on
// a group no wider than it). Without a limit, min(4, 8)·3/4 = 3 as well; 2 experts: 2·3/4.
TEST(Moe, DeepEpSendsATokenOncePerTargetNode) {
  EXPECT_DOUBLE_EQ(remote_copies(8, 4, 4), 3);
  EXPECT_DOUBLE_EQ(remote_copies(8, 4, 4, true), 3);
  EXPECT_DOUBLE_EQ(remote_copies(8, 0, 4), 6);
  EXPECT_DOUBLE_EQ(remote_copies(8, 0, 4, true), 3);
  EXPECT_DOUBLE_EQ(remote_copies(2, 0, 4, true), 1.5);
  EXPECT_DOUBLE_EQ(remote_copies(8, 4, 8, true), 3.5);  // the limit binds first, as before
  EXPECT_DOUBLE_EQ(remote_copies(8, 0, 1, true), 0);
}

// DeepSeek-V3's shape (61 layers, 58 MoE, h 7168, top 8, at most 4 nodes) on H800-like nodes
// (rail 50 × 0.92 = 46 GB/s, α 6 µs; NVLink 200 × 0.77 = 154 GB/s, α 2 µs), one stage, one
// micro-batch of 4096 tokens per device, EP 32 over 4 nodes. With DeepEP a dispatch (or combine)
// sends 4096·7168·2 B = 58,720,256 B × 3 copies across, 176,160,768 B / 46e9 + 3·6 µs =
// 3.847582 ms, against the NVLink fan-out of 8 copies, 469,762,048 B / 154e9 + 7·2 µs = 3.064403
// ms: the network paces. Four per MoE layer (dispatch and combine, forward and backward), 58
// layers: 232 × 3.847582 ms = 0.892639 s. The plain all-to-all sends top_k copies and is slower;
// on one node (EP 8) the two are the same.
TEST(Moe, DeepEpAllToAllIsPacedByOneCopyPerRemoteNode) {
  const HardwareSpec hw = test_models::hopper("h800-like", 200);
  const ModelSpec m = deepseek_like();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predict(m, hw, net, "bf16", compute_model(hw));
  Layout p;
  p.dp = 32;
  p.ep = 32;
  p.global_batch = 32;
  const double plain = predict(p).breakdown.ep;
  p.dispatcher = Dispatcher::kDeepEP;
  const double a2a = 4096.0 * 7168 * 2 * 3 / 46e9 + 3 * 6e-6;
  EXPECT_NEAR(a2a, 3.847582e-3, 1e-9);
  EXPECT_GT(a2a, 4096.0 * 7168 * 2 * 8 / 154e9 + 7 * 2e-6);
  EXPECT_NEAR(predict(p).breakdown.ep, 232 * a2a, 1e-9);
  EXPECT_GT(plain, 1.5 * predict(p).breakdown.ep);
  Layout node = p;
  node.dp = 8;
  node.ep = 8;
  node.global_batch = 8;
  const double deepep = predict(node).breakdown.ep;
  node.dispatcher = Dispatcher::kAllToAll;
  EXPECT_DOUBLE_EQ(deepep, predict(node).breakdown.ep);
  Layout dense;
  dense.dp = 8;
  dense.global_batch = 8;
  dense.dispatcher = Dispatcher::kDeepEP;
  EXPECT_EQ(layout_problems(test_models::llama3_8b(), dense, 8),
            std::vector<std::string>{"--dispatcher deepep needs a MoE model"});
}

// The limit lowers the EP time of DeepSeek-V3's layout on H800-like nodes; fp8 dispatch lowers it
// further, an overlap hides what the MoE layers' compute covers.
TEST(Moe, RoutingPrecisionAndOverlapLowerTheExposedAllToAll) {
  const HardwareSpec hw = test_models::hopper("h800-like", 200);
  const ModelSpec m = deepseek_like();
  ModelSpec any_node = m;
  any_node.moe->max_nodes_per_token = 0;
  const Network net(default_cluster(hw), Algorithm::kAuto);
  Layout p = deepseek_layout();
  const Predictor limited(m, hw, net, "bf16", compute_model(hw));
  const double with_limit = limited(p).breakdown.ep;
  const Predictor unlimited(any_node, hw, net, "bf16", compute_model(hw));
  EXPECT_LT(with_limit, 0.75 * unlimited(p).breakdown.ep);
  p.dispatch = DispatchPrecision::kFp8;
  const double fp8 = limited(p).breakdown.ep;
  EXPECT_LT(fp8, with_limit);
  p.ep_overlap = true;
  EXPECT_LT(limited(p).breakdown.ep, fp8);
}

// DeepSeek-V2's overlap (Section 3.1.3) hides the all-to-all behind the shared experts alone.
// DeepSeek-V3's shape on one stage (61 layers, 58 MoE), one micro-batch of 4096 tokens, no
// recomputation: its one shared expert is 2·3·7168·2048 FLOPs per token forward, × 3 for forward
// and backward, at 989 TFLOP/s × 0.8 × kFrameworkGemmShare × 7168/(7168 + 128): 1.6576 ms a layer,
// 96.1 ms over the 58 MoE layers, which the exposed all-to-all loses. A model without shared
// experts is refused the option.
TEST(Moe, SharedExpertOverlapHidesBehindTheSharedExpertsOnly) {
  const HardwareSpec hw = test_models::hopper("h800-like", 200);
  const ModelSpec m = deepseek_like();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  Layout p;
  p.dp = 2048;
  p.ep = 64;
  p.global_batch = 2048;
  const Predictor predict(m, hw, net, "bf16", compute_model(hw));
  const double exposed = predict(p).breakdown.ep;
  p.shared_expert_overlap = true;
  const double shared = 2.0 * 3 * 7168 * 2048 * 4096 * 3 /
                        (989e12 * 0.8 * kFrameworkGemmShare * 7168 / (7168 + 128));
  EXPECT_NEAR(shared, 1.6576e-3, 1e-7);
  EXPECT_NEAR(exposed - predict(p).breakdown.ep, 58 * shared, 1e-9);
  p.ep_overlap = true;  // the full overlap wins where both are set
  EXPECT_LT(predict(p).breakdown.ep, exposed - 58 * shared);

  Layout qwen;
  qwen.dp = 8;
  qwen.ep = 8;
  qwen.global_batch = 8;
  qwen.shared_expert_overlap = true;
  EXPECT_EQ(layout_problems(test_models::qwen3_30b_a3b(), qwen, 8),
            std::vector<std::string>{"--shared-expert-overlap needs a model with shared experts"});
}

HardwareSpec a100_like() {
  HardwareSpec hw;
  hw.name = "a100-like";
  hw.peak_tflops = {{"bf16", 312}};
  hw.hbm_gb = 80;
  hw.hbm_tbps = 2.039;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 300;
  hw.scaleout_gbps_per_device = 25;
  hw.efficiency = 0.869;
  return hw;
}

// GShard capacity on Mixtral, one device, 4,096 tokens: C = ceil(4096/8 × 1.1 × 2) = 1127 slots
// per expert, 9016 slots for 8192 routed copies, padding 1.1005859375. The routed experts'
// 2·2·3·4096·14336·4096 = 2.886e12 FLOPs per layer forward run on 1127 rows per expert instead
// of 1024, at rate = 312e12 × 0.869 × 0.84 × w/(w + 128):
//   dropless 2.886e12 / (rate × 1024/1152) = 14.2570 ms, capacity 2.886e12 × 1.10059 /
//   (rate × 1127/1255) = 15.5317 ms; 1.2747 ms more, × 3 (forward and backward) × 32 layers =
//   122.4 ms a micro-batch.
// GShard's einsums add 4 · 4096 · 8 · 1127 · 4096 = 6.0505e11 FLOPs at rate × 4096/4224
// (2.7397 ms) and 38 B per slot of gating tensors in place of the permutation's 2·2·4096·2·4096·2
// B: (38 · 36,929,536 − 268,435,456) B at 0.9 × 2.039 TB/s = 0.6184 ms; × 96 = 322.4 ms.
TEST(Moe, CapacityPadsTheExpertGemmsAndEinsumsDispatch) {
  const HardwareSpec hw = a100_like();
  const ModelSpec m = test_models::mixtral_8x7b();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predict(m, hw, net, "bf16", compute_model(hw));
  Layout p;
  p.global_batch = 1;
  const double dropless = predict(p).breakdown.compute;
  p.capacity_factor = 1.1;
  const double capacity = predict(p).breakdown.compute;
  EXPECT_NEAR(capacity - dropless, 0.12237, 1e-5);
  p.einsum_dispatch = true;
  EXPECT_NEAR(predict(p).breakdown.compute - capacity, 0.32238, 1e-5);

  Layout einsum;
  einsum.global_batch = 1;
  einsum.einsum_dispatch = true;
  EXPECT_EQ(layout_problems(m, einsum, 1),
            std::vector<std::string>{"--einsum-dispatch needs --capacity-factor: GShard's einsums "
                                     "run over each expert's capacity"});
  einsum.capacity_factor = 1;
  EXPECT_EQ(layout_problems(test_models::llama3_8b(), einsum, 1),
            (std::vector<std::string>{"--capacity-factor needs a MoE model",
                                      "--einsum-dispatch needs a MoE model"}));
}

// 126 layers on 16 stages as Llama 3 405B ran them: 7 on the first and last, 8 on the 14 others;
// 61 on 16: 3 on the edges and stage 14, 4 on stages 1–13; every split adds up.
TEST(Moe, StagesTakeTheLayersMiddleFirst) {
  EXPECT_EQ(stage_layers(126, 16, 0), 7);
  EXPECT_EQ(stage_layers(126, 16, 1), 8);
  EXPECT_EQ(stage_layers(126, 16, 14), 8);
  EXPECT_EQ(stage_layers(126, 16, 15), 7);
  EXPECT_EQ(stage_layers(61, 16, 13), 4);
  EXPECT_EQ(stage_layers(61, 16, 14), 3);
  EXPECT_EQ(stage_layers(11, 3, 2), 4);  // more than the middle stages take: the last one more
  EXPECT_EQ(stage_first_layer(126, 16, 15), 119);
  for (int layers : {61, 96, 126, 127}) {
    for (int pp : {1, 2, 3, 16, 32}) {
      int sum = 0;
      for (int s = 0; s < pp; ++s) sum += stage_layers(layers, pp, s);
      EXPECT_EQ(sum, layers) << layers << " on " << pp;
    }
  }
}

// Micro-batches in flight on a stage: 1F1B pp − stage (at most m); interleaved with pp 16, v 8:
// (15·2 + 7·16 + 1) = 143 chunks of 1/8 stage = 17.875, which is Korthikanti's 16·(1 + 15/128);
// DualPipe pp + 1.
TEST(Moe, MicroBatchesInFlightPerSchedule) {
  Layout p;
  p.pp = 16;
  p.dp = 1;
  p.global_batch = 32;
  EXPECT_DOUBLE_EQ(in_flight(p, 0), 16);
  EXPECT_DOUBLE_EQ(in_flight(p, 15), 1);
  p.vpp = 8;
  EXPECT_DOUBLE_EQ(in_flight(p, 0), 17.875);
  EXPECT_DOUBLE_EQ(in_flight(p, 0), 16 * (1 + 15.0 / 128));
  p.vpp = 1;
  p.schedule = Schedule::kDualPipe;
  EXPECT_DOUBLE_EQ(in_flight(p, 0), 17);
  p.schedule = Schedule::kOneFOneB;
  p.global_batch = 8;
  EXPECT_DOUBLE_EQ(in_flight(p, 0), 8);  // fewer micro-batches than stages
}

// Llama 3's split of 126 layers on 16 stages under 1F1B: the first stage holds 16 micro-batches of
// its 7 layers (112 layer-activations), the second 15 of its 8 (120): the second is the fullest
// once activations dominate. The last holds one micro-batch of its 7 layers and the fp32 logits.
TEST(Moe, TheFullestStageIsTheOneHoldingTheMostLayerActivations) {
  ModelSpec m = deepseek_like();
  m.moe.reset();
  m.layers = 126;
  Layout p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 64;
  p.global_batch = 2048;
  const double layer = layer_activation_bytes(m, p);
  const StageMemory first = stage_memory(m, p, 0);
  EXPECT_EQ(first.layers, 7);
  EXPECT_TRUE(first.embedding);
  EXPECT_DOUBLE_EQ(first.activations, 16 * 7 * layer);
  const StageMemory second = stage_memory(m, p, 1);
  EXPECT_DOUBLE_EQ(second.activations, 15 * 8 * layer);
  const StageMemory last = stage_memory(m, p, 15);
  EXPECT_TRUE(last.output);
  EXPECT_DOUBLE_EQ(last.activations, 7 * layer + 4096.0 * 129280 / 8 * 4);
  const StageMemory fullest = largest_stage(m, p);
  EXPECT_EQ(fullest.stage, 1);
  EXPECT_EQ(fullest.layers, 8);
  EXPECT_FALSE(fullest.embedding);
  // The weights of the embedding (V·h/tp) and the first stage's 7 layers vs the second's 8:
  const double difference = (second.states.weights - (first.states.weights -
                           2.0 * 129280 * 7168 / 8) / 7 * 8);
  EXPECT_NEAR(difference, 0, 1);
}

// Megatron-Core's allgather dispatcher (MoEAllGatherTokenDispatcher): DeepSeek-V3's shape on
// 8 devices, ep 8, one micro-batch of 4096 tokens each. Every MoE layer all-gathers the 8 ranks'
// 32,768 tokens (7168 bf16 values, 470 MB, and top-8 int64 indices and fp32 probabilities,
// 3.1 MB) and reduce-scatters the combined 470 MB back; the backward mirrors both. 58 MoE layers.
// The buffer: the gathered tokens and the combine's, 2 × 470 MB. A dense model is refused it.
TEST(Moe, AllGatherDispatcherGathersEveryTokenOverTheEpTimesEtpRanks) {
  const HardwareSpec hw = test_models::hopper("h800-like", 200);
  const ModelSpec m = deepseek_like();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predict(m, hw, net, "bf16", compute_model(hw));
  Layout p;
  p.dp = 8;
  p.ep = 8;
  p.etp = 1;
  p.global_batch = 8;
  p.dispatcher = Dispatcher::kAllGather;
  const GroupShape g = group_shape(8, 1, net.cluster());
  const double hidden = 32768.0 * 7168 * 2;
  const double routing = 32768.0 * 8 * 12;
  EXPECT_NEAR(hidden / 1e6, 469.8, 0.05);
  const double forward = net.time(Collective::kAllGather, hidden + routing, g).seconds +
                         net.time(Collective::kReduceScatter, hidden, g).seconds;
  const double backward = net.time(Collective::kAllGather, hidden, g).seconds +
                          net.time(Collective::kReduceScatter, hidden, g).seconds;
  const Prediction r = predict(p);
  EXPECT_NEAR(r.breakdown.ep, 58 * (forward + backward), 1e-12);
  Layout a2a = p;
  a2a.dispatcher = Dispatcher::kAllToAll;
  EXPECT_NEAR(r.memory.buffers - predict(a2a).memory.buffers,
              2 * hidden - 2 * 4096.0 * 8 * 7168 * 2, 1);
  Layout dense;
  dense.global_batch = 1;
  dense.dispatcher = Dispatcher::kAllGather;
  EXPECT_EQ(layout_problems(test_models::llama3_8b(), dense, 1),
            std::vector<std::string>{"--dispatcher allgather needs a MoE model"});
}

// MindSpeed's allgather unpermutation (--fp32-combine; ModelLink --moe-permutation-async-comm)
// scatter-adds into an fp32 buffer and reduce-scatters it: the same layout as above, the forward's
// reduce-scatter and the backward's all-gather of the combine carry 32,768 × 7168 × 4 = 939.5 MB
// instead of 469.8 MB; the dispatch's all-gather (with the routing) and its backward
// reduce-scatter stay bf16. The buffer: 470 MB of gathered tokens + 940 MB fp32 combine. Without
// the allgather dispatcher it is refused.
TEST(Moe, Fp32CombineDoublesTheAllGatherDispatchersCombineBytes) {
  const HardwareSpec hw = test_models::hopper("h800-like", 200);
  const ModelSpec m = deepseek_like();
  const Network net(default_cluster(hw), Algorithm::kAuto);
  const Predictor predict(m, hw, net, "bf16", compute_model(hw));
  Layout p;
  p.dp = 8;
  p.ep = 8;
  p.etp = 1;
  p.global_batch = 8;
  p.dispatcher = Dispatcher::kAllGather;
  p.fp32_combine = true;
  const GroupShape g = group_shape(8, 1, net.cluster());
  const double hidden = 32768.0 * 7168 * 2;
  const double combined = 32768.0 * 7168 * 4;
  const double routing = 32768.0 * 8 * 12;
  EXPECT_NEAR(combined / 1e6, 939.5, 0.05);
  const double forward = net.time(Collective::kAllGather, hidden + routing, g).seconds +
                         net.time(Collective::kReduceScatter, combined, g).seconds;
  const double backward = net.time(Collective::kAllGather, combined, g).seconds +
                          net.time(Collective::kReduceScatter, hidden, g).seconds;
  const Prediction r = predict(p);
  EXPECT_NEAR(r.breakdown.ep, 58 * (forward + backward), 1e-12);
  Layout bf16 = p;
  bf16.fp32_combine = false;
  EXPECT_GT(r.breakdown.ep, predict(bf16).breakdown.ep);
  EXPECT_NEAR(r.memory.buffers - predict(bf16).memory.buffers, combined - hidden, 1);
  Layout a2a = p;
  a2a.dispatcher = Dispatcher::kAllToAll;
  EXPECT_EQ(layout_problems(m, a2a, 8),
            std::vector<std::string>{"--fp32-combine is MindSpeed's allgather unpermutation: it "
                                     "needs --dispatcher allgather"});
}

}  // namespace
}  // namespace plumb::plan
