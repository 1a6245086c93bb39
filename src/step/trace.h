// What one rank's profiler trace says about its device: plain data filled by a reader
// (kineto_reader, ascend_reader) and read by the analyses (breakdown, collectives). No printing.
// All times are integer nanoseconds on the absolute (epoch) clock, so ranks line up and Ascend's
// 19-digit microsecond strings lose nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plumb::step {

inline constexpr int64_t kNsPerUs = 1000;

// What a span of device time was doing (docs/step.md, "Classification").
enum class Activity : uint8_t { kCompute, kCommunication, kMemory };

// The collective a communication kernel or HCCL task belongs to.
enum class CollectiveKind : uint8_t {
  kUnknown,  // communication whose kind no source names
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kSendRecv,  // send, recv, batched point-to-point
  kBroadcast,
  kReduce,
  kBarrier,
};

// One span of work on one device stream. For communication, `call` indexes RankTrace::calls.
struct DeviceSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // > start_ns; zero-length spans are not kept
  uint32_t stream = 0;
  Activity activity = Activity::kCompute;
  int32_t call = -1;
};

// One collective call as this rank ran it: the device time of all its kernels/tasks, what it
// moved, and the group it ran on. Calls are kept in the order this rank issued them.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kUnknown;
  int64_t start_ns = 0;  // first kernel/task start on the device
  int64_t end_ns = 0;    // last kernel/task end
  // Message size with nccl-tests' convention (what `plumb comm` calls size): allreduce, broadcast,
  // reduce, send/recv: the buffer; allgather: the gathered output; reducescatter: the input of all
  // ranks; alltoall: one rank's whole send buffer. 0 when the trace does not say.
  uint64_t bytes = 0;
  // The process group: name ("0", HCCL group id) and its global ranks in group order; both empty
  // when the trace does not say (then calls are matched across all ranks of the set).
  std::string group;
  std::vector<int> group_ranks;
  std::string name;  // kernel, CPU op or HCCL op name, for display
  // The process group's sequence number of this collective (PyTorch's `Seq` argument on the NCCL
  // kernel or its record_param_comms op); -1 when the trace does not say.
  int64_t seq = -1;
};

// One training step on this rank: `ProfilerStep#N` (or --step-regex) on the host.
struct StepSpan {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Device events a reader dropped because their times cannot be true: a negative time or
// duration, an end before its start (docs/step.md, "Damaged input"). One entry per kind of
// damage; check_trace_set() turns them into notes saying which steps they fell in.
struct DroppedEvents {
  std::string why;                 // "a negative 'dur'": completes "dropped for ..."
  std::string first;               // where the first one is: "event 1234 ('ncclKernel...')"
  std::vector<int64_t> starts_ns;  // each one's start, absolute as the spans' (may be negative)
};

struct RankTrace {
  std::string source;  // the file or directory read, for messages
  std::string format;  // "kineto", "pytorch-cpu" (no device events), "ascend-text", "ascend-db"
  int rank = -1;
  int world_size = -1;
  std::string host;  // when the trace names it; empty otherwise
  // Times count from this rank's own profiler start, not on a clock the ranks share (PyTorch's
  // legacy profiler); analyze() lines such ranks up by their collectives' ends (clocks.h).
  bool own_clock = false;
  std::vector<StepSpan> steps;     // sorted by start
  std::vector<DeviceSpan> spans;   // any order
  std::vector<CollectiveCall> calls;
  uint64_t bytes_read = 0;  // uncompressed input size, for the progress line and benchmark
  std::vector<DroppedEvents> dropped;  // damaged device events, not in `spans` or `calls`
};

// Counts one dropped device event starting at `start_ns` under `why`; `where()` (a string) is
// called only for the first of its kind.
template <typename Where>
void drop_event(std::vector<DroppedEvents>& dropped, std::string_view why, int64_t start_ns,
                Where&& where) {
  for (DroppedEvents& entry : dropped) {
    if (entry.why == why) {
      entry.starts_ns.push_back(start_ns);
      return;
    }
  }
  dropped.push_back(DroppedEvents{std::string(why), where(), {start_ns}});
}

template <typename Where>
void drop_event(RankTrace& trace, std::string_view why, int64_t start_ns, Where&& where) {
  drop_event(trace.dropped, why, start_ns, std::forward<Where>(where));
}

}  // namespace plumb::step
