#include "mem/trace.h"

namespace plumb::mem {

const char* action_name(Action a) {
  switch (a) {
    case Action::kAlloc: return "alloc";
    case Action::kFreeRequested: return "free_requested";
    case Action::kFreeCompleted: return "free_completed";
    case Action::kSegmentAlloc: return "segment_alloc";
    case Action::kSegmentFree: return "segment_free";
    case Action::kSegmentMap: return "segment_map";
    case Action::kSegmentUnmap: return "segment_unmap";
    case Action::kSnapshot: return "snapshot";
    case Action::kOom: return "oom";
    case Action::kWorkspaceSnapshot: return "workspace_snapshot";
  }
  return "";
}

uint32_t TraceBuilder::frame(Frame f) {
  std::string key = f.name + '\0' + f.filename + '\0' + std::to_string(f.line);
  const auto [it, added] = frames_.try_emplace(std::move(key), static_cast<uint32_t>(trace_.frames.size()));
  if (added) trace_.frames.push_back(std::move(f));
  return it->second;
}

uint32_t TraceBuilder::stack(const std::vector<uint32_t>& frames) {
  const auto [it, added] = stacks_.try_emplace(frames, static_cast<uint32_t>(trace_.stacks.size()));
  if (added) trace_.stacks.push_back(frames);
  return it->second;
}

}  // namespace plumb::mem
