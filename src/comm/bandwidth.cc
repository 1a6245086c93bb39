#include "comm/bandwidth.h"

#include <algorithm>
#include <vector>

#include "common/stats.h"

namespace plumb::comm {

double algbw_gbps(uint64_t bytes, double seconds) {
  if (seconds <= 0) return 0.0;
  return static_cast<double>(bytes) / kBytesPerGB / seconds;
}

double busbw_gbps(double algbw, double bus_factor) { return algbw * bus_factor; }

IterationStats iteration_stats(std::span<const double> times, int nranks, int iters) {
  IterationStats stats;
  if (nranks <= 0 || iters <= 0) return stats;
  std::vector<double> slowest(static_cast<size_t>(iters), 0.0);
  std::vector<int> times_slowest(static_cast<size_t>(nranks), 0);
  for (int i = 0; i < iters; ++i) {
    int who = 0;
    for (int r = 0; r < nranks; ++r) {
      const double t = times[static_cast<size_t>(r) * static_cast<size_t>(iters) + i];
      if (r == 0 || t > slowest[static_cast<size_t>(i)]) {
        slowest[static_cast<size_t>(i)] = t;
        who = r;
      }
    }
    ++times_slowest[static_cast<size_t>(who)];
  }
  std::sort(slowest.begin(), slowest.end());
  stats.p50_s = percentile_sorted(slowest, 50);
  stats.p99_s = percentile_sorted(slowest, 99);
  stats.max_s = slowest.back();
  const auto most = std::max_element(times_slowest.begin(), times_slowest.end());
  stats.straggler = static_cast<int>(most - times_slowest.begin());
  stats.straggler_share = static_cast<double>(*most) / iters;
  return stats;
}

}  // namespace plumb::comm
