// What the two Ascend readers (the text export, ascend_reader.cc, and the SQLite export,
// ascend_db_reader.cc) share: the layout of a `*_ascend_pt` directory, the rank, the steps, the
// meaning of a device task, and an HCCL op turned into a CollectiveCall (docs/step.md, "Ascend").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/regex.h"
#include "step/readers.h"
#include "step/trace.h"

namespace plumb::step::ascend {

// `dir`/ASCEND_PROFILER_OUTPUT, or an Error naming `dir` when it has none.
std::filesystem::path profiler_output(const std::filesystem::path& dir);

// The rank: `rank_id` of dir/profiler_info_N.json (N is the rank when the file lacks rank_id),
// else what the directory's name says ("rank3_ascend_pt"), else an Error naming `dir`.
int rank_of(const std::filesystem::path& dir);

// The step number a host annotation's name gives under options.step_regex (whole-name match,
// first group), with the answers remembered: names repeat thousands of times in a trace.
class StepMatcher {
 public:
  explicit StepMatcher(const ReadOptions& options);
  std::optional<int64_t> step_of(std::string_view name);

 private:
  Regex regex_;
  std::unordered_map<std::string, std::optional<int64_t>> seen_;
};

// What a device task that is not an HCCL task does, from its task type and name:
// memory for memory copies and sets (MEMCPY_ASYNC, PCIE_DMA_SQE, ...), nullopt for
// synchronisation and markers (EVENT_RECORD, EVENT_WAIT, PROFILING_ENABLE, ...) and for anything
// else. Computation comes from the vendor's own list of computing tasks (kernel_details.csv,
// COMPUTE_TASK_INFO), which is what msprof-analyze's "Computing" sums.
bool is_memory_task(std::string_view task_type, std::string_view name);

// One HCCL op as a rank ran it ("hcom_allReduce__586_0_1", op type "hcom_allReduce_").
struct HcclOp {
  std::string name;
  std::string op_type;  // empty when the source gives only the name
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t count = -1;   // elements, as HCCL counts them; -1 unknown
  std::string dtype;    // "FP32", "BFP16", ...
  uint32_t stream = 0;
  std::string group;    // the communicator's id; empty unknown
  std::vector<int> group_ranks;
};

// The id msprof-analyze and the text export give a communicator ("@17148521525495523210" in
// communication.json): its double hash of the HCCL communicator name that the SQLite export and
// parallel_group_info use ("90.91.105.46%enp189s0f0_60000_0_1736410538306028").
std::string hccl_group_id(std::string_view comm_name);

// torch_npu's parallel_group_info (profiler_metadata.json; META_DATA in the SQLite export):
// HCCL communicator name → {"group_name", "group_rank", "global_ranks"}. Groups are keyed by
// hccl_group_id(); the world size is the size of "default_group" (or "hccl_world_group").
struct ParallelGroups {
  std::map<std::string, std::vector<int>> ranks_of_group;
  int world_size = -1;
};
// `info` is the JSON text of the object; what is not in that shape is skipped (the member is
// informational and its layout has changed between versions).
ParallelGroups parallel_groups(std::string_view info);

// A group's ranks: its global_ranks from parallel_group_info, else the ranks its links name in
// the communication matrix (the group's own numbering, which is the global one for the world
// group), else none.
std::vector<int> group_ranks(const std::string& group, const ParallelGroups& groups,
                             const std::map<std::string, std::set<int>>& linked);

// Bytes with nccl-tests' convention (trace.h) from HCCL's count, which is per rank: the buffer
// for allreduce/broadcast/reduce/send/recv; × the group size for allgather (the gathered
// output), reducescatter (the input of all ranks) and alltoall (the whole send buffer).
// 0 when the count, the dtype or a needed group size is unknown.
uint64_t hccl_bytes(CollectiveKind kind, int64_t count, std::string_view dtype,
                    size_t group_size);

// Appends the op's CollectiveCall and its communication DeviceSpan (zero-length ops are kept as
// calls only).
void add_hccl_op(RankTrace& trace, HcclOp op);

// Adds a compute or memory span; zero-length and reversed spans are dropped.
void add_span(RankTrace& trace, int64_t start_ns, int64_t end_ns, uint32_t stream,
              Activity activity);

// Sorts the steps by start.
void finish(RankTrace& trace);

}  // namespace plumb::step::ascend
