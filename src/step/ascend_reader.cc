// The Ascend PyTorch Profiler text export (docs/step.md, "Ascend"): a `*_ascend_pt` directory with
// profiler_info_N.json (the rank) and ASCEND_PROFILER_OUTPUT/ holding
//   kernel_details.csv        the computing tasks (what msprof-analyze's "Computing" sums),
//   trace_view.json           the steps (ProfilerStep#N on the host), memory copies on the
//                             "Ascend Hardware" streams, and the HCCL ops on the "HCCL" process's
//                             "Group N Communication" threads (name, count, data_type),
//   communication.json        each op's communicator ("hcom_allReduce__586_0_1@<group id>"),
//   communication_matrix.json the ranks of each communicator (optional, like the previous one).
// Damage (docs/step.md, "Damaged input"): a kernel_details.csv cut inside a row, or ending
// before the computing tasks trace_view.json shows in the steps, is an Error; so is a time of
// the wrong type on a trace_view.json event used (ts a number or a string holding one, dur a
// number) and a step with a negative time. A task or op with a negative start or duration is
// dropped and counted (RankTrace::dropped).
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

// Where kernel_details.csv ends: its latest task start (nullopt without rows) and that row's
// line, to check that the file reaches as far as trace_view.json (check_kernel_details_end).
struct CsvEnd {
  std::optional<int64_t> last_start_ns;
  int line = 0;
};

// The computing tasks of kernel_details.csv: every row but the HCCL ops' (Accelerator Core
// "HCCL", older exports only), which trace_view.json gives with their counts. A row with a
// negative start or duration is dropped and counted (RankTrace::dropped).
CsvEnd add_kernel_details(RankTrace& trace, const fs::path& out) {
  CsvTable table = CsvTable::read(required_file(out, "kernel_details.csv"));
  const size_t start = table.column("Start Time(us)");
  const size_t duration = table.column("Duration(us)");
  const size_t core = table.column("Accelerator Core");
  const std::optional<size_t> stream = table.find_column("Stream ID");
  CsvEnd end;
  table.for_each_row([&](const CsvTable::Row& row) {
    int64_t begin = cell_signed_us_to_ns(table, row, start, "Start Time(us)");
    if (!end.last_start_ns || begin > *end.last_start_ns) end = {begin, row.line};
    if (table.cell(row, core) == "HCCL") return;
    int64_t length = cell_signed_us_to_ns(table, row, duration, "Duration(us)");
    auto where = [&] { return fmt::format("kernel_details.csv:{}", row.line); };
    if (begin < 0) return drop_event(trace, "a negative 'Start Time(us)'", begin, where);
    if (length < 0) return drop_event(trace, "a negative 'Duration(us)'", begin, where);
    uint32_t stream_id = 0;
    if (stream) {
      std::string_view cell = table.cell(row, *stream);
      std::from_chars(cell.data(), cell.data() + cell.size(), stream_id);
    }
    int64_t finish = 0;
    if (__builtin_add_overflow(begin, length, &finish)) {
      throw Error(fmt::format("{}:{}: 'Start Time(us)' + 'Duration(us)' is out of the range of "
                              "int64 nanoseconds",
                              table.source(), row.line));
    }
    ascend::add_span(trace, begin, finish, stream_id, Activity::kCompute);
  });
  trace.bytes_read += table.size();
  return end;
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
    int32_t op = -1;       // index into ops when the event carries an HCCL op's count
    int32_t damage = -1;   // index into damaged: its times cannot be true
  };
  struct Damage {
    std::string why;    // "a negative 'dur'"
    std::string where;  // "trace_view.json event 77 ('MEMCPY_ASYNC')"
  };
  std::string source;  // trace_view.json's path, for messages
  std::map<int64_t, std::string> processes;
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  std::vector<Task> tasks;
  std::vector<HcclOp> ops;
  std::vector<Damage> damaged;
  // Computing tasks (kComputeTaskTypes) by process, to check kernel_details.csv reaches as far.
  std::vector<std::pair<int64_t, int64_t>> compute_starts;  // pid, start
};

// The Task Types of trace_view.json's "Ascend Hardware" tasks that kernel_details.csv lists as
// computing tasks (checked on the fixtures: every such task in a step has its row).
constexpr std::array<std::string_view, 5> kComputeTaskTypes{"AI_CORE", "AI_VECTOR_CORE",
                                                            "MIX_AIC", "MIX_AIV", "AI_CPU"};

bool is_host_annotation(std::string_view cat) {
  return cat == "cpu_op" || cat == "user_annotation";
}

// A step's span, or an Error naming the event when its times are not usable: a step is what
// every figure is for.
StepSpan step_span(const ChromeEvent& event, int64_t step, const std::string& source) {
  require_times(event, source, true, StringTs::kAccepted);
  if (event.ts_ns < 0) {
    fail_event(event, source, fmt::format("'ts' is negative ({} µs)", ns_as_us(event.ts_ns)));
  }
  if (event.dur_ns < 0) {
    fail_event(event, source, fmt::format("'dur' is negative ({} µs)", ns_as_us(event.dur_ns)));
  }
  int64_t end = 0;
  if (__builtin_add_overflow(event.ts_ns, event.dur_ns, &end)) {
    fail_event(event, source, "'ts' + 'dur' is out of the range of int64 nanoseconds");
  }
  return StepSpan{step, event.ts_ns, end};
}

// Why a device task's times cannot be true; nullptr when they can.
const char* damage_of(const ChromeEvent& event) {
  if (event.ts_ns < 0) return "a negative 'ts'";
  if (event.dur_ns < 0) return "a negative 'dur'";
  return nullptr;
}

int64_t task_end(const ChromeEvent& event, const TraceViewScan& scan) {
  int64_t end = 0;
  if (__builtin_add_overflow(event.ts_ns, event.dur_ns, &end)) {
    fail_event(event, scan.source, "'ts' + 'dur' is out of the range of int64 nanoseconds");
  }
  return end;
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
  if (event.ph != 'X') return;
  if (is_host_annotation(event.cat)) {
    if (std::optional<int64_t> step = steps.step_of(event.name)) {
      trace.steps.push_back(step_span(event, *step, scan.source));
    }
    return;
  }
  // Kept: memory tasks (device streams), HCCL ops (they carry a count) and HCCL tasks (a
  // "stream id" but no "Task Type"); computing tasks come from kernel_details.csv.
  const ChromeArgs& args = event.args;
  if (args.count < 0 && std::find(kComputeTaskTypes.begin(), kComputeTaskTypes.end(),
                                  args.task_type) != kComputeTaskTypes.end()) {
    require_times(event, scan.source, false, StringTs::kAccepted);
    scan.compute_starts.emplace_back(event.pid, event.ts_ns);
    return;
  }
  const bool memory = ascend::is_memory_task(args.task_type, event.name);
  const bool hccl_task = args.task_type.empty() && args.stream >= 0;
  if (!memory && !hccl_task && args.count < 0) return;
  require_times(event, scan.source, true, StringTs::kAccepted);
  const int64_t end = task_end(event, scan);
  TraceViewScan::Task task{event.pid, event.tid, event.ts_ns, end, args.stream, memory, -1, -1};
  if (const char* why = damage_of(event)) {
    task.damage = static_cast<int32_t>(scan.damaged.size());
    scan.damaged.push_back({why, "trace_view.json " + describe_event(event)});
  }
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
    const bool memory = where == "Ascend Hardware" && task.memory;
    const bool op = where == "HCCL" && is_group_thread(scan.threads[{task.pid, task.tid}]);
    if (task.damage >= 0) {  // dropped; counted when it would have been device time
      const TraceViewScan::Damage& damage = scan.damaged[static_cast<size_t>(task.damage)];
      if (memory || (op && task.op >= 0)) {
        drop_event(trace, damage.why, task.start_ns, [&] { return damage.where; });
      }
    } else if (memory) {
      ascend::add_span(trace, task.start_ns, task.end_ns,
                       static_cast<uint32_t>(std::max<int64_t>(task.stream, 0)), Activity::kMemory);
    } else if (op) {
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

// "step 50", "steps 50, 51, 52, 53, 54, ...": at most kStepsShown numbers.
std::string step_names(const std::set<int64_t>& steps) {
  constexpr size_t kStepsShown = 5;
  std::vector<int64_t> shown(steps.begin(), steps.end());
  const bool more = shown.size() > kStepsShown;
  if (more) shown.resize(kStepsShown);
  return fmt::format("step{} {}{}", steps.size() == 1 ? "" : "s", fmt::join(shown, ", "),
                     more ? ", ..." : "");
}

// kernel_details.csv cut at a row boundary still parses, but ends before the computing tasks
// that trace_view.json's "Ascend Hardware" shows inside the steps: an Error naming both.
void check_kernel_details_end(const CsvEnd& end, const TraceViewScan& scan,
                              const RankTrace& trace, const fs::path& csv) {
  auto hardware = std::find_if(scan.processes.begin(), scan.processes.end(),
                               [](const auto& p) { return p.second == "Ascend Hardware"; });
  if (hardware == scan.processes.end()) return;
  size_t after = 0;
  int64_t last = 0;
  std::set<int64_t> steps;
  for (const auto& [pid, task_start] : scan.compute_starts) {
    const int64_t start = task_start;  // a structured binding: clang cannot capture it yet
    if (pid != hardware->first || (end.last_start_ns && start <= *end.last_start_ns)) continue;
    auto step = std::find_if(trace.steps.begin(), trace.steps.end(), [&](const StepSpan& s) {
      return s.start_ns <= start && start < s.end_ns;
    });
    if (step == trace.steps.end()) continue;
    ++after;
    last = std::max(last, start);
    steps.insert(step->step);
  }
  if (after == 0) return;
  std::string ends =
      end.last_start_ns
          ? fmt::format("its last row (line {}) starts at {} µs, but trace_view.json has {} "
                        "computing tasks after it",
                        end.line, ns_as_us(*end.last_start_ns), after)
          : fmt::format("it holds no rows, but trace_view.json has {} computing tasks", after);
  throw Error(fmt::format("{}: ends before its trace: {} in {}, the last at {} µs; the file was "
                          "cut short or belongs to another run (export the profile again)",
                          csv.string(), ends, step_names(steps), ns_as_us(last)));
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
  const CsvEnd csv_end = add_kernel_details(trace, out);
  TraceViewScan scan;
  scan.source = required_file(out, "trace_view.json").string();
  ascend::StepMatcher steps(options);
  scan_trace_view(
      scan.source, [&](const ChromeEvent& event) { on_trace_event(event, scan, steps, trace); },
      trace);
  const Communicators communicators = read_communicators(dir, out);
  trace.world_size = communicators.parallel.world_size;
  add_ops(trace, sort_trace_view(scan, trace), communicators);
  ascend::finish(trace);
  check_kernel_details_end(csv_end, scan, trace, out / "kernel_details.csv");
  return trace;
}

}  // namespace plumb::step
