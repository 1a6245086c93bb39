// bench/step_read: how fast `plumb step` reads and analyses profiler traces.
//
// Figures (the step issue): ≥ 300 MB/s of trace JSON per core; 8 ranks × 200 MB analysed in
// < 10 s wall on the 2-core machine; peak memory ≤ 1× the uncompressed trace size. HTA, the peer
// the issue names, is a pip package and cannot be installed here (Debian packages only), so the
// peer is the first thing HTA does with a trace — Python's json.load of the same files (HTA's
// parser reads each rank with json, in a multiprocessing pool) — measured in the same run,
// alternating, each run a fresh process:
//   1. one rank, one core: `plumb step rank-0.json -j 1 --json /dev/null` against
//      `python3 -c "json.load(open(F))"`; MB/s = file bytes / wall time, whole process.
//   2. the set: `plumb step DIR --json /dev/null` (a reading thread per core) against Python
//      loading every rank with a pool of as many processes; wall time, peak RSS of plumb's process
//      (wait4) against the set's uncompressed bytes.
// The traces are synthetic Kineto JSON shaped like tests/fixtures/traces (host ops, runtime
// launches, flow events, kernels with their launch arguments, NCCL kernels with collective
// arguments on their own stream, ProfilerStep annotations, fractional-µs timestamps relative to
// baseTimeNanoseconds), written once per run into a temporary directory.
//
// --trace FILE times a real (uncompressed) trace the same way as part 1, e.g. the DDP fixture
// unzipped: its events are denser than the synthetic ones (fewer bytes per event).
//
//   build/bench/step_read [--ranks N] [--mb MB] [--runs N] [--gzip] [--trace FILE] [--smoke]
//                         [--plumb PATH]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.h"

extern char** environ;

namespace {

constexpr double kTargetMBPerCore = 300;   // the figures
constexpr double kTargetSetSeconds = 10;
constexpr double kTargetPeakRatio = 1.0;

struct Options {
  int ranks = 8;
  double mb = 200;
  int runs = 3;
  bool gzip = false;
  std::string trace;  // --trace FILE: also time this real trace (one rank, one core)
  std::string plumb = PLUMB_BINARY;
  std::string python = "python3";
};

double median(std::vector<double> v) { return plumb::percentile(v, 50); }

// A compute kernel name as long as real ones (templates and argument lists).
constexpr const char* kKernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3>)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, "
    "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, "
    "c10::BFloat16 const*, int)",
    "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, "
    "false, true, false, false>(Flash_fwd_params)",
};
constexpr const char* kOps[] = {"aten::add", "aten::mm", "aten::_softmax",
                                "aten::_flash_attention_forward"};

// Writes one rank's trace of about `bytes`. Rank r's collectives start r·7 µs late (a mild
// straggler gradient), so the cross-rank analysis has work to do.
class Writer {
 public:
  Writer(int rank, int ranks) : rank_(rank), ranks_(ranks) {}

  std::string trace(uint64_t bytes) {
    out_.reserve(bytes + (1 << 20));
    out_ += fmt::format(
        "{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, "
        "\"world_size\": {}}},\n  \"baseTimeNanoseconds\": 1711964646000000000,\n"
        "  \"traceEvents\": [\n",
        rank_, ranks_);
    meta();
    int step = 100;
    while (out_.size() < bytes) one_step(step++);
    out_ += fmt::format(
        "  {{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": "
        "\"Spans\", \"tid\": \"PyTorch Profiler\", \"ts\": {:.3f}, \"dur\": {:.3f}}}\n  ]\n}}\n",
        kT0, now_ - kT0);
    return std::move(out_);
  }

 private:
  static constexpr double kT0 = 4458676416788.066;  // µs after baseTimeNanoseconds, as a fixture
  static constexpr int kLayers = 48;
  static constexpr int kKernelsPerLayer = 12;

  void meta() {
    out_ += "  {\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0, \"pid\": 0, \"tid\": 0, "
            "\"args\": {\"name\": \"python3\"}},\n";
  }

  void one_step(int step) {
    double start = now_;
    now_ += 5;
    for (int layer = 0; layer < kLayers; ++layer) {
      for (int k = 0; k < kKernelsPerLayer; ++k) launch(k % 4);
      if (layer % 4 == 3) collective(layer);
    }
    now_ += 20;
    uint64_t id = ++id_;
    out_ += fmt::format(
        "  {{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{}\", "
        "\"pid\": 2910249, \"tid\": 2910249, \"ts\": {:.3f}, \"dur\": {:.3f}, \"args\": "
        "{{\"External id\": {}, \"Record function id\": 0, \"Ev Idx\": {}}}}},\n",
        step, start, now_ - start, id, id);
  }

  void launch(int k) {
    ++id_;
    double host = now_;
    double device = now_ + 40;
    double dur = 3.0 + static_cast<double>((id_ * 7919) % 97) / 7.0;
    out_ += fmt::format(
        "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{}\", \"pid\": 2910249, \"tid\": "
        "2910249, \"ts\": {:.3f}, \"dur\": 9.125, \"args\": {{\"External id\": {}, \"Record function "
        "id\": 0, \"Ev Idx\": {}, \"Input Dims\": [[8, 4096, 4096], [8, 4096, 4096], []], \"Input "
        "type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]}}}},\n"
        "  {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
        "2910249, \"tid\": 2910249, \"ts\": {:.3f}, \"dur\": 4.250, \"args\": {{\"External id\": {}, "
        "\"cbid\": 211, \"correlation\": {}}}}},\n"
        "  {{\"ph\": \"s\", \"id\": {}, \"pid\": 2910249, \"tid\": 2910249, \"ts\": {:.3f}, \"cat\": "
        "\"ac2g\", \"name\": \"ac2g\"}},\n"
        "  {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": 7, \"ts\": "
        "{:.3f}, \"dur\": {:.3f}, \"args\": {{\"External id\": {}, \"queued\": 0, \"device\": 0, "
        "\"context\": 1, \"stream\": 7, \"correlation\": {}, \"registers per thread\": 96, \"shared "
        "memory\": 87568, \"blocks per SM\": 0.074074, \"warps per SM\": 1.259259, \"grid\": [132, "
        "1, 1], \"block\": [384, 1, 1], \"est. achieved occupancy %\": 12}}}},\n"
        "  {{\"ph\": \"f\", \"id\": {}, \"pid\": 0, \"tid\": 7, \"ts\": {:.3f}, \"cat\": \"ac2g\", "
        "\"name\": \"ac2g\", \"bp\": \"e\"}},\n",
        kOps[k], host, id_, id_, host + 2, id_, id_, id_, host + 2, kKernels[k], device, dur, id_,
        id_, id_, device);
    now_ += dur + 0.5;
  }

  void collective(int layer) {
    ++id_;
    double start = now_ + 10 + 7.0 * rank_;
    double dur = 180.0 + (layer % 3) * 40;
    uint64_t nelems = 8388608;
    out_ += fmt::format(
        "  {{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c10d::allreduce_\", \"pid\": 2910249, "
        "\"tid\": 2910249, \"ts\": {:.3f}, \"dur\": 30.5, \"args\": {{\"External id\": {}, \"Ev "
        "Idx\": {}}}}},\n"
        "  {{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
        "2910249, \"tid\": 2910249, \"ts\": {:.3f}, \"dur\": 6.0, \"args\": {{\"External id\": {}, "
        "\"cbid\": 211, \"correlation\": {}}}}},\n"
        "  {{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
        "(ncclDevKernelArgsStorage<4096ul>)\", \"pid\": 0, \"tid\": 20, \"ts\": {:.3f}, \"dur\": "
        "{:.3f}, \"args\": {{\"External id\": {}, \"queued\": 0, \"device\": 0, \"context\": 1, "
        "\"stream\": 20, \"correlation\": {}, \"registers per thread\": 96, \"shared memory\": "
        "103808, \"blocks per SM\": 0.074324, \"warps per SM\": 1.189189, \"grid\": [16, 1, 1], "
        "\"block\": [640, 1, 1], \"est. achieved occupancy %\": 0, \"Collective name\": "
        "\"allreduce\", \"In msg nelems\": {}, \"Out msg nelems\": {}, \"Group size\": {}, "
        "\"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process "
        "Group Name\": \"0\", \"Process Group Description\": \"default_pg\", \"Process Group "
        "Ranks\": \"[{}]\"}}}},\n",
        now_, id_, id_, now_ + 3, id_, id_, start, dur, id_, id_, nelems, nelems, ranks_,
        rank_list());
  }

  std::string rank_list() const {
    std::vector<int> r(static_cast<size_t>(ranks_));
    for (int i = 0; i < ranks_; ++i) r[static_cast<size_t>(i)] = i;
    return fmt::format("{}", fmt::join(r, ", "));
  }

  int rank_;
  int ranks_;
  double now_ = kT0;
  uint64_t id_ = 1000;
  std::string out_;
};

double seconds_of(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Child {
  double seconds = 0;
  uint64_t peak_rss = 0;
  int status = 0;
};

Child run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
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

struct Pair {
  std::vector<double> plumb_s, peer_s, ratios;
  uint64_t plumb_rss = 0;
};

// Alternates which goes first; a failed run is reported and ends the benchmark.
bool alternate(const std::vector<std::string>& plumb, const std::vector<std::string>& peer,
               int runs, Pair& out) {
  if (run(plumb).status != 0 || run(peer).status != 0) {
    fmt::print("# a warm-up run failed: {}\n", fmt::join(plumb, " "));
    return false;
  }
  for (int r = 0; r < runs; ++r) {
    Child a, b;
    if (r % 2 == 0) {
      a = run(plumb);
      b = run(peer);
    } else {
      b = run(peer);
      a = run(plumb);
    }
    if (a.status != 0 || b.status != 0) return false;
    out.plumb_s.push_back(a.seconds);
    out.peer_s.push_back(b.seconds);
    out.ratios.push_back(b.seconds / a.seconds);
    out.plumb_rss = std::max(out.plumb_rss, a.peak_rss);
  }
  return true;
}

std::string python_load(const std::vector<std::string>& files, int processes) {
  if (processes == 1 && files.size() == 1) {
    return fmt::format("import json\njson.load(open('{}'))\n", files[0]);
  }
  std::string list;
  for (const std::string& f : files) list += fmt::format("'{}',", f);
  return fmt::format(
      "import json, multiprocessing as mp\n"
      "def load(f):\n    json.load(open(f)); return 0\n"
      "if __name__ == '__main__':\n"
      "    with mp.Pool({}) as p: p.map(load, [{}])\n",
      processes, list);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--ranks") o.ranks = std::stoi(next());
    else if (a == "--mb") o.mb = std::stod(next());
    else if (a == "--runs") o.runs = std::stoi(next());
    else if (a == "--gzip") o.gzip = true;
    else if (a == "--trace") o.trace = next();
    else if (a == "--plumb") o.plumb = next();
    else if (a == "--smoke") { o.ranks = 2; o.mb = 2; o.runs = 1; }
    else { fmt::print(stderr, "step_read: unknown option {}\n", a); std::exit(2); }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("plumb-step-bench-{}", getpid());
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{dir};
  std::vector<std::string> files;
  uint64_t total = 0;
  double gen = seconds_of([&] {
    for (int r = 0; r < o.ranks; ++r) {
      std::string text = Writer(r, o.ranks).trace(static_cast<uint64_t>(o.mb * 1e6));
      files.push_back((dir / fmt::format("rank-{}.json", r)).string());
      std::ofstream(files.back(), std::ios::binary) << text;
      total += text.size();
    }
  });
  const double one = static_cast<double>(fs::file_size(files[0]));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fmt::print("# step_read: {} ranks × {:.0f} MB synthetic Kineto JSON ({:.0f} MB, written in "
             "{:.1f} s); {} cores; median of {} runs, alternating, each a fresh process\n",
             o.ranks, one / 1e6, static_cast<double>(total) / 1e6, gen, cores, o.runs);

  Pair single;
  if (!alternate({o.plumb, "step", files[0], "-j", "1", "--json", "/dev/null"},
                 {o.python, "-c", python_load({files[0]}, 1)}, o.runs, single)) return 1;
  double per_core = one / 1e6 / median(single.plumb_s);
  fmt::print("  one rank, one core: plumb step {:.3f} s = {:.0f} MB/s; python json.load {:.3f} s "
             "= {:.0f} MB/s; per-run ratios python/plumb {:.2f}\n",
             median(single.plumb_s), per_core, median(single.peer_s),
             one / 1e6 / median(single.peer_s), fmt::join(single.ratios, " "));

  Pair set;
  if (!alternate({o.plumb, "step", dir.string(), "--json", "/dev/null"},
                 {o.python, "-c", python_load(files, cores)}, o.runs, set)) return 1;
  double peak = static_cast<double>(set.plumb_rss) / static_cast<double>(total);
  fmt::print("  the set: plumb step {:.2f} s, peak RSS {:.0f} MB ({:.2f}× the trace); python "
             "json.load pool({}) {:.2f} s; per-run ratios python/plumb {:.2f}\n",
             median(set.plumb_s), static_cast<double>(set.plumb_rss) / 1e6, peak, cores,
             median(set.peer_s), fmt::join(set.ratios, " "));
  if (!o.trace.empty()) {
    Pair real;
    if (!alternate({o.plumb, "step", o.trace, "-j", "1", "--json", "/dev/null"},
                   {o.python, "-c", python_load({o.trace}, 1)}, o.runs, real)) {
      return 1;
    }
    const double mb = static_cast<double>(fs::file_size(o.trace)) / 1e6;
    fmt::print("  real trace {} ({:.1f} MB), one core: plumb step {:.3f} s = {:.0f} MB/s; python "
               "json.load {:.3f} s; per-run ratios python/plumb {:.2f}\n",
               o.trace, mb, median(real.plumb_s), mb / median(real.plumb_s), median(real.peer_s),
               fmt::join(real.ratios, " "));
  }
  if (o.gzip) {
    std::string gz = files[0] + ".gz";
    run({"sh", "-c", fmt::format("gzip -1 -c '{}' > '{}'", files[0], gz)});
    Pair zipped;
    if (!alternate({o.plumb, "step", gz, "-j", "1", "--json", "/dev/null"},
                   {"sh", "-c", fmt::format("gzip -dc '{}' > /dev/null", gz)}, o.runs, zipped)) {
      return 1;
    }
    fmt::print("  one rank gzip: plumb step {:.3f} s = {:.0f} MB/s of JSON; gzip -dc alone {:.3f} s;"
               " per-run ratios gzip/plumb {:.2f}\n",
               median(zipped.plumb_s), one / 1e6 / median(zipped.plumb_s), median(zipped.peer_s),
               fmt::join(zipped.ratios, " "));
  }
  fmt::print("# step python/plumb one core {:.2f}× · {:.0f} MB/s per core (target ≥ {:.0f}): {} · "
             "set {:.2f} s (target < {:.0f} s for 8 × 200 MB): {} · peak {:.2f}× the trace "
             "(target ≤ {:.0f}×): {}\n",
             median(single.ratios), per_core, kTargetMBPerCore,
             per_core >= kTargetMBPerCore ? "within target" : "BELOW TARGET", median(set.plumb_s),
             kTargetSetSeconds, median(set.plumb_s) < kTargetSetSeconds ? "within target" : "ABOVE",
             peak, kTargetPeakRatio, peak <= kTargetPeakRatio ? "within target" : "ABOVE");
  return 0;
}
