// bench/mem_analyze: how fast `plumb mem analyze` is.
//
// Figures (the mem issue): analysis of a 10-million-event trace at 5 million events per second or
// more on one core, with memory bounded by the trace size; and the whole `plumb mem analyze` of a
// snapshot at least 3× (issue 14: 10×) faster than Python merely loading the same pickle
// (`python3 -c "import pickle; pickle.load(open(F, 'rb'))"`). Both measured in the same run (part 2
// first, while this process is small: see main):
//   1. a training trace synthesized in memory (bench/make_big_snapshot.py's workload: set-up,
//      steps of per-layer activations under six stacks, free_requested + free_completed pairs,
//      segment_alloc in step 1, a 16 KiB leak per step); timed: mem::analyze, and the physical
//      floor of one pass over the same events summing their sizes (memory bandwidth). Peak RSS
//      (getrusage) against the trace's bytes in memory.
//   2. a snapshot pickle of about --pickle-mb MB written by bench/make_big_snapshot.py into a
//      temporary directory; timed, alternating, each run a fresh process: the real `plumb mem
//      analyze F` and Python's pickle.load of F. Medians, and the median of the per-run ratios
//      python/plumb.
//
// --breakdown also times each piece of mem::analyze alone, and decode / Trace / analysis of the
// pickle in this process; --pickle-mb 0 skips part 2; --smoke: 200,000 events, a 2 MB pickle,
// one run each (CTest).
//
// Issue 14 adds, in the same alternation, `plumb mem replay F --policies all` right after each
// analyze (the median of the per-run ratios replay/analyze), both peak RSS values against each
// other, and --pickle FILE to measure a snapshot made beforehand (the 2 GB one).
//
//   build/bench/mem_analyze [--events N] [--runs N] [--pickle-mb MB] [--pickle-runs N]
//                           [--pickle FILE] [--breakdown] [--smoke] [--plumb PATH] [--python PATH]
#include <fcntl.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/stats.h"
#include "mem/analysis.h"
#include "mem/leak_sites.h"
#include "mem/pickle.h"
#include "mem/snapshot_reader.h"
#include "mem/trace.h"

extern char** environ;

namespace {

using namespace plumb::mem;

constexpr double kTargetEventsPerSecond = 5e6;  // the figure
constexpr double kTargetPickleRatio = 10;       // issue 14: ≥ 10× pickle.load
constexpr double kTargetRssRatio = 4;           // issue 14: peak RSS ≤ ¼ of Python's
constexpr double kTargetReplayRatio = 2;        // issue 14: replay of every policy ≤ 2× analyze
constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kAddrBase = 0x7F3A00000000;
constexpr double kT0Us = 1717171717000000;  // as the fixtures: 2024-05-31T16:08:37Z
constexpr double kStepGapUs = 180000;

// Caching-allocator sizes (c10/cuda/CUDACachingAllocator.cpp, as tests/fixtures/mem simulates).
constexpr uint64_t kMinBlockSize = 512, kSmallSize = kMiB, kSmallBuffer = 2 * kMiB;
constexpr uint64_t kLargeBuffer = 20 * kMiB, kMinLargeAlloc = 10 * kMiB, kRoundLarge = 2 * kMiB;

struct Options {
  size_t events = 10'000'000;
  int runs = 3;
  double pickle_mb = 100;
  int pickle_runs = 5;
  bool breakdown = false;
  bool pickle_only = false;  // the re-executed child that runs the pickle comparison
  std::string plumb = PLUMB_BINARY;
  // Debian's interpreter where there is one, as on the machines the figures are for: a python3
  // found first on PATH may be a version manager's shim, whose own start (0.25 s under pyenv)
  // would count for plumb.
  std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::string generator = PLUMB_BENCH_DIR "/make_big_snapshot.py";
  std::string pickle;  // --pickle FILE: that snapshot instead of a generated one
};

double seconds_of(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) { return plumb::percentile(v, 50); }

uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux: KiB
}

double mb(uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

// ---- 1. the synthetic trace --------------------------------------------------------------------

uint64_t round_size(uint64_t size) {
  return std::max(kMinBlockSize, kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize));
}

uint64_t allocation_size(uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

struct Site {
  const char* name;
  std::vector<Frame> frames;  // innermost first
};

// The call stacks of make_big_snapshot.py's STACKS, in the same order.
std::vector<Site> sites() {
  const Frame layer{"forward", "megatron/core/transformer/transformer_layer.py", 213};
  const Frame linear{"linear_with_grad_accumulation", "megatron/core/tensor_parallel/layers.py", 611};
  return {
      {"init", {{"__init__", "megatron/core/tensor_parallel/layers.py", 734}, {"get_model", "megatron/training/training.py", 472}}},
      {"optim_init", {{"_init_group", "torch/optim/adam.py", 136}, {"__init__", "megatron/core/optimizer/distrib_optimizer.py", 512}}},
      {"batch", {{"get_batch", "pretrain_gpt.py", 93}, {"train_step", "megatron/training/training.py", 1142}}},
      {"qkv", {linear, {"get_query_key_value_tensors", "megatron/core/transformer/attention.py", 380}, layer}},
      {"core_attn", {{"_flash_attn_forward", "flash_attn/flash_attn_interface.py", 90}, {"forward", "megatron/core/transformer/attention.py", 402}, layer}},
      {"attn_out", {linear, {"forward", "megatron/core/transformer/attention.py", 420}, layer}},
      {"fc1", {linear, {"forward", "megatron/core/transformer/mlp.py", 110}, layer}},
      {"gelu", {{"gelu", "torch/nn/functional.py", 1702}, {"forward", "megatron/core/transformer/mlp.py", 117}, layer}},
      {"fc2", {linear, {"forward", "megatron/core/transformer/mlp.py", 125}, layer}},
      {"loss", {{"forward", "megatron/core/tensor_parallel/cross_entropy.py", 141}, {"loss_func", "pretrain_gpt.py", 152}}},
      {"backward", {{"backward", "torch/autograd/__init__.py", 289}, {"backward_step", "megatron/core/pipeline_parallel/schedules.py", 371}}},
      {"grad", {{"_engine_run_backward", "torch/autograd/graph.py", 744}, {"backward", "torch/autograd/__init__.py", 289}}},
      {"bucket", {{"all_reduce_coalesced", "torch/distributed/distributed_c10d.py", 2740}, {"start_grad_sync", "megatron/core/distributed/param_and_grad_buffer.py", 352}}},
      {"optim", {{"_multi_tensor_adam", "torch/optim/adam.py", 480}, {"step", "megatron/core/optimizer/optimizer.py", 455}}},
      {"zero_grad", {{"zero_grad", "megatron/core/optimizer/optimizer.py", 118}, {"train_step", "megatron/training/training.py", 1120}}},
      {"leak", {{"training_log", "megatron/training/training.py", 1275}, {"train", "megatron/training/training.py", 1540}}},
  };
}

enum Stack : uint32_t { kInit, kOptimInit, kBatch, kQkv, kCoreAttn, kAttnOut, kFc1, kGelu, kFc2,
                        kLoss, kBackward, kGrad, kBucket, kOptim, kZeroGrad, kLeak };

// The workload, as make_big_snapshot.py's tables.
constexpr int kLayers = 16;
constexpr std::pair<Stack, uint64_t> kLayerActivations[] = {
    {kQkv, 12 * kMiB}, {kCoreAttn, 24 * kMiB}, {kAttnOut, 4 * kMiB},
    {kFc1, 32 * kMiB}, {kGelu, 32 * kMiB},     {kFc2, 8 * kMiB}};
constexpr int kActivationsPerLayer = std::size(kLayerActivations);
constexpr uint64_t kWeights[] = {64 * kMiB, 64 * kMiB, 64 * kMiB, 64 * kMiB, 64 * kMiB, 64 * kMiB,
                                 64 * kMiB, 64 * kMiB, 8192,      8192,      8192,      8192};
constexpr uint64_t kGradBytes[] = {96 * kMiB, 64 * kMiB, 48 * kMiB, 32 * kMiB};
constexpr uint64_t kBatchBytes = 131072, kLossBytes = 4;
constexpr uint64_t kBucketBytes = 128 * kMiB, kOptimTmpBytes = 64 * kMiB, kLeakBytes = 16 * 1024;
constexpr int kGrads = std::size(kGradBytes);

// Writes the events of a training run with fixed per-slot addresses (the allocator's steady
// state) and, at the end, the segments a replay gives.
class Synth {
 public:
  struct Placed {
    size_t segment;
    uint64_t addr, size;
  };

  explicit Synth(size_t reserve) {
    for (const Site& s : sites()) {
      std::vector<uint32_t> ids;
      for (const Frame& f : s.frames) ids.push_back(b_.frame(f));
      stacks_.push_back(b_.stack(ids));
    }
    b_.trace().source = "synthetic training trace";
    b_.trace().has_time = true;
    b_.trace().events.reserve(reserve);
  }

  Placed alloc(int slot, uint64_t size, Stack stack) {
    const auto [segment, addr] = place(slot, size, stack);
    live_[segment][addr] = {round_size(size), size};
    emit(Action::kAlloc, addr, size, stack);
    return {segment, addr, size};
  }

  void free(const Placed& p, Stack stack) {
    emit(Action::kFreeRequested, p.addr, p.size, stack);
    emit(Action::kFreeCompleted, p.addr, p.size, stack);
    live_[p.segment].erase(p.addr);
  }

  void next_step() { time_us_ += kStepGapUs; }
  size_t events() { return b_.trace().events.size(); }
  Trace finish();

 private:
  void emit(Action a, uint64_t addr, uint64_t size, Stack stack) {
    Event e;
    e.action = a;
    e.addr = addr;
    e.size = size;
    e.time_us = time_us_;
    e.stack = stacks_[stack];
    b_.trace().events.push_back(e);
    time_us_ += 23 + static_cast<double>((b_.trace().events.size() * 37) % 61);
  }
  size_t new_segment(uint64_t size, bool large, Stack stack) {
    b_.trace().segments.push_back({next_addr_, size, 0, large, false, {}});
    live_.emplace_back();
    emit(Action::kSegmentAlloc, next_addr_, size, stack);
    next_addr_ += size;
    return b_.trace().segments.size() - 1;
  }
  std::pair<size_t, uint64_t> place(int slot, uint64_t size, Stack stack);

  TraceBuilder b_;
  std::vector<uint32_t> stacks_;
  std::map<int, std::pair<size_t, uint64_t>> slots_;    // slot → segment, address
  struct Live {
    uint64_t size, requested;
  };
  std::vector<std::map<uint64_t, Live>> live_;          // per segment: live blocks by address
  size_t small_ = SIZE_MAX;                             // the small-pool segment being filled
  uint64_t small_used_ = 0;
  uint64_t next_addr_ = kAddrBase;
  double time_us_ = kT0Us;
};

// A slot's address: its own large segment, or room in the current small one. Slot −1: a new
// place every time (the leak).
std::pair<size_t, uint64_t> Synth::place(int slot, uint64_t size, Stack stack) {
  if (const auto it = slots_.find(slot); it != slots_.end()) return it->second;
  const uint64_t rounded = round_size(size);
  std::pair<size_t, uint64_t> at;
  if (rounded > kSmallSize) {
    const size_t seg = new_segment(allocation_size(rounded), true, stack);
    at = {seg, b_.trace().segments[seg].addr};
  } else {
    if (small_ == SIZE_MAX || small_used_ + rounded > kSmallBuffer) {
      small_ = new_segment(kSmallBuffer, false, stack);
      small_used_ = 0;
    }
    at = {small_, b_.trace().segments[small_].addr + small_used_};
    small_used_ += rounded;
  }
  if (slot >= 0) slots_[slot] = at;
  return at;
}

Trace Synth::finish() {
  std::vector<Segment>& segments = b_.trace().segments;
  for (size_t s = 0; s < segments.size(); ++s) {
    Segment& seg = segments[s];
    uint64_t cursor = seg.addr;
    for (const auto& [addr, live] : live_[s]) {
      if (addr > cursor) seg.blocks.push_back({cursor, addr - cursor, 0, BlockState::kInactive});
      seg.blocks.push_back({addr, live.size, live.requested, BlockState::kActiveAllocated});
      cursor = addr + live.size;
    }
    if (cursor < seg.addr + seg.total_size) {
      seg.blocks.push_back({cursor, seg.addr + seg.total_size - cursor, 0, BlockState::kInactive});
    }
  }
  return b_.finish();
}

// Slots: weights and states, then per-step tensors; −1 for the leak.
enum Slot : int { kWeightSlot = 0, kBatchSlot = 100, kLossSlot, kBucketSlot, kOptimSlot,
                  kGradSlot = 110, kActivationSlot = 200 };

void train_step(Synth& s) {
  s.next_step();
  const Synth::Placed batch = s.alloc(kBatchSlot, kBatchBytes, kBatch);
  std::vector<Synth::Placed> acts;
  for (int layer = 0; layer < kLayers; ++layer) {
    for (int j = 0; j < kActivationsPerLayer; ++j) {
      const auto [stack, bytes] = kLayerActivations[j];
      acts.push_back(s.alloc(kActivationSlot + layer * kActivationsPerLayer + j, bytes, stack));
    }
  }
  const Synth::Placed loss = s.alloc(kLossSlot, kLossBytes, kLoss);
  s.alloc(-1, kLeakBytes, kLeak);  // kept: the leak
  s.free(loss, kBackward);
  const size_t half = acts.size() / 2;
  for (size_t i = acts.size(); i-- > half;) s.free(acts[i], kBackward);
  std::vector<Synth::Placed> grads;
  for (int g = 0; g < 2; ++g) grads.push_back(s.alloc(kGradSlot + g, kGradBytes[g], kGrad));
  for (size_t i = half; i-- > 0;) s.free(acts[i], kBackward);
  for (int g = 2; g < kGrads; ++g) grads.push_back(s.alloc(kGradSlot + g, kGradBytes[g], kGrad));
  const Synth::Placed bucket = s.alloc(kBucketSlot, kBucketBytes, kBucket);
  s.free(s.alloc(kOptimSlot, kOptimTmpBytes, kOptim), kOptim);
  for (const Synth::Placed& g : grads) s.free(g, kZeroGrad);
  s.free(batch, kZeroGrad);
  s.free(bucket, kBucket);
}

// Set-up, then whole steps until at least `events` events.
Trace synthesize(size_t events) {
  constexpr size_t kStepEvents = 3 * (kLayers * kActivationsPerLayer + kGrads + 4) + 2;
  Synth s(events + 2 * kStepEvents);
  const int weights = static_cast<int>(std::size(kWeights));
  for (int i = 0; i < weights; ++i) s.alloc(kWeightSlot + i, kWeights[i], kInit);
  for (int state = 1; state <= 2; ++state) {
    for (int i = 0; i < weights; ++i) s.alloc(kWeightSlot + state * weights + i, kWeights[i], kOptimInit);
  }
  while (s.events() < events) train_step(s);
  return s.finish();
}

uint64_t trace_bytes(const Trace& t) {
  uint64_t bytes = t.events.size() * sizeof(Event);
  for (const Frame& f : t.frames) bytes += sizeof(Frame) + f.name.size() + f.filename.size();
  for (const auto& s : t.stacks) bytes += sizeof(s) + s.size() * sizeof(uint32_t);
  for (const Segment& s : t.segments) bytes += sizeof(Segment) + s.blocks.size() * sizeof(Block);
  return bytes;
}

// The physical floor: one pass reading every event (sum of sizes); the empty asm keeps the
// compiler from dropping the unused sum.
void floor_pass(const Trace& t) {
  uint64_t sum = 0;
  for (const Event& e : t.events) sum += e.size + static_cast<uint64_t>(e.action);
  asm volatile("" : : "r"(sum) : "memory");
}

void time_analysis(const Trace& trace, const Options& o) {
  const double n = static_cast<double>(trace.events.size());
  const uint64_t before = peak_rss_bytes();
  std::vector<double> analysis, floor;
  Analysis last;
  for (int r = 0; r < o.runs; ++r) {
    floor.push_back(seconds_of([&] { floor_pass(trace); }));
    last = Analysis{};  // one analysis in memory at a time, as in `plumb mem analyze`
    analysis.push_back(seconds_of([&] { last = analyze(trace, AnalyzeOptions{}); }));
  }
  const uint64_t after = peak_rss_bytes();
  const double rate = n / median(analysis), floor_rate = n / median(floor);
  fmt::print("# bench/mem_analyze: synthetic trace of {} events ({} frames, {} stacks, {} segments), "
             "median of {} runs\n", trace.events.size(), trace.frames.size(), trace.stacks.size(),
             trace.segments.size(), o.runs);
  fmt::print("  one pass summing sizes (floor)  {:8.1f} M events/s  ({:.3f} s)\n", floor_rate / 1e6,
             median(floor));
  fmt::print("  mem::analyze                    {:8.2f} M events/s  ({:.3f} s; {:.4f} of the floor)\n",
             rate / 1e6, median(analysis), rate / floor_rate);
  fmt::print("  found: {} · creep {} {:+.0f} bytes/step · peak allocated {:.1f} MB\n", last.steps.how,
             last.creep.verdict, last.creep.slope_bytes_per_step, mb(last.timeline.peak.allocated));
  const uint64_t bytes = trace_bytes(trace);
  fmt::print("# analysis {:.2f} M events/s (target ≥ {:.0f}): {}\n", rate / 1e6,
             kTargetEventsPerSecond / 1e6, rate >= kTargetEventsPerSecond ? "within target" : "BELOW TARGET");
  fmt::print("# memory: trace {:.1f} MB in memory ({} B per event); peak RSS {:.1f} MB = {:.2f}× the "
             "trace; the analysis added {:.1f} MB = {:.2f}× the trace\n", mb(bytes), sizeof(Event),
             mb(after), static_cast<double>(after) / static_cast<double>(bytes), mb(after - before),
             static_cast<double>(after - before) / static_cast<double>(bytes));
}

// Each piece of mem::analyze alone (analysis.cc's order), median of `runs`.
void breakdown(const Trace& t, const Options& o) {
  const AnalyzeOptions options;
  const std::string profiler = "^ProfilerStep#[0-9]+";
  const Timeline tl = build_timeline(t);
  const Steps steps = detect_steps(t);
  const Creep cr = creep(tl, steps);
  const std::vector<std::pair<const char*, std::function<void()>>> pieces = {
      {"build_timeline", [&] { build_timeline(t); }},
      {"steps: ProfilerStep regex", [&] { steps_from_regex(t, plumb::Regex(profiler, "--step-regex"), profiler); }},
      {"steps: detect_steps", [&] { detect_steps(t); }},
      {"creep", [&] { creep(tl, steps); }},
      {"categories: live_by_category", [&] { live_by_category(t, Categorizer(t, options.rules), tl.peak_allocated_index); }},
      {"free_space_before (peak)", [&] { free_space_before(t, tl.peak_reserved_index + 1); }},
      {"free_space_before (end)", [&] { free_space_before(t, t.events.size()); }},
      {"classify_ooms", [&] { classify_ooms(t, tl, steps, cr); }},
      {"leak sites: growing_sites", [&] { growing_sites(t, steps, static_cast<uint64_t>(kMinLeakBytes)); }},
  };
  fmt::print("# breakdown (median of {} runs each)\n", o.runs);
  for (const auto& [name, fn] : pieces) {
    std::vector<double> s;
    for (int r = 0; r < o.runs; ++r) s.push_back(seconds_of(fn));
    fmt::print("  {:<30} {:8.3f} s  {:7.1f} ns/event\n", name, median(s),
               median(s) * 1e9 / static_cast<double>(t.events.size()));
  }
}

// ---- 2. the pickle comparison ------------------------------------------------------------------

struct Child {
  double seconds = 0;
  uint64_t peak_rss = 0;
  int status = 0;
};

// Runs argv to completion, stdout to the file `out` (empty: this process's), stderr to /dev/null
// when quiet.
Child run(const std::vector<std::string>& argv, const std::string& out, bool quiet) {
  std::fflush(stdout);  // before the child writes to it
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!out.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (quiet) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  Child c;
  pid_t pid = 0;
  rusage u{};
  c.seconds = seconds_of([&] {
    if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
      c.status = -1;
      return;
    }
    wait4(pid, &c.status, 0, &u);
  });
  posix_spawn_file_actions_destroy(&actions);
  c.peak_rss = static_cast<uint64_t>(u.ru_maxrss) * 1024;
  return c;
}

bool ok(const Child& c) { return c.status == 0; }

// Where `plumb mem analyze F` spends its time, in this process: decoding the pickle, the same
// plus building the Trace (snapshot_convert.h), and the analysis. Warm heap: a fresh process
// also pays the page faults of its first allocations.
void pickle_breakdown(const std::string& file, const Options& o) {
  std::vector<double> parse, read, analysis;
  size_t events = 0;
  for (int r = 0; r < o.pickle_runs; ++r) {
    parse.push_back(seconds_of([&] { read_pickle_file(file); }));
    Trace trace;
    read.push_back(seconds_of([&] { trace = snapshot_from_pickle_file(file, 0); }));
    analysis.push_back(seconds_of([&] { analyze(trace, AnalyzeOptions{}); }));
    events = trace.events.size();
  }
  const double n = static_cast<double>(events);
  fmt::print("# pickle breakdown, in this process (median of {} runs)\n", o.pickle_runs);
  fmt::print("  read_pickle_file (decode)            {:7.3f} s  {:6.0f} ns/event\n", median(parse),
             median(parse) * 1e9 / n);
  fmt::print("  snapshot_from_pickle_file (+ Trace)  {:7.3f} s  {:6.0f} ns/event\n", median(read),
             median(read) * 1e9 / n);
  fmt::print("  mem::analyze                         {:7.3f} s  {:6.0f} ns/event\n", median(analysis),
             median(analysis) * 1e9 / n);
}

int compare_pickle(const Options& o) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("plumb-mem-bench-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string generated = dir / "snapshot.pickle", report = dir / "report.txt";
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  const std::string file = o.pickle.empty() ? generated : o.pickle;
  if (o.pickle.empty() &&
      !ok(run({o.python, o.generator, file, "--mb", fmt::format("{}", o.pickle_mb)}, "", false))) {
    fmt::print("# pickle: {} {} failed\n", o.python, o.generator);
    return 1;
  }
  const std::vector<std::string> plumb = {o.plumb, "mem", "analyze", file};
  const std::vector<std::string> replay = {o.plumb, "mem", "replay", file, "--policies", "all"};
  const std::vector<std::string> python = {
      o.python, "-c", fmt::format("import pickle; pickle.load(open('{}', 'rb'))", file)};
  // Warm-up (page cache, the binaries); plumb's report is shown once.
  if (!ok(run(plumb, report, false)) || !ok(run(python, "/dev/null", false))) {
    fmt::print("# pickle: a warm-up run failed\n");
    return 1;
  }
  std::ifstream shown(report);
  for (std::string line; std::getline(shown, line);) fmt::print("  | {}\n", line);
  const std::vector<std::string> startup = {o.python, "-c", "import pickle"};
  std::vector<double> plumb_s, python_s, startup_s, replay_s, ratios, replay_ratios;
  uint64_t plumb_rss = 0, python_rss = 0, replay_rss = 0;
  for (int r = 0; r < o.pickle_runs; ++r) {  // alternating which goes first
    Child a, b;
    if (r % 2 == 0) {
      a = run(plumb, "/dev/null", true);
      b = run(python, "/dev/null", true);
    } else {
      b = run(python, "/dev/null", true);
      a = run(plumb, "/dev/null", true);
    }
    const Child c = run(startup, "/dev/null", true);
    const Child d = run(replay, "/dev/null", true);  // right after its analyze: a pair
    if (!ok(a) || !ok(b) || !ok(c) || !ok(d)) return 1;
    plumb_s.push_back(a.seconds);
    python_s.push_back(b.seconds);
    startup_s.push_back(c.seconds);
    replay_s.push_back(d.seconds);
    ratios.push_back(b.seconds / a.seconds);
    replay_ratios.push_back(d.seconds / a.seconds);
    plumb_rss = std::max(plumb_rss, a.peak_rss);
    python_rss = std::max(python_rss, b.peak_rss);
    replay_rss = std::max(replay_rss, d.peak_rss);
  }
  const double bytes = static_cast<double>(std::filesystem::file_size(file));
  fmt::print("# pickle: {:.1f} MB snapshot, median of {} runs, each a fresh process\n", bytes / 1e6,
             o.pickle_runs);
  fmt::print("  python3 pickle.load (whole command)  {:7.3f} s  {:7.1f} MB/s  peak RSS {:.0f} MB ({})\n",
             median(python_s), bytes / 1e6 / median(python_s), mb(python_rss), o.python);
  fmt::print("  python3 -c 'import pickle' (startup) {:7.3f} s\n", median(startup_s));
  fmt::print("  plumb mem analyze (whole command)    {:7.3f} s  {:7.1f} MB/s  peak RSS {:.0f} MB "
             "({:.1f}× the file)\n", median(plumb_s), bytes / 1e6 / median(plumb_s), mb(plumb_rss),
             static_cast<double>(plumb_rss) / bytes);
  // Headline: the median of the per-run ratios, each of two runs back to back (as bench/
  // comm_overhead): a load that comes and goes on the machine weighs on both sides of a pair.
  const double ratio = median(ratios);
  fmt::print("  per-run ratios python/plumb: {:.2f}; ratio of the medians {:.2f}×; without Python's "
             "startup {:.2f}×\n", fmt::join(ratios, " "), median(python_s) / median(plumb_s),
             (median(python_s) - median(startup_s)) / median(plumb_s));
  fmt::print("# pickle python/plumb {:.2f}× median ratio (target ≥ {:.0f}×): {}\n", ratio, kTargetPickleRatio,
             ratio >= kTargetPickleRatio ? "within target" : "BELOW TARGET");
  const double rss = static_cast<double>(python_rss) / static_cast<double>(plumb_rss);
  fmt::print("# peak RSS python/plumb {:.0f} / {:.0f} MB = {:.2f}× (target ≥ {:.0f}×): {}\n", mb(python_rss),
             mb(plumb_rss), rss, kTargetRssRatio, rss >= kTargetRssRatio ? "within target" : "BELOW TARGET");
  const double rr = median(replay_ratios);
  fmt::print("  plumb mem replay --policies all      {:7.3f} s  peak RSS {:.0f} MB; per-run replay/analyze: {:.2f}\n",
             median(replay_s), mb(replay_rss), fmt::join(replay_ratios, " "));
  fmt::print("# replay of every policy / analyze {:.2f}× median ratio (target ≤ {:.0f}×): {}\n", rr,
             kTargetReplayRatio, rr <= kTargetReplayRatio ? "within target" : "ABOVE TARGET");
  if (o.breakdown) pickle_breakdown(file, o);
  return 0;
}

}  // namespace

// This program again with --pickle-only and the same options, waited for.
int rerun_for_pickle(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  args.push_back("--pickle-only");
  std::vector<char*> c;
  for (auto& a : args) c.push_back(a.data());
  c.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, c.data(), environ) != 0) {
    fmt::print(stderr, "mem_analyze: cannot start the pickle comparison\n");
    return 1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool value = i + 1 < argc;
    if (arg == "--smoke") {
      o.events = 200'000;
      o.runs = 1;
      o.pickle_mb = 2;
      o.pickle_runs = 1;
    } else if (arg == "--breakdown") {
      o.breakdown = true;
    } else if (arg == "--pickle-only") {
      o.pickle_only = true;
    } else if (arg == "--events" && value) {
      o.events = std::stoul(argv[++i]);
    } else if (arg == "--runs" && value) {
      o.runs = std::stoi(argv[++i]);
    } else if (arg == "--pickle-mb" && value) {
      o.pickle_mb = std::stod(argv[++i]);
    } else if (arg == "--pickle-runs" && value) {
      o.pickle_runs = std::stoi(argv[++i]);
    } else if (arg == "--plumb" && value) {
      o.plumb = argv[++i];
    } else if (arg == "--pickle" && value) {
      o.pickle = argv[++i];
    } else if (arg == "--python" && value) {
      o.python = argv[++i];
    } else {
      fmt::print(stderr, "mem_analyze: unknown option '{}'\n", arg);
      return 2;
    }
  }
  if (o.pickle_only) return compare_pickle(o) != 0 ? 1 : 0;
  // The analysis first, on a quiet machine: run after the pickle part (Python's 600 MB and a
  // 94 MB file through the page cache) it measured 3.5-5 M events/s against 8-12 alone, huge
  // pages being scarce then. The pickle part runs in a fresh copy of this program: a child's peak
  // RSS (wait4) starts from its parent's peak at the fork, which the trace raised to 800 MB.
  {
    const Trace trace = synthesize(o.events);
    time_analysis(trace, o);
    if (o.breakdown) breakdown(trace, o);
  }
  if (o.pickle_mb > 0) return rerun_for_pickle(argc, argv);
  return 0;
}
