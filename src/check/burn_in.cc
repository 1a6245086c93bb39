#include "check/burn_in.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "comm/collective.h"
#include "comm/placement.h"
#include "comm/sweep.h"
#include "common/error.h"
#include "common/shared_library.h"
#include "common/units.h"

namespace plumb::check {
namespace {

// cudaMemcpyKind (CUDA runtime API, driver_types.h): host to device, device to host.
constexpr int kHostToDevice = 1;
constexpr int kDeviceToHost = 2;
// Copies per direction; the bandwidth is the best of them (the first pays for the context and
// page faults), as NVIDIA's bandwidthTest reports a steady copy.
constexpr int kCopies = 5;

using CudaError = int;

struct CudaCopies {
  SharedLibrary lib;
  CudaError (*set_device)(int);
  CudaError (*malloc)(void**, size_t);
  CudaError (*free)(void*);
  CudaError (*malloc_host)(void**, size_t);
  CudaError (*free_host)(void*);
  CudaError (*memcpy)(void*, const void*, size_t, int);

  static std::vector<std::string> names() {
    if (const char* chosen = std::getenv("PLUMB_CUDART_LIBRARY"); chosen && *chosen) return {chosen};
    return {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
  }
  CudaCopies()
      : lib(names(), "install the CUDA runtime or set PLUMB_CUDART_LIBRARY"),
        set_device(lib.function<decltype(set_device)>("cudaSetDevice")),
        malloc(lib.function<decltype(malloc)>("cudaMalloc")),
        free(lib.function<decltype(free)>("cudaFree")),
        malloc_host(lib.function<decltype(malloc_host)>("cudaMallocHost")),
        free_host(lib.function<decltype(free_host)>("cudaFreeHost")),
        memcpy(lib.function<decltype(memcpy)>("cudaMemcpy")) {}
};

// The best of kCopies copies, in GB/s.
double best_copy_gbps(const CudaCopies& cuda, void* to, const void* from, uint64_t bytes, int kind) {
  double best = 0;
  for (int i = 0; i < kCopies; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (cuda.memcpy(to, from, bytes, kind) != 0) return -1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > 0) best = std::max(best, static_cast<double>(bytes) / 1e9 / s);
  }
  return best;
}

std::string row_value(const comm::Row& row) {
  return fmt::format("{} busbw {:.2f} GB/s at {} over {} ranks", row.collective, row.busbw_gbps,
                     format_bytes(row.requested_bytes), row.group_ranks);
}

}  // namespace

const comm::Row* burn_in_row(const std::vector<comm::Row>& rows, const BurnInJudgement& j) {
  for (const comm::Row& row : rows) {
    if (row.layer == "world" && row.collective == j.collective && row.requested_bytes == j.bytes) {
      return &row;
    }
  }
  return nullptr;
}

CheckResult judge_busbw(const comm::Row* row, const BurnInJudgement& j) {
  if (row == nullptr) {
    return skipped("one rank: no data crossed a link; start it under mpirun with one rank per "
                   "accelerator, e.g. mpirun -np 8 plumb check burn-in");
  }
  const std::string expected = j.busbw_gbps > 0 ? fmt::format("≥ {:.2f} GB/s", j.busbw_gbps) : "";
  if (row->wrong > 0) {
    return critical(fmt::format("{}: {} wrong element(s)", row_value(*row), row->wrong), expected,
                    "the collective returned wrong data: run plumb check node, then dcgmi diag -r 3");
  }
  if (j.busbw_gbps > 0 && row->busbw_gbps < j.busbw_gbps) {
    return critical(row_value(*row), expected,
                    "check the slowest link first: plumb comm --layers node and nvidia-smi topo -m");
  }
  return ok(row_value(*row), expected);
}

CheckResult judge_baseline(const comm::Row* row, const BurnInJudgement& j) {
  if (j.baseline_name.empty()) return skipped("no --baseline given");
  if (row == nullptr || !j.baseline_row) {
    return skipped(fmt::format("{} has no {} row at {} on layer world over these ranks",
                               j.baseline_name, j.collective, format_bytes(j.bytes)));
  }
  const double want = j.baseline_share * j.baseline_row->busbw_gbps;
  const std::string expected =
      fmt::format("≥ {:.0f}% of {:.2f} GB/s ({})", 100 * j.baseline_share,
                  j.baseline_row->busbw_gbps, j.baseline_name);
  if (row->busbw_gbps < want) {
    return warning(row_value(*row), expected,
                   "compare versions and settings with the baseline's: plumb env, plumb diff");
  }
  return ok(row_value(*row), expected);
}

CheckResult measure_h2d(uint64_t bytes, int device, double min_gbps) {
  std::unique_ptr<CudaCopies> cuda;
  try {
    cuda = std::make_unique<CudaCopies>();
  } catch (const Error& e) {
    return skipped(fmt::format("no CUDA runtime: host↔device bandwidth not measured ({})", e.what()));
  }
  if (cuda->set_device(device) != 0) {
    return skipped(fmt::format("the CUDA runtime ({}) sees no device {}", cuda->lib.name(), device));
  }
  void* host = nullptr;
  void* dev = nullptr;
  if (cuda->malloc_host(&host, bytes) != 0 || cuda->malloc(&dev, bytes) != 0) {
    if (host) cuda->free_host(host);
    return unknown(fmt::format("could not allocate {} on the host and device {}", format_bytes(bytes), device));
  }
  const double h2d = best_copy_gbps(*cuda, dev, host, bytes, kHostToDevice);
  const double d2h = best_copy_gbps(*cuda, host, dev, bytes, kDeviceToHost);
  cuda->free(dev);
  cuda->free_host(host);
  if (h2d < 0 || d2h < 0) return unknown(fmt::format("cudaMemcpy failed on device {}", device));
  const std::string value = fmt::format("device {}: host→device {:.2f} GB/s, device→host {:.2f} GB/s "
                                        "({} pinned)", device, h2d, d2h, format_bytes(bytes));
  const std::string expected = min_gbps > 0 ? fmt::format("≥ {:.2f} GB/s each way", min_gbps) : "";
  if (min_gbps > 0 && std::min(h2d, d2h) < min_gbps) {
    return warning(value, expected, "check the card's PCIe link first: plumb check node --only pcie");
  }
  return ok(value, expected);
}

NodeReport run_burn_in(comm::Communicator& world, const BurnInRun& run) {
  const auto start = std::chrono::steady_clock::now();
  const BurnInJudgement& j = run.judgement;
  std::vector<comm::Row> rows;
  if (world.size() > 1) {
    comm::SweepOptions s;
    s.min_bytes = j.bytes;
    s.max_bytes = j.bytes;
    s.iters = run.iters;
    s.warmup = run.warmup;
    s.timeout_seconds = 0;
    s.collectives = {&comm::find_collective(j.collective, "--collective")};
    s.layers = {"world"};
    comm::Placement placement;
    for (int r = 0; r < world.size(); ++r) placement.ranks.push_back({"", 0, r});
    placement.nodes.push_back({"", 0, 0});
    placement.racks.push_back("");
    rows = comm::run_sweep(world, placement, comm::plan_layers(placement, s), s).rows;
  }
  if (world.rank() != 0) return {};
  const comm::Row* row = burn_in_row(rows, j);
  std::vector<CheckResult> checks = {judge_busbw(row, j), judge_baseline(row, j),
                                     measure_h2d(run.h2d_bytes, run.device, run.h2d_min_gbps)};
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return burn_in_report(run.host, run.created, seconds, std::move(checks));
}

NodeReport burn_in_report(std::string host, std::string created, double seconds,
                          std::vector<CheckResult> checks) {
  NodeReport report;
  report.command = "burn-in";
  report.host = std::move(host);
  report.created = std::move(created);
  report.root = "/";
  report.seconds = seconds;
  const char* names[] = {"burn_in.busbw", "burn_in.baseline", "burn_in.h2d"};
  for (size_t i = 0; i < checks.size(); ++i) {
    if (checks[i].name.empty() && i < std::size(names)) checks[i].name = names[i];
  }
  report.checks = std::move(checks);
  return report;
}

}  // namespace plumb::check
