// An allocator trace of one device, whatever it was read from (a PyTorch or torch_npu snapshot,
// its JSON form, plumb's JSONL events): the events in order, the segments at the end, and the
// call stacks, interned. Readers fill it; the analyses only read it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace plumb::mem {

// The actions of PyTorch's CUDACachingAllocator trace (torch/cuda/memory.py, TraceEntry), plus
// torch_npu's workspace_snapshot.
enum class Action : uint8_t {
  kAlloc,
  kFreeRequested,  // the program freed it; the block waits for its streams
  kFreeCompleted,  // the allocator took it back
  kSegmentAlloc,   // cudaMalloc of a segment
  kSegmentFree,
  kSegmentMap,     // expandable segments: pages mapped into a segment
  kSegmentUnmap,
  kSnapshot,       // the snapshot was taken here
  kOom,            // an allocation failed: size asked, device_free what the driver still had
  kWorkspaceSnapshot,
};

const char* action_name(Action a);

inline constexpr const char* kStreamsMessage = "more than 65535 distinct streams; plumb reads at most that many";

inline constexpr uint32_t kNoStack = std::numeric_limits<uint32_t>::max();

// 32 bytes: a long trace holds tens of millions (a 2 GB snapshot, 34 million), so the rare
// fields live beside the events: the stream's value in Trace::streams, device_free (an oom's) in
// Trace::device_free.
struct Event {
  uint64_t addr = 0;
  uint64_t size = 0;
  double time_us = std::numeric_limits<double>::quiet_NaN();  // NaN: the trace has no times
  uint32_t stack = kNoStack;  // index into Trace::stacks
  uint16_t stream = 0;        // index into Trace::streams (0: stream 0)
  Action action = Action::kAlloc;
};
static_assert(sizeof(Event) == 32);

// An event's non-zero 'device_free' (what the driver still had at an oom).
struct DeviceFree {
  size_t event = 0;
  uint64_t bytes = 0;
};

struct Frame {
  std::string name;  // function
  std::string filename;
  int line = 0;
};

enum class BlockState { kActiveAllocated, kActivePendingFree, kInactive };

struct Block {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t requested_size = 0;
  BlockState state = BlockState::kInactive;
};

struct Segment {
  uint64_t addr = 0;
  uint64_t total_size = 0;
  int64_t stream = 0;
  bool large = true;       // segment_type "large" (20 MiB pool) or "small" (2 MiB)
  bool expandable = false;
  std::vector<Block> blocks;
};

struct Trace {
  std::string source;   // the file and its format, for messages
  int device = 0;
  std::vector<Event> events;
  std::vector<int64_t> streams{0};            // Event::stream's values, interned (0 first)
  std::vector<DeviceFree> device_free;        // by event index, ascending
  std::vector<Segment> segments;              // at the end of the trace (the snapshot)
  std::vector<Frame> frames;                  // interned
  std::vector<std::vector<uint32_t>> stacks;  // innermost first, indices into frames
  std::map<std::string, std::string> allocator_settings;
  bool has_time = false;  // events carry time_us (torch_npu traces do not)
  std::vector<size_t> step_marks;  // event indices where the trace itself says a step begins
  std::vector<uint32_t> event_lines;  // plumb.mem-events/1: the line of each event, for messages

  int64_t stream_of(const Event& e) const { return streams[e.stream]; }
  // The event's 'device_free' (0 when it has none).
  uint64_t device_free_of(size_t event) const;
};

// What readers fill a trace with: frames and stacks are interned as they come.
class TraceBuilder {
 public:
  Trace& trace() { return trace_; }
  // The index of the frame (added when new) in Trace::frames.
  uint32_t frame(Frame frame);
  // The index of the stack (innermost first; added when new) in Trace::stacks.
  uint32_t stack(const std::vector<uint32_t>& frames);
  // The index of the stream's value in Trace::streams (added when new); nullopt past 65,535
  // distinct streams (kStreamsMessage says so; the reader names where).
  std::optional<uint16_t> stream(int64_t value);
  // Records a non-zero 'device_free' for the event about to be pushed.
  void device_free(uint64_t bytes) {
    if (bytes != 0) trace_.device_free.push_back({trace_.events.size(), bytes});
  }
  Trace finish() { return std::move(trace_); }
  // Stacks and frames by the identity of the document node they came from: snapshots share one
  // frames list per call site, so each is converted once. Absent: not seen yet.
  const std::unordered_map<uint64_t, uint32_t>& stack_by_node() const { return stack_by_node_; }
  const std::unordered_map<uint64_t, uint32_t>& frame_by_node() const { return frame_by_node_; }
  void remember_stack(uint64_t node, uint32_t id);
  void remember_frame(uint64_t node, uint32_t id);
  // Node ids from `first` on are reused from now on (a streaming reader dropped them).
  void forget_nodes_from(uint64_t first);

 private:
  Trace trace_;
  std::unordered_map<uint64_t, uint32_t> stack_by_node_, frame_by_node_;
  std::vector<uint64_t> recent_nodes_;  // remembered since the last forget_nodes_from
  std::unordered_map<std::string, uint32_t> frames_;
  std::unordered_map<int64_t, uint16_t> streams_;
  std::map<std::vector<uint32_t>, uint32_t> stacks_;
};

}  // namespace plumb::mem
