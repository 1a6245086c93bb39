// The names a layout's choices go by, as plumb plan's options, run-set files and plumb.plan/1's
// `layout` spell them: one table each, read by the CLI, the run-set reader and the JSON reader.
#pragma once

#include <map>
#include <string>

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
