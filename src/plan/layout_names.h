// The names a layout's choices go by, as plumb plan's options, run-set files and plumb.plan/1's
// `layout` spell them: one table each, read by the CLI, the run-set reader and the JSON reader.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plan/memory.h"

namespace plumb::plan {

inline const std::map<std::string, Recompute> kRecomputeNames = {
    {"none", Recompute::kNone}, {"selective", Recompute::kSelective}, {"full", Recompute::kFull},
    {"selective-op", Recompute::kSelectiveOp}};
inline const std::map<std::string, Schedule> kScheduleNames = {
    {"1f1b", Schedule::kOneFOneB},
    {"interleaved", Schedule::kInterleaved},
    {"zero-bubble", Schedule::kZeroBubble},
    {"dualpipe", Schedule::kDualPipe}};
inline const std::map<std::string, DispatchPrecision> kDispatchPrecisionNames = {
    {"bf16", DispatchPrecision::kBf16}, {"fp8", DispatchPrecision::kFp8}};
inline const std::map<std::string, CpAlgo> kCpAlgoNames = {{"ring", CpAlgo::kRing},
                                                           {"ulysses", CpAlgo::kUlysses}};
inline const std::map<std::string, Dispatcher> kDispatcherNames = {
    {"alltoall", Dispatcher::kAllToAll},
    {"allgather", Dispatcher::kAllGather},
    {"deepep", Dispatcher::kDeepEP}};

// A layout's on/off choices of one flag each: the run-set key and plumb.plan/1's field, the Layout
// member, the value plumb plan's option sets it to (its default the other), the option and its
// help, and what the layout line says when it is set. Read by the CLI, the reproducing command,
// the run-set reader, the JSON writer and reader, and the layout line, in this order.
struct LayoutFlag {
  const char* key;
  bool Layout::*member;
  bool set;
  const char* option;
  const char* help;
  const char* text;
};
inline const std::vector<LayoutFlag> kLayoutFlags = {
    {"fp32_combine", &Layout::fp32_combine, true, "--fp32-combine",
     "The allgather dispatcher's combine scatter-added and reduce-scattered in fp32 (MindSpeed's "
     "allgather unpermutation, ModelLink --moe-permutation-async-comm)",
     "fp32 combine"},
    {"fp32_grad_reduce", &Layout::fp32_grad_reduce, true, "--fp32-grad-reduce",
     "Gradients reduced in fp32, parameters gathered in bf16 (PyTorch FSDP reduce_dtype=float32: "
     "Composer's mixed_precision DEFAULT, torchtitan's default)",
     "fp32 gradient reduction"},
    {"fsdp", &Layout::fsdp, true, "--fsdp",
     "ZeRO 2 or 3 sharded by PyTorch FSDP (Composer/LLM Foundry, torchtitan): every micro-batch's "
     "gradients reduce-scattered per unit after passes over the unsharded gradient; ZeRO 2 "
     "(SHARD_GRAD_OP) gathers each unit once per micro-batch",
     "PyTorch FSDP"},
    {"train_metrics", &Layout::train_metrics, true, "--train-metrics",
     "Composer's training metrics after every micro-batch (LLM Foundry's MPT: LanguageCrossEntropy "
     "and LanguagePerplexity, two fp32 cross-entropies over the logits, no backward)",
     "train metrics"},
    {"eager", &Layout::eager, true, "--eager",
     "PyTorch eager mode (no torch.compile): the Llama reference code's element-wise ops (RMSNorm, "
     "rotary, SwiGLU) one kernel each, as torchtitan runs them uncompiled",
     "eager"},
    {"grad_accum_fusion", &Layout::grad_accum_fusion, false, "--no-gradient-accumulation-fusion",
     "Megatron without gradient accumulation fusion (ModelLink always): each micro-batch's bf16 "
     "weight gradients added into the fp32 main_grad by the DDP hook, one element-wise pass over "
     "the device's parameters",
     "unfused gradient accumulation"}};

// The name a choice goes by in `names` (the reverse of a lookup; every value has one).
template <typename Choice>
const std::string& name_of(const std::map<std::string, Choice>& names, Choice value) {
  for (const auto& [name, choice] : names) {
    if (choice == value) return name;
  }
  static const std::string kNone;
  return kNone;
}

}  // namespace plumb::plan
