// Reading one rank's PyTorch profiler (Kineto) trace: what its device did, its collectives and
// its steps. One pass of the Chrome-trace scanner collects compact records (events may come in
// any order); the links between them are resolved after the pass.
//
// Rules (docs/step.md, "Reading Kineto traces"):
// - Device spans: `ph: X` events of cat `kernel` are computation, except NCCL kernels
//   (ncclKernel_*, ncclDevKernel_*: is_nccl_kernel) which are communication; cat `gpu_memcpy`
//   and `gpu_memset` are memory. The stream is args.stream (else tid). Zero-length spans are
//   dropped. Everything else (cuda_runtime, cuda_driver, gpu_user_annotation, cpu_op, flows) is
//   host-side and is not device time.
// - Times: ts/dur µs → integer ns from their decimal text; absolute = ts + baseTimeNanoseconds
//   when the file has it (so ranks line up), else ts as written.
// - Damage (docs/step.md, "Damaged input"): every event used must write ts (and dur) as JSON
//   numbers, else an error names the event. A device event with a negative dur or a negative
//   absolute start is dropped and counted in RankTrace::dropped (a note); a step or collective
//   host op with a negative dur, or a step before 1970, is an error.
// - Collective calls: one per NCCL kernel, numbered in order of their start on the device (the
//   order this rank issued them on its communication streams). The kind comes from, in order:
//   1. the kernel's `Collective name` argument;
//   2. the CPU op that launched it: the cuda_runtime/cuda_driver launch with the same
//      args.correlation, then the innermost host op on the launch's pid/tid that encloses the
//      launch's start and is named c10d::* or nccl:* (by its name) or record_param_comms (by
//      its `Collective name`) — every collective can run a kernel named ncclKernel_SendRecv_*;
//   3. the kernel's name (kind_from_kernel_name).
// - Bytes: max(In msg nelems, Out msg nelems) × the size of `dtype`, from the kernel's
//   arguments, else from the innermost enclosing op that has them (record_param_comms); 0 when
//   none says. Group: `Process Group Name` the same way; its ranks from `Process Group Ranks`
//   ("[0, 1]"), else from distributedInfo.pg_config by that name.
// - Steps: host annotations (`ph: X`, cat user_annotation or cpu_op) whose whole name matches
//   ReadOptions::step_regex; the first capture group is the step number. The same number twice
//   is one step spanning both. Sorted by start. None found is not an error here.
// - Rank and world size from distributedInfo; else the rank from the file name
//   (rank_from_file_name) and world size unknown; else an error naming the file.
// - A trace without device events (a CPU run: PyTorch on CPU with gloo; format "pytorch-cpu"):
//   the host is the device. `aten::` ops on threads that run no `gloo:` op (or that run the
//   steps) are computation (the stream is the thread); `gloo:` ops are communication, one
//   collective call each, its kind from the op's name, all on one lane (gloo runs a group's
//   collectives on several worker threads); c10d:: ops (the hand-off to gloo, on the main thread)
//   are communication too, without a call.
//   The same time rules as for device events apply to them. The legacy profiler's form (PyTorch
//   built without Kineto, as Debian 12's 1.13: a bare array of events with no "cat", times counted
//   from each rank's profiler start) is read the same way and marks the rank's clock its own
//   (RankTrace::own_clock).
#include "step/kineto_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/regex.h"
#include "step/chrome_trace.h"
#include "step/classify.h"

namespace plumb::step {
namespace {

// How many host comm ops before a launch are looked at for one that encloses it (bounds the
// work when a kernel was launched outside any c10d op).
constexpr size_t kMaxEnclosingScan = 32;

// The steps: a regex compiled once, tried only on names that start with its literal prefix.
class StepMatcher {
 public:
  explicit StepMatcher(const std::string& pattern) : regex_(pattern, "--step-regex") {
    if (regex_.captures() == 0) {
      throw Error(fmt::format("--step-regex '{}': needs a capture group for the step number, "
                              "as in 'ProfilerStep#(\\d+)'",
                              pattern));
    }
    prefix_ = literal_prefix(pattern);
  }

  std::optional<int64_t> step_of(std::string_view name) const {
    if (!name.starts_with(prefix_)) return std::nullopt;
    std::array<std::string_view, 2> match;  // the name, the step number
    if (!regex_.match(name, match) || match[1].data() == nullptr) return std::nullopt;
    const char* last = match[1].data() + match[1].size();
    int64_t step = 0;
    auto [end, error] = std::from_chars(match[1].data(), last, step);
    if (error != std::errc() || end != last) return std::nullopt;
    return step;
  }

 private:
  // The characters every match starts with: the pattern up to its first special character.
  static std::string literal_prefix(std::string_view pattern) {
    if (pattern.find('|') != std::string_view::npos) return {};  // alternatives: no one prefix
    if (pattern.starts_with('^')) pattern.remove_prefix(1);
    std::string_view literal = pattern.substr(0, pattern.find_first_of("\\^$.|?*+()[]{}"));
    // A quantifier after the last literal character makes that character optional.
    if (literal.size() < pattern.size() && std::string_view("?*{").find(pattern[literal.size()]) !=
                                               std::string_view::npos) {
      literal.remove_suffix(std::min<size_t>(1, literal.size()));
    }
    return std::string(literal);
  }

  Regex regex_;
  std::string prefix_;
};

// What a collective's arguments say (on a kernel or a host op).
struct CommArgs {
  std::optional<CollectiveKind> kind;
  uint64_t bytes = 0;
  std::string group;
  std::string group_ranks;  // "[0, 1]" as written
  int64_t seq = -1;         // "Seq"
};

uint64_t message_bytes(const ChromeArgs& args) {
  int64_t elements = std::max(args.in_nelems, args.out_nelems);
  std::optional<size_t> size = dtype_bytes(args.dtype);
  if (elements <= 0 || !size) return 0;
  return static_cast<uint64_t>(elements) * *size;
}

CommArgs comm_args(const ChromeArgs& args, std::optional<CollectiveKind> kind) {
  return {kind, message_bytes(args), std::string(args.pg_name), std::string(args.pg_ranks),
          args.seq};
}

// A host op that may have launched a collective: c10d::*, nccl:*, record_param_comms.
struct CommOp {
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  CommArgs args;
};

struct Launch {
  int64_t correlation = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_ns = 0;
};

struct NcclKernel {
  size_t span = 0;  // index in RankTrace::spans
  int64_t correlation = -1;
  std::string name;
  CommArgs args;
};

bool is_launch(std::string_view cat) { return cat == "cuda_runtime" || cat == "cuda_driver"; }

std::optional<Activity> device_activity(std::string_view cat) {
  if (cat == "kernel") return Activity::kCompute;
  if (cat == "gpu_memcpy" || cat == "gpu_memset") return Activity::kMemory;
  return std::nullopt;
}

// "[0, 1, 2]" → {0, 1, 2}; empty when it is not such a list.
std::vector<int> parse_rank_list(std::string_view text) {
  std::vector<int> ranks;
  size_t at = text.find('[');
  if (at == std::string_view::npos) return ranks;
  for (++at; at < text.size();) {
    while (at < text.size() && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= text.size() || text[at] == ']') return ranks;
    int rank = 0;
    auto [end, error] = std::from_chars(text.data() + at, text.data() + text.size(), rank);
    if (error != std::errc()) return {};
    ranks.push_back(rank);
    at = static_cast<size_t>(end - text.data());
  }
  return {};
}

// The end of an event the reader uses: ts + dur, or an Error when that is past int64 ns.
int64_t end_of(const ChromeEvent& event, std::string_view source) {
  int64_t end = 0;
  if (__builtin_add_overflow(event.ts_ns, event.dur_ns, &end)) {
    fail_event(event, source, "'ts' + 'dur' is out of the range of int64 nanoseconds");
  }
  return end;
}

// A used host event with a negative "dur" is an error: steps and the ops that say what a
// collective is are few, and every figure of their step depends on them.
void require_non_negative_dur(const ChromeEvent& event, std::string_view source) {
  if (event.dur_ns < 0) {
    fail_event(event, source, fmt::format("'dur' is negative ({} µs)", ns_as_us(event.dur_ns)));
  }
}

// The categories of host events: Kineto's, and none at all (the legacy autograd profiler of a
// PyTorch built without Kineto writes no "cat").
constexpr std::array<std::string_view, 3> kHostCategories{"cpu_op", "user_annotation", ""};

// What a host op is to plumb, by the start of its name (docs/step.md, "Classification"). The CPU
// roles count only in a trace without device events, whose device is the host.
enum class HostRole : uint8_t {
  kCollectiveOp,   // names the collective a kernel runs (record_param_comms: its Collective name);
                   // on CPU, the hand-off of a collective to its backend
  kCpuCollective,  // a collective the CPU runs, on the backend's own threads
  kCpuCompute,     // an operator the CPU computes
};

constexpr std::array<std::pair<std::string_view, HostRole>, 5> kHostRoles{{
    {"c10d::", HostRole::kCollectiveOp},
    {"nccl:", HostRole::kCollectiveOp},
    {"record_param_comms", HostRole::kCollectiveOp},
    {"gloo:", HostRole::kCpuCollective},
    {"aten::", HostRole::kCpuCompute},
}};

std::optional<HostRole> host_role(std::string_view name) {
  for (const auto& [prefix, role] : kHostRoles) {
    if (name.starts_with(prefix)) return role;
  }
  return std::nullopt;
}

// The one lane of a CPU trace's collective calls: gloo hands a group's collectives to whichever
// of its worker threads is free, so the thread says nothing about the group.
constexpr uint32_t kCpuCollectiveLane = 0;
constexpr std::string_view kCpuFormat = "pytorch-cpu";

// A host op that would be computation or communication in a trace without device events, kept
// until the whole trace says whether it has any.
struct HostOp {
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  uint64_t index = 0;
  std::string_view name;  // interned in KinetoCollector::names_
  HostRole role = HostRole::kCpuCompute;
};

bool is_host_op(std::string_view cat) {
  return std::find(kHostCategories.begin(), kHostCategories.end(), cat) != kHostCategories.end();
}

class KinetoCollector {
 public:
  KinetoCollector(const ReadOptions& options, const TraceText& text) : steps_(options.step_regex) {
    trace_.source = text.source;
    trace_.format = "kineto";
    trace_.bytes_read = text.size;
  }

  void on_event(const ChromeEvent& event) {
    if (event.ph != 'X') return;
    if (std::optional<Activity> activity = device_activity(event.cat)) {
      require_times(event, trace_.source, true, StringTs::kRefused);
      if (!device_seen_) forget_host_ops();
      add_device_span(event, *activity);
    } else if (is_launch(event.cat)) {
      if (event.args.correlation >= 0) {
        require_times(event, trace_.source, false, StringTs::kRefused);
        launches_.push_back({event.args.correlation, event.pid, event.tid, event.ts_ns});
      }
    } else if (is_host_op(event.cat)) {
      add_host_op(event);
    }
  }

  RankTrace finish(const ChromeTraceHeader& header) {
    if (!device_seen_ && (!host_ops_.empty() || !host_time_error_.empty())) adopt_host_ops();
    RankTrace trace = std::move(trace_);
    trace.own_clock = header.bare_array;
    trace.host = header.host;
    set_rank(header, trace);
    rebase(header, trace);
    drop_negative_starts(trace);
    trace.spans = std::move(spans_);
    resolve_calls(header, trace);
    std::erase_if(trace.spans, [](const DeviceSpan& s) { return s.end_ns <= s.start_ns; });
    for (const auto& [step, span] : step_spans_) {
      trace.steps.push_back({step, span.start_ns, span.end_ns});
    }
    std::sort(trace.steps.begin(), trace.steps.end(),
              [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
    return trace;
  }

 private:
  // Where each step's span came from, for messages about its time.
  struct StepTimes {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    std::string first_event;  // describe_event() of its first annotation
  };

  // Times as written + baseTimeNanoseconds: absolute, so that ranks line up.
  void rebase(const ChromeTraceHeader& header, RankTrace& trace) {
    const int64_t base = header.base_time_ns.value_or(0);
    if (base < 0) {
      throw Error(fmt::format("{}: baseTimeNanoseconds is negative ({}); expected the "
                              "profiler's start in ns since 1970",
                              trace.source, base));
    }
    auto shift = [&](int64_t& t) {
      if (__builtin_add_overflow(t, base, &t)) {
        throw Error(fmt::format("{}: baseTimeNanoseconds {} puts the trace's times past the "
                                "range of int64 nanoseconds",
                                trace.source, base));
      }
    };
    for (DeviceSpan& span : spans_) {
      shift(span.start_ns);
      shift(span.end_ns);
    }
    for (DroppedEvents& dropped : trace.dropped) {
      for (int64_t& start : dropped.starts_ns) shift(start);
    }
    for (auto& [step, span] : step_spans_) {
      shift(span.start_ns);
      shift(span.end_ns);
      if (span.start_ns < 0) {
        throw Error(fmt::format("{}: {}: the step starts before 1970 ({} µs); a step's span must "
                                "be known",
                                trace.source, span.first_event, ns_as_us(span.start_ns)));
      }
    }
  }

  // Device spans whose absolute start is negative (only those written with a negative "ts" can
  // be) are dropped and counted; emptied here, erased once the calls are resolved.
  void drop_negative_starts(RankTrace& trace) {
    for (const auto& [index, event] : negative_ts_) {
      DeviceSpan& span = spans_[index];
      if (span.start_ns >= 0) continue;
      const std::string& where = event;  // a structured binding: clang cannot capture it yet
      drop_event(trace, "a negative time", span.start_ns, [&] { return where; });
      span.end_ns = span.start_ns;
    }
  }

  void add_device_span(const ChromeEvent& event, Activity activity) {
    bool nccl = activity == Activity::kCompute && is_nccl_kernel(event.name);
    std::optional<CollectiveKind> kind;
    if (nccl && !event.args.collective_name.empty()) {
      kind = kind_from_op_name(event.args.collective_name);
    }
    auto stream = static_cast<uint32_t>(event.args.stream >= 0 ? event.args.stream : event.tid);
    add_span(event, nccl ? Activity::kCommunication : activity, stream, nccl, kind);
  }

  // A span of device time; with `call`, also the collective call it runs.
  void add_span(const ChromeEvent& event, Activity activity, uint32_t stream, bool call,
                std::optional<CollectiveKind> kind) {
    if (event.dur_ns < 0) {
      drop_event(trace_, "a negative 'dur'", event.ts_ns, [&] { return describe_event(event); });
      return;
    }
    if (event.dur_ns == 0) return;
    DeviceSpan span;
    span.start_ns = event.ts_ns;
    span.end_ns = end_of(event, trace_.source);
    if (event.ts_ns < 0) negative_ts_.emplace_back(spans_.size(), describe_event(event));
    span.stream = stream;
    span.activity = activity;
    spans_.push_back(span);
    if (!call) return;
    nccl_kernels_.push_back({spans_.size() - 1, event.args.correlation, std::string(event.name),
                             comm_args(event.args, kind)});
  }

  // A CPU run's aten::, gloo: or c10d:: op, kept until finish() knows whether the trace has device
  // events. Its times are judged now (the first bad one kept as the error it would be) and
  // thrown only if the trace turns out to be a CPU run.
  void keep_host_op(const ChromeEvent& event, HostRole role) {
    if (device_seen_) return;  // the device is the GPU: the host's ops are not device time
    if (event.ts.form != TimeForm::kNumber || event.dur.form != TimeForm::kNumber) {
      if (!host_time_error_.empty()) return;
      try {
        require_times(event, trace_.source, true, StringTs::kRefused);
      } catch (const Error& error) {
        host_time_error_ = error.what();
      }
      return;
    }
    std::string_view name = *names_.emplace(event.name).first;
    host_ops_.push_back({event.pid, event.tid, event.ts_ns, event.dur_ns, event.index, name, role});
  }

  // A device event: the host's ops are not device time in this trace.
  void forget_host_ops() {
    device_seen_ = true;
    host_ops_ = {};
    names_.clear();
    host_time_error_.clear();
  }

  // The trace has no device events: its device is the host. aten:: ops on threads that run no
  // gloo: op (unless they run the steps) are computation; gloo: ops are communication, and so is
  // the time in c10d:: ops (the hand-off of a collective to gloo).
  void adopt_host_ops() {
    if (!host_time_error_.empty()) throw Error(host_time_error_);
    trace_.format = kCpuFormat;
    std::set<std::pair<int64_t, int64_t>> comm_threads;
    for (const HostOp& op : host_ops_) {
      if (op.role == HostRole::kCpuCollective && !step_threads_.contains({op.pid, op.tid})) {
        comm_threads.emplace(op.pid, op.tid);
      }
    }
    for (const HostOp& op : host_ops_) {
      ChromeEvent event;
      event.name = op.name;
      event.pid = op.pid;
      event.tid = op.tid;
      event.ts_ns = op.ts_ns;
      event.dur_ns = op.dur_ns;
      event.index = op.index;
      if (op.role == HostRole::kCpuCollective) {
        add_span(event, Activity::kCommunication, kCpuCollectiveLane, true,
                 kind_from_op_name(op.name));
      } else if (op.role == HostRole::kCollectiveOp) {
        add_span(event, Activity::kCommunication, static_cast<uint32_t>(op.tid), false,
                 std::nullopt);
      } else if (!comm_threads.contains({op.pid, op.tid})) {
        add_span(event, Activity::kCompute, static_cast<uint32_t>(op.tid), false, std::nullopt);
      }
    }
    host_ops_.clear();
  }

  void add_host_op(const ChromeEvent& event) {
    if (std::optional<int64_t> step = steps_.step_of(event.name)) {
      add_step(*step, event);
      return;
    }
    std::optional<HostRole> role = host_role(event.name);
    if (!role) return;
    if (*role != HostRole::kCollectiveOp) {
      keep_host_op(event, *role);
      return;
    }
    std::optional<CollectiveKind> kind;
    if (event.name.starts_with("record_param_comms")) {
      if (!event.args.collective_name.empty()) {
        kind = kind_from_op_name(event.args.collective_name);
      }
    } else {
      kind = kind_from_op_name(event.name);
    }
    require_times(event, trace_.source, true, StringTs::kRefused);
    require_non_negative_dur(event, trace_.source);
    comm_ops_.push_back({event.pid, event.tid, event.ts_ns, end_of(event, trace_.source),
                         comm_args(event.args, kind)});
    keep_host_op(event, *role);
  }

  void add_step(int64_t step, const ChromeEvent& event) {
    require_times(event, trace_.source, true, StringTs::kRefused);
    require_non_negative_dur(event, trace_.source);
    int64_t end = end_of(event, trace_.source);
    step_threads_.emplace(event.pid, event.tid);
    auto [it, added] = step_spans_.try_emplace(step, StepTimes{event.ts_ns, end, {}});
    if (added) {
      it->second.first_event = describe_event(event);
    } else {  // the same step twice: one span over both
      it->second.start_ns = std::min(it->second.start_ns, event.ts_ns);
      it->second.end_ns = std::max(it->second.end_ns, end);
    }
  }

  void set_rank(const ChromeTraceHeader& header, RankTrace& trace) const {
    trace.world_size = header.world_size.value_or(-1);
    if (header.rank) {
      trace.rank = *header.rank;
      return;
    }
    trace.rank = rank_from_file_name(std::filesystem::path(trace.source).filename().string());
    if (trace.rank < 0 && header.bare_array) {
      throw Error(fmt::format(
          "{}: no rank: the file is the legacy profiler's array of events (PyTorch without "
          "Kineto), which never names its rank, and the file name does not say (name it "
          "rank-N.json: export_chrome_trace(f\"rank-{{rank}}.json\"))",
          trace.source));
    }
    if (trace.rank < 0) {
      throw Error(fmt::format("{}: no rank: distributedInfo.rank is missing and the file name "
                              "does not say (name it rank-N.json)",
                              trace.source));
    }
  }

  // One call per NCCL kernel, by device start; the kind, bytes and group from the kernel, else
  // from the host ops around its launch, else (kind only) from its name.
  void resolve_calls(const ChromeTraceHeader& header, RankTrace& trace) {
    std::sort(launches_.begin(), launches_.end(),
              [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
    // By thread and start; of two ops starting together the outer (longer) one first, so that
    // a backward walk meets the inner one first.
    std::sort(comm_ops_.begin(), comm_ops_.end(), [](const CommOp& a, const CommOp& b) {
      return std::tie(a.pid, a.tid, a.start_ns, b.end_ns) <
             std::tie(b.pid, b.tid, b.start_ns, a.end_ns);
    });
    std::stable_sort(nccl_kernels_.begin(), nccl_kernels_.end(),
                     [&](const NcclKernel& a, const NcclKernel& b) {
                       return trace.spans[a.span].start_ns < trace.spans[b.span].start_ns;
                     });
    for (NcclKernel& kernel : nccl_kernels_) {
      DeviceSpan& span = trace.spans[kernel.span];
      if (span.end_ns <= span.start_ns) continue;  // dropped (drop_negative_starts)
      fill_from_launch(kernel);
      span.call = static_cast<int32_t>(trace.calls.size());
      CollectiveCall call;
      call.kind = kernel.args.kind ? *kernel.args.kind
                                   : kind_from_kernel_name(kernel.name).value_or(CollectiveKind::kUnknown);
      call.start_ns = span.start_ns;
      call.end_ns = span.end_ns;
      call.bytes = kernel.args.bytes;
      call.group = kernel.args.group;
      call.group_ranks = group_ranks(header, kernel.args);
      call.seq = kernel.args.seq;
      call.name = std::move(kernel.name);
      trace.calls.push_back(std::move(call));
    }
  }

  // Fills what the kernel's own arguments lack from the host ops enclosing its launch, the
  // innermost first.
  void fill_from_launch(NcclKernel& kernel) const {
    if (kernel.args.kind && kernel.args.bytes > 0 && !kernel.args.group.empty() &&
        kernel.args.seq >= 0) {
      return;
    }
    auto launch = std::lower_bound(launches_.begin(), launches_.end(), kernel.correlation,
                                   [](const Launch& l, int64_t c) { return l.correlation < c; });
    if (launch == launches_.end() || launch->correlation != kernel.correlation) return;
    auto after = std::upper_bound(comm_ops_.begin(), comm_ops_.end(), *launch,
                                  [](const Launch& l, const CommOp& op) {
                                    return std::tie(l.pid, l.tid, l.ts_ns) <
                                           std::tie(op.pid, op.tid, op.start_ns);
                                  });
    for (size_t scanned = 0; after != comm_ops_.begin() && scanned < kMaxEnclosingScan;
         ++scanned) {
      const CommOp& op = *--after;
      if (op.pid != launch->pid || op.tid != launch->tid) break;
      if (op.end_ns < launch->ts_ns) continue;
      if (!kernel.args.kind && op.args.kind) kernel.args.kind = op.args.kind;
      if (kernel.args.bytes == 0) kernel.args.bytes = op.args.bytes;
      if (kernel.args.seq < 0) kernel.args.seq = op.args.seq;
      if (kernel.args.group.empty() && !op.args.group.empty()) {
        kernel.args.group = op.args.group;
        kernel.args.group_ranks = op.args.group_ranks;
      }
    }
  }

  static std::vector<int> group_ranks(const ChromeTraceHeader& header, const CommArgs& args) {
    std::vector<int> ranks = parse_rank_list(args.group_ranks);
    if (!ranks.empty() || args.group.empty()) return ranks;
    for (const auto& [name, members] : header.process_groups) {
      if (name == args.group) return members;
    }
    return ranks;
  }

  StepMatcher steps_;
  RankTrace trace_;  // what finish() returns: its source, and the events dropped so far
  std::vector<DeviceSpan> spans_;
  std::vector<std::pair<size_t, std::string>> negative_ts_;  // span index, its event
  std::vector<NcclKernel> nccl_kernels_;
  std::vector<Launch> launches_;
  std::vector<CommOp> comm_ops_;
  std::map<int64_t, StepTimes> step_spans_;  // step → [start, end)
  bool device_seen_ = false;                  // a kernel, memcpy or memset
  std::vector<HostOp> host_ops_;              // until a device event is seen
  std::set<std::string, std::less<>> names_;  // host_ops_' names
  std::string host_time_error_;               // the first host op with a bad time
  std::set<std::pair<int64_t, int64_t>> step_threads_;  // (pid, tid) of the steps
};

}  // namespace

RankTrace kineto_from_text(const TraceText& text, const ReadOptions& options) {
  KinetoCollector collector(options, text);
  ChromeTraceHeader header =
      scan_chrome_trace(text, [&](const ChromeEvent& event) { collector.on_event(event); });
  return collector.finish(header);
}

RankTrace read_kineto(const std::filesystem::path& path, const ReadOptions& options) {
  return kineto_from_text(read_trace_text(path.string()), options);
}

}  // namespace plumb::step
