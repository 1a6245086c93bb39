// bench/comm_overhead: does plumb's timed loop add anything to what it measures?
//
// For allreduce float32 at 1, 8 and 64 MiB, the time plumb reports (comm::measure, the code
// `plumb comm` runs) against a minimal raw MPI loop timed the same way -- barrier, MPI_Wtime,
// `iters` back-to-back MPI_Allreduce, mean over ranks of each rank's average -- in the same run,
// alternating which goes first. Prints each pair's ratio and the median over runs; the target is
// a median ratio ≤ 1.03. Run under mpirun with 2 ranks (scripts/bench).
//
//   mpirun -np 2 build/bench/comm_overhead [--runs N] [--iters N] [--smoke]
#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "comm/collective.h"
#include "comm/mpi_backend.h"
#include "comm/sweep.h"
#include "common/stats.h"
#include "common/units.h"

namespace {

using plumb::kMiB;

struct Settings {
  int runs = 7;
  int iters = 20;
  int warmup = 5;
  std::vector<uint64_t> sizes = {1 * kMiB, 8 * kMiB, 64 * kMiB};
  double budget = 1.03;
};

Settings parse(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) s.runs = std::stoi(argv[++i]);
    if (arg == "--iters" && i + 1 < argc) s.iters = std::stoi(argv[++i]);
    if (arg == "--smoke") {  // a seconds-long run that proves the benchmark still works
      s.runs = 2;
      s.iters = 3;
      s.sizes = {64 * 1024};
    }
  }
  return s;
}

// The reference: the loop a person would write by hand to time MPI_Allreduce.
double raw_allreduce_seconds(uint64_t bytes, const Settings& s) {
  const auto count = static_cast<int>(bytes / sizeof(float));
  std::vector<float> send(static_cast<size_t>(count), 1.0f);
  std::vector<float> recv(static_cast<size_t>(count), 0.0f);
  for (int i = 0; i < s.warmup; ++i) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < s.iters; ++i) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  const double mine = (MPI_Wtime() - start) / s.iters;
  double sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return sum / ranks;
}

double plumb_allreduce_seconds(plumb::comm::Communicator& world, uint64_t bytes,
                               const Settings& s) {
  plumb::comm::SweepOptions o;
  o.iters = s.iters;
  o.warmup = s.warmup;
  o.min_bytes = o.max_bytes = bytes;
  const plumb::comm::Row row =
      plumb::comm::measure(world, plumb::comm::find_collective("allreduce"), bytes, o);
  // time_us is filled on rank 0 only; share it.
  double seconds = row.time_us * 1e-6;
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  plumb::comm::MpiSession session(&argc, &argv);
  const Settings s = parse(argc, argv);
  auto world = plumb::comm::MpiCommunicator::world();
  const bool leader = world->rank() == 0;
  if (leader) {
    fmt::print("# bench/comm_overhead: plumb comm vs a raw MPI_Allreduce loop, float32, {} ranks, "
               "{} iters, {} runs (median of per-run ratios)\n",
               world->size(), s.iters, s.runs);
    fmt::print("# {:>8} {:>12} {:>12} {:>8}  {}\n", "size", "raw_us", "plumb_us", "ratio",
               "ratio per run");
  }
  double worst = 0;
  for (uint64_t bytes : s.sizes) {
    std::vector<double> raw, ours, ratios;
    for (int run = 0; run < s.runs; ++run) {
      double r, p;
      if (run % 2 == 0) {  // alternate the order so that drift favours neither
        r = raw_allreduce_seconds(bytes, s);
        p = plumb_allreduce_seconds(*world, bytes, s);
      } else {
        p = plumb_allreduce_seconds(*world, bytes, s);
        r = raw_allreduce_seconds(bytes, s);
      }
      raw.push_back(r);
      ours.push_back(p);
      ratios.push_back(p / r);
    }
    const double ratio = plumb::percentile(ratios, 50);
    worst = std::max(worst, ratio);
    if (leader) {
      std::string each;
      for (double x : ratios) each += fmt::format(" {:.3f}", x);
      fmt::print("  {:>8} {:>12.1f} {:>12.1f} {:>8.3f} {}\n", plumb::format_bytes(bytes),
                 plumb::percentile(raw, 50) * 1e6, plumb::percentile(ours, 50) * 1e6, ratio, each);
    }
  }
  if (leader) {
    fmt::print("# worst median ratio {:.3f} (target ≤ {:.2f}): {}\n", worst, s.budget,
               worst <= s.budget ? "within target" : "OVER TARGET");
  }
  return 0;
}
