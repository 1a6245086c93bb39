#include "mem/trace.h"

#include <algorithm>

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

std::optional<uint16_t> TraceBuilder::stream(int64_t value) {
  if (value == 0) return 0;
  const auto it = streams_.find(value);
  if (it != streams_.end()) return it->second;
  if (trace_.streams.size() > UINT16_MAX) return std::nullopt;
  const auto id = static_cast<uint16_t>(trace_.streams.size());
  trace_.streams.push_back(value);
  streams_.emplace(value, id);
  return id;
}

void TraceBuilder::remember_stack(uint64_t node, uint32_t id) {
  stack_by_node_.emplace(node, id);
  recent_nodes_.push_back(node);
}

void TraceBuilder::remember_frame(uint64_t node, uint32_t id) {
  frame_by_node_.emplace(node, id);
  recent_nodes_.push_back(node);
}

void TraceBuilder::forget_nodes_from(uint64_t first) {
  for (const uint64_t node : recent_nodes_) {
    if (node < first) continue;
    stack_by_node_.erase(node);
    frame_by_node_.erase(node);
  }
  recent_nodes_.clear();
}

uint64_t Trace::device_free_of(size_t event) const {
  const auto it = std::lower_bound(device_free.begin(), device_free.end(), event,
                                   [](const DeviceFree& d, size_t i) { return d.event < i; });
  return it != device_free.end() && it->event == event ? it->bytes : 0;
}

}  // namespace plumb::mem
