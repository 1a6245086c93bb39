// The Ascend PyTorch Profiler text export (docs/step.md, "Ascend"): a `*_ascend_pt` directory with
// profiler_info_N.json (the rank) and ASCEND_PROFILER_OUTPUT/ holding
//   kernel_details.csv        the computing tasks (what msprof-analyze's "Computing" sums),
//   trace_view.json           the steps (ProfilerStep#N on the host), memory copies on the
//                             "Ascend Hardware" streams, and the HCCL ops on the "HCCL" process's
//                             "Group N Communication" threads (name, count, data_type),
//   communication.json        each op's communicator ("hcom_allReduce__586_0_1@<group id>"),
//   communication_matrix.json the ranks of each communicator (optional, like the previous one).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <array>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>

#include "common/error.h"
#include "common/input_file.h"
#include "common/json.h"
#include "step/ascend_csv.h"
#include "step/ascend_reader.h"
#include "step/chrome_trace.h"
#include "step/classify.h"
#include "step/trace_input.h"

namespace plumb::step {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A small JSON file of the export, parsed whole; a malformed one is an Error naming it.
json read_json_file(const fs::path& path, std::string_view what) {
  std::string text = read_whole_file(path.string(), what);
  std::string problem;
  json doc = parse_json_or_discarded(text, problem);
  if (doc.is_discarded()) throw Error(fmt::format("{}: {}; expected {}", path.string(), problem, what));
  return doc;
}

}  // namespace

namespace ascend {
namespace {

// profiler_info_N.json's rank_id (or its N), nullopt without such a file.
std::optional<int> rank_from_profiler_info(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("profiler_info") || !name.ends_with(".json")) continue;
    json info = read_json_file(entry.path(), "torch_npu's profiler_info JSON");
    if (info.is_object() && info.contains("rank_id") && info["rank_id"].is_number_integer()) {
      return info["rank_id"].get<int>();
    }
    int rank = -1;
    std::string_view digits = std::string_view(name).substr(std::string_view("profiler_info_").size());
    std::from_chars(digits.data(), digits.data() + digits.size(), rank);
    if (rank >= 0) return rank;
  }
  return std::nullopt;
}

}  // namespace

fs::path profiler_output(const fs::path& dir) {
  fs::path out = dir / "ASCEND_PROFILER_OUTPUT";
  std::error_code ec;
  if (!fs::is_directory(out, ec)) {
    throw Error(fmt::format("{}: no ASCEND_PROFILER_OUTPUT folder; expected a torch_npu "
                            "profiler directory (*_ascend_pt) after its export finished",
                            dir.string()));
  }
  return out;
}

int rank_of(const fs::path& dir) {
  if (std::optional<int> rank = rank_from_profiler_info(dir)) return *rank;
  fs::path name = dir.filename().empty() ? dir.parent_path().filename() : dir.filename();
  int rank = rank_from_file_name(name.string());
  if (rank >= 0) return rank;
  throw Error(fmt::format("{}: no rank: no profiler_info_N.json with rank_id, and the directory "
                          "name says none (expected e.g. rank3_ascend_pt)",
                          dir.string()));
}

namespace {

// options.step_regex compiled, or an Error naming it: a bad pattern, or one without the group
// that holds the step number.
Regex compiled_step_regex(const std::string& pattern) {
  Regex regex(pattern, "--step-regex");
  if (regex.captures() < 1) {
    throw Error(fmt::format("--step-regex '{}': expected a group holding the step number, as in "
                            "'ProfilerStep#(\\d+)'",
                            pattern));
  }
  return regex;
}

}  // namespace

StepMatcher::StepMatcher(const ReadOptions& options)
    : regex_(compiled_step_regex(options.step_regex)) {}

std::optional<int64_t> StepMatcher::step_of(std::string_view name) {
  std::string key(name);
  auto it = seen_.find(key);
  if (it != seen_.end()) return it->second;
  std::optional<int64_t> step;
  std::array<std::string_view, 2> match;  // the name, the step number
  if (regex_.match(key, match) && match[1].data() != nullptr) {
    const char* last = match[1].data() + match[1].size();
    int64_t number = 0;
    auto [end, ec] = std::from_chars(match[1].data(), last, number);
    if (ec == std::errc() && end == last) step = number;
  }
  seen_.emplace(std::move(key), step);
  return step;
}

bool is_memory_task(std::string_view task_type, std::string_view name) {
  // Task types of the DMA engines copying for the host (PCIe) or on the device (SDMA_SQE; HCCL's
  // own SDMA tasks are "SDMA" and belong to their op), and the runtime's memory task names.
  static constexpr std::array<std::string_view, 2> kMemoryTypes{"PCIE_DMA_SQE", "SDMA_SQE"};
  static constexpr std::array<std::string_view, 4> kMemoryNames{"MEMCPY_ASYNC", "MEMCPY",
                                                                "MEMSET_ASYNC", "MEMSET"};
  return std::find(kMemoryTypes.begin(), kMemoryTypes.end(), task_type) != kMemoryTypes.end() ||
         std::find(kMemoryNames.begin(), kMemoryNames.end(), name) != kMemoryNames.end();
}

uint64_t hccl_bytes(CollectiveKind kind, int64_t count, std::string_view dtype,
                    size_t group_size) {
  std::optional<size_t> element = dtype_bytes(dtype);
  if (count < 0 || !element) return 0;
  uint64_t buffer = static_cast<uint64_t>(count) * *element;
  switch (kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return buffer * group_size;  // 0 when the group size is unknown
    case CollectiveKind::kUnknown:
    case CollectiveKind::kBarrier:
      return 0;
    default:
      return buffer;
  }
}

std::string hccl_group_id(std::string_view comm_name) {
  // msprof-analyze's double_hash: two 32-bit polynomial hashes (primes 29 and 131) side by side.
  constexpr uint64_t kPrimeHigh = 29;
  constexpr uint64_t kPrimeLow = 131;
  constexpr uint64_t kMask = 0xFFFFFFFFu;
  uint64_t high = 0;
  uint64_t low = 0;
  for (unsigned char c : comm_name) {
    high = (high * kPrimeHigh + c) & kMask;
    low = (low * kPrimeLow + c) & kMask;
  }
  return std::to_string((high << 32) | low);
}

ParallelGroups parallel_groups(std::string_view info) {
  ParallelGroups groups;
  std::string problem;  // groups the export does not describe are left out, as before
  json doc = parse_json_or_discarded(info, problem);
  if (doc.is_string()) doc = parse_json_or_discarded(doc.get<std::string>(), problem);
  if (!doc.is_object()) return groups;
  for (const auto& [comm_name, group] : doc.items()) {
    if (!group.is_object() || !group.contains("global_ranks")) continue;
    const json& ranks = group["global_ranks"];
    if (!ranks.is_array()) continue;
    std::vector<int> global;
    for (const json& rank : ranks) {
      if (rank.is_number_integer()) global.push_back(rank.get<int>());
    }
    auto named = group.find("group_name");
    const std::string name = named != group.end() && named->is_string() ? named->get<std::string>() : "";
    if (name == "default_group" || name == "hccl_world_group") {
      groups.world_size = static_cast<int>(global.size());
    }
    groups.ranks_of_group[hccl_group_id(comm_name)] = std::move(global);
  }
  return groups;
}

std::vector<int> group_ranks(const std::string& group, const ParallelGroups& groups,
                             const std::map<std::string, std::set<int>>& linked) {
  if (auto global = groups.ranks_of_group.find(group); global != groups.ranks_of_group.end()) {
    return global->second;
  }
  if (auto links = linked.find(group); links != linked.end()) {
    return {links->second.begin(), links->second.end()};
  }
  return {};
}

void add_span(RankTrace& trace, int64_t start_ns, int64_t end_ns, uint32_t stream,
              Activity activity) {
  if (end_ns <= start_ns) return;
  trace.spans.push_back(DeviceSpan{start_ns, end_ns, stream, activity, -1});
}

void add_hccl_op(RankTrace& trace, HcclOp op) {
  CollectiveCall call;
  call.kind = kind_from_op_name(op.op_type.empty() ? op.name : op.op_type)
                  .value_or(CollectiveKind::kUnknown);
  call.start_ns = op.start_ns;
  call.end_ns = op.end_ns;
  call.bytes = hccl_bytes(call.kind, op.count, op.dtype, op.group_ranks.size());
  call.group = std::move(op.group);
  call.group_ranks = std::move(op.group_ranks);
  call.name = std::move(op.name);
  if (op.end_ns > op.start_ns) {
    trace.spans.push_back(DeviceSpan{op.start_ns, op.end_ns, op.stream, Activity::kCommunication,
                                     static_cast<int32_t>(trace.calls.size())});
  }
  trace.calls.push_back(std::move(call));
}

void finish(RankTrace& trace) {
  std::sort(trace.steps.begin(), trace.steps.end(),
            [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
}

}  // namespace ascend

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ascend::HcclOp;

// A file the text export always writes, or an Error naming it.
fs::path required_file(const fs::path& out, const char* name) {
  fs::path file = out / name;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    throw Error(fmt::format("{}: missing; expected torch_npu's text export (export_type text) "
                            "to have written it",
                            file.string()));
  }
  return file;
}

// The computing tasks of kernel_details.csv: every row but the HCCL ops' (Accelerator Core
// "HCCL", older exports only), which trace_view.json gives with their counts.
void add_kernel_details(RankTrace& trace, const fs::path& out) {
  CsvTable table = CsvTable::read(required_file(out, "kernel_details.csv"));
  const size_t start = table.column("Start Time(us)");
  const size_t duration = table.column("Duration(us)");
  const size_t core = table.column("Accelerator Core");
  const std::optional<size_t> stream = table.find_column("Stream ID");
  table.for_each_row([&](const CsvTable::Row& row) {
    if (table.cell(row, core) == "HCCL") return;
    int64_t begin = cell_us_to_ns(table, row, start, "Start Time(us)");
    int64_t length = cell_us_to_ns(table, row, duration, "Duration(us)");
    uint32_t stream_id = 0;
    if (stream) {
      std::string_view cell = table.cell(row, *stream);
      std::from_chars(cell.data(), cell.data() + cell.size(), stream_id);
    }
    ascend::add_span(trace, begin, begin + length, stream_id, Activity::kCompute);
  });
  trace.bytes_read += table.size();
}

// What trace_view.json's events say, gathered in one pass; which process and thread an event is
// on is known only at the end (the metadata events sit anywhere in the array).
struct TraceViewScan {
  struct Task {
    int64_t pid = 0;
    int64_t tid = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t stream = -1;
    bool memory = false;
    int32_t op = -1;  // index into ops when the event carries an HCCL op's count
  };
  std::map<int64_t, std::string> processes;
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  std::vector<Task> tasks;
  std::vector<HcclOp> ops;
};

bool is_host_annotation(std::string_view cat) {
  return cat == "cpu_op" || cat == "user_annotation";
}

void on_trace_event(const ChromeEvent& event, TraceViewScan& scan, ascend::StepMatcher& steps,
                    RankTrace& trace) {
  if (event.ph == 'M') {
    if (event.name == "process_name") scan.processes[event.pid] = event.process_or_thread_name;
    if (event.name == "thread_name") {
      scan.threads[{event.pid, event.tid}] = event.process_or_thread_name;
    }
    return;
  }
  if (event.ph != 'X' || event.dur_ns < 0) return;
  const int64_t end = event.ts_ns + event.dur_ns;
  if (is_host_annotation(event.cat)) {
    if (std::optional<int64_t> step = steps.step_of(event.name)) {
      trace.steps.push_back(StepSpan{*step, event.ts_ns, end});
    }
    return;
  }
  // Kept: memory tasks (device streams), HCCL ops (they carry a count) and HCCL tasks (a
  // "stream id" but no "Task Type"); computing tasks come from kernel_details.csv.
  const ChromeArgs& args = event.args;
  const bool memory = ascend::is_memory_task(args.task_type, event.name);
  const bool hccl_task = args.task_type.empty() && args.stream >= 0;
  if (!memory && !hccl_task && args.count < 0) return;
  TraceViewScan::Task task{event.pid, event.tid, event.ts_ns, end, args.stream, memory, -1};
  if (args.count >= 0) {
    task.op = static_cast<int32_t>(scan.ops.size());
    scan.ops.push_back(HcclOp{std::string(event.name), "", event.ts_ns, end, args.count,
                              std::string(args.dtype), 0, "", {}});
  }
  scan.tasks.push_back(task);
}

bool is_group_thread(std::string_view name) {
  return name.starts_with("Group ") && name.ends_with(" Communication");
}

// The stream an op ran on: that of the first HCCL task ("Plane N" threads) starting inside it.
uint32_t op_stream(const HcclOp& op, const std::vector<std::pair<int64_t, int64_t>>& plane_starts) {
  auto it = std::lower_bound(plane_starts.begin(), plane_starts.end(),
                             std::pair<int64_t, int64_t>{op.start_ns, -1});
  if (it == plane_starts.end() || it->first >= op.end_ns) return 0;
  return static_cast<uint32_t>(it->second);
}

// Memory copies on "Ascend Hardware"; HCCL ops on the "HCCL" process's group threads.
std::vector<HcclOp> sort_trace_view(TraceViewScan& scan, RankTrace& trace) {
  auto process = [&](int64_t pid) -> std::string_view {
    auto it = scan.processes.find(pid);
    return it == scan.processes.end() ? std::string_view() : std::string_view(it->second);
  };
  std::vector<std::pair<int64_t, int64_t>> plane_starts;
  std::vector<HcclOp> ops;
  for (const TraceViewScan::Task& task : scan.tasks) {
    std::string_view where = process(task.pid);
    if (where == "Ascend Hardware" && task.memory) {
      ascend::add_span(trace, task.start_ns, task.end_ns,
                       static_cast<uint32_t>(std::max<int64_t>(task.stream, 0)), Activity::kMemory);
    } else if (where == "HCCL" && is_group_thread(scan.threads[{task.pid, task.tid}])) {
      if (task.op >= 0) ops.push_back(std::move(scan.ops[static_cast<size_t>(task.op)]));
    } else if (where == "HCCL" && task.stream >= 0) {
      plane_starts.emplace_back(task.start_ns, task.stream);
    }
  }
  std::sort(plane_starts.begin(), plane_starts.end());
  for (HcclOp& op : ops) op.stream = op_stream(op, plane_starts);
  std::sort(ops.begin(), ops.end(),
            [](const HcclOp& a, const HcclOp& b) { return a.start_ns < b.start_ns; });
  return ops;
}

// trace_view.json in one streaming pass (chrome_trace.h); its size counts as read.
void scan_trace_view(const fs::path& path, const std::function<void(const ChromeEvent&)>& on_event,
                     RankTrace& trace) {
  TraceText text = read_trace_text(path.string());
  trace.bytes_read += text.size;
  scan_chrome_trace(text, on_event);
}

// communication.json: "stepN" → "collective"/"p2p" → "<op name>@<group id>" → ...
// communication_matrix.json: the same keys with "<group op>@<group id>" → "src-dst" links; the
// ranks named in a group's collective links are its ranks.
struct Communicators {
  std::map<std::string, std::string> group_of_op;
  std::map<std::string, std::set<int>> linked_ranks;
  ascend::ParallelGroups parallel;
};

template <typename Fn>
void for_each_keyed_op(const json& doc, const char* section, Fn fn) {
  if (!doc.is_object()) return;
  for (const auto& [step, kinds] : doc.items()) {
    if (!kinds.is_object() || !kinds.contains(section) || !kinds[section].is_object()) continue;
    for (const auto& [key, value] : kinds[section].items()) {
      size_t at = key.rfind('@');
      if (at != std::string::npos) fn(key.substr(0, at), key.substr(at + 1), value);
    }
  }
}

Communicators read_communicators(const fs::path& dir, const fs::path& out) {
  Communicators found;
  std::error_code ec;
  if (fs::exists(dir / "profiler_metadata.json", ec)) {
    json doc = read_json_file(dir / "profiler_metadata.json", "torch_npu's profiler_metadata.json");
    if (doc.is_object() && doc.contains("parallel_group_info")) {
      found.parallel = ascend::parallel_groups(doc["parallel_group_info"].dump());
    }
  }
  if (fs::exists(out / "communication.json", ec)) {
    json doc = read_json_file(out / "communication.json", "torch_npu's communication.json");
    for (const char* section : {"collective", "p2p"}) {
      for_each_keyed_op(doc, section, [&](const std::string& op, const std::string& group,
                                          const json&) { found.group_of_op[op] = group; });
    }
  }
  if (fs::exists(out / "communication_matrix.json", ec)) {
    json doc = read_json_file(out / "communication_matrix.json",
                              "torch_npu's communication_matrix.json");
    for_each_keyed_op(doc, "collective", [&](const std::string&, const std::string& group,
                                             const json& links) {
      if (!links.is_object()) return;
      for (const auto& [link, value] : links.items()) {
        int src = -1;
        int dst = -1;
        if (std::sscanf(link.c_str(), "%d-%d", &src, &dst) != 2) continue;
        if (src >= 0) found.linked_ranks[group].insert(src);
        if (dst >= 0) found.linked_ranks[group].insert(dst);
      }
    });
  }
  return found;
}

void add_ops(RankTrace& trace, std::vector<HcclOp> ops, const Communicators& communicators) {
  for (HcclOp& op : ops) {
    auto group = communicators.group_of_op.find(op.name);
    if (group != communicators.group_of_op.end()) {
      op.group = group->second;
      op.group_ranks =
          ascend::group_ranks(op.group, communicators.parallel, communicators.linked_ranks);
    }
    ascend::add_hccl_op(trace, std::move(op));
  }
}

}  // namespace

RankTrace read_ascend_text(const fs::path& dir, const ReadOptions& options) {
  RankTrace trace;
  trace.source = dir.string();
  trace.format = "ascend-text";
  fs::path out = ascend::profiler_output(dir);
  trace.rank = ascend::rank_of(dir);
  add_kernel_details(trace, out);
  TraceViewScan scan;
  ascend::StepMatcher steps(options);
  scan_trace_view(
      required_file(out, "trace_view.json"),
      [&](const ChromeEvent& event) { on_trace_event(event, scan, steps, trace); }, trace);
  const Communicators communicators = read_communicators(dir, out);
  trace.world_size = communicators.parallel.world_size;
  add_ops(trace, sort_trace_view(scan, trace), communicators);
  ascend::finish(trace);
  return trace;
}

}  // namespace plumb::step
