// bench/precision_dump: how fast `plumb precision compare` compares two msprobe dumps of 10,000
// API calls (issue 16's figure: under 10 s).
//
// Writes, in a temporary directory, two dumps ("npu" and "gpu") of N calls each (default 10,000),
// every call with one input and one output of 256 float32 elements, in both of msprobe's modes:
// tensor (dump.json + 2N .npy files per side under dump_tensor_data/) and statistics (dump.json
// only). One call in a hundred drifts on the npu side (a shift of 0.2: cosine about 0.945, a failure
// in tensor mode; the L2 norm moves 6%, a pass under msprobe's statistics rule). Then times compare() on each pair of dumps
// (every core, as the CLI runs it), the median of the runs; the files are in the page cache (just
// written), as they are when one compares a dump one has just copied.
//
//   build/bench/precision_dump [--calls N] [--runs R]
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <string>
#include <vector>

#include "precision/compare.h"

namespace {

namespace fs = std::filesystem;

constexpr int kDefaultCalls = 10000;
constexpr int kElements = 256;
constexpr int kDriftEvery = 100;  // one call in a hundred drifts on the npu side
constexpr double kTargetSeconds = 10;

// A float32 .npy, format 1.0 (NEP 1): magic, version, header length, the header padded with
// spaces to a multiple of 64 bytes and ended by a newline, then the data.
void write_npy(const fs::path& path, const std::vector<float>& values) {
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}", values.size());
  header.append(63 - (10 + header.size()) % 64, ' ').push_back('\n');
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  std::ofstream(path, std::ios::binary) << bytes;
}

// Deterministic values in [-1, 1) (a 64-bit LCG, Knuth's MMIX constants).
std::vector<float> values(uint64_t seed) {
  std::vector<float> out(kElements);
  uint64_t x = seed * 2654435761u + 1;
  for (float& v : out) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    v = static_cast<float>(static_cast<double>(x >> 11) / 9007199254740992.0 * 2 - 1);
  }
  return out;
}

std::string entry(const std::string& name, const std::vector<float>& v, bool tensor) {
  double mx = -INFINITY, mn = INFINITY, sum = 0, sq = 0;
  for (float f : v) {
    mx = std::max<double>(mx, f), mn = std::min<double>(mn, f), sum += f, sq += double(f) * f;
  }
  return fmt::format(R"({{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [{}], "Max": {}, "Min": {},
 "Mean": {}, "Norm": {}, "requires_grad": false{}}})",
                     v.size(), mx, mn, sum / v.size(), std::sqrt(sq),
                     tensor ? fmt::format(R"(, "data_name": "{}.npy")", name) : "");
}

// One side's dump (rank folder `dir`) of `calls` calls.
void write_dump(const fs::path& dir, int calls, bool tensor, bool drift) {
  fs::create_directories(dir / "dump_tensor_data");
  std::string data;
  for (int c = 0; c < calls; ++c) {
    const std::string api = fmt::format("Functional.linear.{}.forward", c);
    const std::vector<float> in = values(2 * c);
    std::vector<float> out = values(2 * c + 1);
    if (drift && c % kDriftEvery == kDriftEvery - 1) {
      for (float& f : out) f += 0.2f;  // cosine about 0.945: a failure under msprobe's rule
    }
    const std::string in_name = api + ".input.0", out_name = api + ".output.0";
    if (tensor) {
      write_npy(dir / "dump_tensor_data" / (in_name + ".npy"), in);
      write_npy(dir / "dump_tensor_data" / (out_name + ".npy"), out);
    }
    data += fmt::format(R"({}"{}": {{"input_args": [{}], "input_kwargs": {{}}, "output": [{}]}})",
                        data.empty() ? "" : ",\n", api, entry(in_name, in, tensor), entry(out_name, out, tensor));
  }
  std::ofstream(dir / "dump.json") << fmt::format(
      R"({{"task": "{}", "level": "L1", "framework": "pytorch", "dump_data_dir": null, "data": {{{}}}}})",
      tensor ? "tensor" : "statistics", data);
}

double median_seconds(int runs, const std::string& a, const std::string& b, plumb::precision::CompareResult& last) {
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    last = plumb::precision::compare(a, b, {});
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int calls = kDefaultCalls, runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(1, std::atoi(argv[i + 1]));
  }
  const fs::path root = fs::temp_directory_path() / fmt::format("plumb_precision_dump_{}", getpid());
  for (const char* mode : {"tensor", "statistics"}) {
    const bool tensor = std::strcmp(mode, "tensor") == 0;
    const auto start = std::chrono::steady_clock::now();
    write_dump(root / mode / "npu" / "step0" / "rank0", calls, tensor, true);
    write_dump(root / mode / "gpu" / "step0" / "rank0", calls, tensor, false);
    const double written = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    plumb::precision::CompareResult r;
    const double s = median_seconds(runs, (root / mode / "npu").string(), (root / mode / "gpu").string(), r);
    fmt::print("# {} mode: two dumps of {} calls written in {:.1f} s; {} pairs, {} failed, first divergence: {} "
               "pairs\n",
               mode, calls, written, r.pairs.size(), r.failed(), r.first_divergence.size());
    fmt::print("compare {} API calls ({} mode, {} threads): {:.3f} s (median of {}; target < {:.0f} s)\n", calls,
               mode, std::max(1u, std::thread::hardware_concurrency()), s, runs, kTargetSeconds);
  }
  fs::remove_all(root);
  return 0;
}
