// The numbers of a measurement, as pure functions: bandwidths as nccl-tests computes them and the
// tail statistics plumb adds. Derivations in docs/comm.md.
#pragma once

#include <cstdint>
#include <span>

namespace plumb::comm {

// The GB of algbw and busbw: nccl-tests reports GB/s with 1 GB = 1e9 bytes.
inline constexpr double kBytesPerGB = 1.0e9;

// algbw in GB/s (1 GB = 1e9 bytes): the row's size divided by its time (nccl-tests
// src/common.cu and doc/PERFORMANCE.md, "Algorithm bandwidth").
double algbw_gbps(uint64_t bytes, double seconds);

// busbw = algbw × the collective's bus factor (nccl-tests doc/PERFORMANCE.md, "Bus bandwidth").
double busbw_gbps(double algbw, double bus_factor);

struct IterationStats {
  double p50_s = 0;
  double p99_s = 0;
  double max_s = 0;
  int straggler = -1;          // rank slowest in the most iterations (lowest rank on a tie)
  double straggler_share = 0;  // fraction of iterations it was slowest
};

// `times` holds nranks × iters seconds, rank-major (rank r's iteration i at r·iters + i). Each
// iteration's time is the maximum over ranks -- when the last rank finished -- and the percentiles
// are taken over those maxima.
IterationStats iteration_stats(std::span<const double> times, int nranks, int iters);

}  // namespace plumb::comm
