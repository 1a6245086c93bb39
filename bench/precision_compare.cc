// bench/precision_compare: how fast compare_tensors computes every metric of a tensor pair.
//
// Figures (issue 16): two 1 GiB float32 tensors compared ≥ 5× faster than numpy doing the same
// metrics, and at least half of memcpy's bandwidth on one core. Two raw float32 files are
// written once into a temporary directory (b = a with relative noise, zeros here and there), then,
// alternating, each run:
//   1. plumb, in this process on one thread: map both files, compare_tensors, unmap ("whole");
//      then compare_tensors again on the already-mapped, faulted pages ("mapped");
//   2. memcpy of the same bytes (both files' mapped pages) into a buffer already written once:
//      the bandwidth one core reads and writes memory with;
//   3. numpy (bench/precision_numpy.py) in a fresh /usr/bin/python3 process: np.memmap and the same
//      metrics in float64, chunked; its own timer (from mapping to the last metric, without the
//      interpreter's start and numpy's import) and the process's wall time.
// Prints each run, the medians, the median of the per-run ratios numpy/plumb (numpy's own timer
// against plumb's whole), and plumb's input bytes per second over memcpy's ("mapped": both read
// pages already in memory), by the wall clock and by this thread's CPU time (on a busy machine the
// wall clock also counts other processes). The metrics of the last run are checked against numpy's.
//
//   build-release/bench/precision_compare [--mb MIB] [--runs N] [--smoke] [--dir DIR]
//                                         [--python PATH] [--no-numpy]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/stats.h"
#include "precision/metrics.h"

namespace {

using plumb::precision::DType;
using plumb::precision::Metrics;
using plumb::precision::Tensor;

constexpr double kTargetNumpyRatio = 5;    // the figures
constexpr double kTargetMemcpyShare = 0.5;

struct Options {
  double mb = 1024;  // per tensor
  int runs = 5;
  std::string dir;
  std::string python = "/usr/bin/python3";
  std::string script = PLUMB_BENCH_DIR "/precision_numpy.py";
  bool numpy = true;  // --no-numpy: plumb and memcpy only (tuning the kernel)
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This thread's CPU time: on a busy machine the wall time also holds the time other processes ran.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) { return plumb::percentile(v, 50); }

// a: values in [-4, 4) from xorshift64; b = a·(1 + noise of ±0.2%), every 1000th equal, every
// 1009th zero. Written 1 Mi elements at a time.
void write_pair(const std::string& a_path, const std::string& b_path, size_t elements) {
  std::ofstream a(a_path, std::ios::binary), b(b_path, std::ios::binary);
  std::vector<float> va(1 << 20), vb(1 << 20);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<double>(state >> 11) * 0x1p-53;
  };
  for (size_t done = 0; done < elements; done += va.size()) {
    const size_t n = std::min(va.size(), elements - done);
    for (size_t i = 0; i < n; ++i) {
      const size_t k = done + i;
      va[i] = static_cast<float>(8 * next() - 4);
      vb[i] = k % 1000 == 0 ? va[i] : k % 1009 == 0 ? 0.0f : static_cast<float>(va[i] * (1 + 0.004 * (next() - 0.5)));
    }
    a.write(reinterpret_cast<const char*>(va.data()), static_cast<std::streamsize>(n * sizeof(float)));
    b.write(reinterpret_cast<const char*>(vb.data()), static_cast<std::streamsize>(n * sizeof(float)));
  }
}

// A read-only mapping of a whole file, as a 1-D float32 tensor.
struct Mapped {
  void* base = MAP_FAILED;
  size_t size = 0;
  explicit Mapped(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) throw std::runtime_error("cannot open " + path);
    size = static_cast<size_t>(st.st_size);
    base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) throw std::runtime_error("cannot map " + path);
    madvise(base, size, MADV_SEQUENTIAL);
  }
  ~Mapped() { munmap(base, size); }
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  Tensor tensor(const std::string& name) const {
    Tensor t;
    t.name = name;
    t.dtype = DType::kFloat32;
    t.shape = {static_cast<int64_t>(size / sizeof(float))};
    t.data = static_cast<const std::byte*>(base);
    return t;
  }
};

struct PlumbRun {
  double whole = 0, mapped = 0, memcpy = 0;
  double whole_cpu = 0, mapped_cpu = 0, memcpy_cpu = 0;  // CPU seconds of this thread
  Metrics metrics;
};

PlumbRun run_plumb(const std::string& a_path, const std::string& b_path, std::vector<std::byte>& scratch) {
  PlumbRun r;
  const double t0 = now(), c0 = cpu_now();
  {
    const Mapped a(a_path), b(b_path);
    r.metrics = plumb::precision::compare_tensors(a.tensor(a_path), b.tensor(b_path));
  }
  r.whole = now() - t0, r.whole_cpu = cpu_now() - c0;
  const Mapped a(a_path), b(b_path);
  plumb::precision::compare_tensors(a.tensor(a_path), b.tensor(b_path));  // faults the pages in
  const double t1 = now(), c1 = cpu_now();
  plumb::precision::compare_tensors(a.tensor(a_path), b.tensor(b_path));
  r.mapped = now() - t1, r.mapped_cpu = cpu_now() - c1;
  const double t2 = now(), c2 = cpu_now();
  std::memcpy(scratch.data(), a.base, a.size);
  std::memcpy(scratch.data(), b.base, b.size);
  r.memcpy = now() - t2, r.memcpy_cpu = cpu_now() - c2;
  return r;
}

struct NumpyRun {
  double own = 0, own_cpu = 0, process = 0;
  std::map<std::string, double> values;
};

NumpyRun run_numpy(const Options& o, const std::string& a_path, const std::string& b_path) {
  NumpyRun r;
  const std::string command = o.python + " " + o.script + " " + a_path + " " + b_path;
  const double t0 = now();
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe.get())) out.append(buffer, n);
  if (pclose(pipe.release()) != 0) throw std::runtime_error(command + " failed");
  r.process = now() - t0;
  std::istringstream lines(out);
  std::string key, value;
  while (lines >> key >> value) r.values[key] = std::stod(value);
  r.own = r.values.at("seconds");
  r.own_cpu = r.values.at("cpu_seconds");
  return r;
}

// plumb's metrics against numpy's: relative 1e-9 (numpy sums chunk by chunk in another order).
int check_agreement(const Metrics& m, const std::map<std::string, double>& ref) {
  const std::vector<std::pair<std::string, double>> ours = {
      {"cosine", m.cosine}, {"max_abs_err", m.max_abs_err}, {"max_rel_err", m.max_rel_err},
      {"mean_abs_err", m.mean_abs_err}, {"rmse", m.rmse}, {"euclidean", m.euclidean},
      {"one_thousandth_ratio", m.one_thousandth_ratio}, {"five_thousandths_ratio", m.five_thousandths_ratio},
      {"max_ulp", static_cast<double>(m.max_ulp)}, {"ulp_beyond_share", m.ulp_beyond_share},
      {"not_close", static_cast<double>(m.not_close)}};
  int bad = 0;
  for (const auto& [name, value] : ours) {
    const double theirs = ref.at(name);
    if (std::fabs(value - theirs) > 1e-9 * std::fabs(theirs)) {
      fmt::print("# DISAGREE {}: plumb {} numpy {}\n", name, value, theirs);
      ++bad;
    }
  }
  return bad;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : throw std::runtime_error(arg + " needs a value"); };
    if (arg == "--mb") o.mb = std::stod(value());
    else if (arg == "--runs") o.runs = std::stoi(value());
    else if (arg == "--dir") o.dir = value();
    else if (arg == "--python") o.python = value();
    else if (arg == "--smoke") o.mb = 16, o.runs = 1;
    else if (arg == "--no-numpy") o.numpy = false;
    else throw std::runtime_error("unknown option " + arg);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const std::string dir = o.dir.empty() ? (std::filesystem::temp_directory_path() / "plumb_precision_bench").string() : o.dir;
  std::filesystem::create_directories(dir);
  const std::string a_path = dir + "/a.f32", b_path = dir + "/b.f32";
  const auto elements = static_cast<size_t>(o.mb * 1024 * 1024 / sizeof(float));
  const double bytes = 2.0 * static_cast<double>(elements) * sizeof(float);  // both inputs
  write_pair(a_path, b_path, elements);
  std::vector<std::byte> scratch(elements * sizeof(float), std::byte{1});  // written once: no faults
  fmt::print("# precision compare: two {} MiB float32 files ({} elements each), {} runs alternating "
             "plumb (one thread) and numpy ({})\n",
             o.mb, elements, o.runs, o.python);
  std::vector<double> whole, mapped, copies, numpy_own, numpy_process, ratios, mapped_cpu, copies_cpu;
  std::vector<double> cpu_ratios;  // numpy's CPU seconds over plumb's whole run's
  PlumbRun last;
  NumpyRun last_numpy;
  for (int run = 1; run <= o.runs; ++run) {
    last = run_plumb(a_path, b_path, scratch);
    if (o.numpy) last_numpy = run_numpy(o, a_path, b_path);
    whole.push_back(last.whole), mapped.push_back(last.mapped), copies.push_back(last.memcpy);
    mapped_cpu.push_back(last.mapped_cpu), copies_cpu.push_back(last.memcpy_cpu);
    numpy_own.push_back(last_numpy.own), numpy_process.push_back(last_numpy.process);
    if (o.numpy) {
      ratios.push_back(last_numpy.own / last.whole);
      cpu_ratios.push_back(last_numpy.own_cpu / last.whole_cpu);
    }
    fmt::print("run {}: plumb {:.3f} s (cpu {:.3f} s; mapped pages {:.3f} s, cpu {:.3f} s), memcpy {:.3f} s "
               "(cpu {:.3f} s), numpy {:.3f} s (cpu {:.3f} s, process {:.3f} s), numpy/plumb {:.1f}x\n",
               run, last.whole, last.whole_cpu, last.mapped, last.mapped_cpu, last.memcpy, last.memcpy_cpu,
               last_numpy.own, last_numpy.own_cpu, last_numpy.process, o.numpy ? ratios.back() : 0.0);
    std::fflush(stdout);
  }
  const int bad = o.numpy ? check_agreement(last.metrics, last_numpy.values) : 0;
  const double plumb_rate = bytes / median(mapped), memcpy_rate = bytes / median(copies);
  fmt::print("# plumb median {:.3f} s ({:.2f} GB/s of input; {:.2f} GB/s on mapped pages); numpy median "
             "{:.3f} s (process {:.3f} s)\n",
             median(whole), bytes / median(whole) / 1e9, plumb_rate / 1e9, median(numpy_own), median(numpy_process));
  if (o.numpy) {
    fmt::print("# precision compare numpy/plumb: median of per-run ratios {:.1f}x (target >= {}x); in CPU "
               "time {:.1f}x\n",
               median(ratios), kTargetNumpyRatio, median(cpu_ratios));
  }
  fmt::print("# precision compare plumb/memcpy: {:.2f} GB/s / {:.2f} GB/s = {:.2f} of memcpy on one core "
             "(target >= {})\n",
             plumb_rate / 1e9, memcpy_rate / 1e9, plumb_rate / memcpy_rate, kTargetMemcpyShare);
  const double cpu_share = (bytes / median(mapped_cpu)) / (bytes / median(copies_cpu));
  fmt::print("# precision compare plumb/memcpy in CPU time (what a busy machine leaves out): {:.2f} GB/s / "
             "{:.2f} GB/s = {:.2f}\n",
             bytes / median(mapped_cpu) / 1e9, bytes / median(copies_cpu) / 1e9, cpu_share);
  if (o.numpy) fmt::print("# metrics agree with numpy: {}\n", bad == 0 ? "yes" : "NO");
  std::filesystem::remove(a_path), std::filesystem::remove(b_path);
  return bad == 0 ? 0 : 1;
} catch (const std::exception& e) {
  fmt::print(stderr, "precision_compare: {}\n", e.what());
  return 2;
}
