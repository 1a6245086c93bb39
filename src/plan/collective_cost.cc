#include "plan/collective_cost.h"

#include <cmath>

namespace plumb::plan {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "allreduce";
    case Collective::kAllGather: return "allgather";
    case Collective::kReduceScatter: return "reducescatter";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kHierarchical: return "hierarchical";
  }
  return "";
}

double bus_factor(Collective c, int n) {
  if (c == Collective::kSendRecv) return 1;
  const double f = static_cast<double>(n - 1) / n;
  return c == Collective::kAllReduce ? 2 * f : f;
}

double ring_seconds(Collective c, double bytes, int n, const Link& link) {
  if (c == Collective::kSendRecv) return link.latency_s + bytes / (link.gbps * 1e9);
  if (n <= 1 || bytes <= 0) return 0;
  const int steps = c == Collective::kAllReduce ? 2 * (n - 1) : n - 1;
  return steps * link.latency_s + bytes * bus_factor(c, n) / (link.gbps * 1e9);
}

double tree_seconds(Collective c, double bytes, int n, const Link& link) {
  if (c != Collective::kAllReduce) return ring_seconds(c, bytes, n, link);
  if (n <= 1 || bytes <= 0) return 0;
  return 2 * std::ceil(std::log2(n)) * link.latency_s + 2 * bytes / (link.gbps * 1e9);
}

double hierarchical_seconds(Collective c, double bytes, int q, int m, const Link& inside,
                            const Link& across) {
  if (q <= 1) return ring_seconds(c, bytes, m, across);
  if (m <= 1) return ring_seconds(c, bytes, q, inside);
  switch (c) {
    case Collective::kAllReduce:
      return ring_seconds(Collective::kReduceScatter, bytes, q, inside) +
             ring_seconds(Collective::kAllReduce, bytes / q, m, across) +
             ring_seconds(Collective::kAllGather, bytes, q, inside);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return ring_seconds(c, bytes, q, inside) + ring_seconds(c, bytes / q, m, across);
    case Collective::kAllToAll: {
      const double remote = bytes * (m - 1) / m;
      return ring_seconds(c, bytes - remote, q, inside) + (m - 1) * across.latency_s +
             remote / (across.gbps * 1e9);
    }
    case Collective::kSendRecv:
      return ring_seconds(c, bytes, 2, across);
  }
  return 0;
}

}  // namespace plumb::plan
