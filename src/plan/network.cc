#include "plan/network.h"

#include <algorithm>
#include <span>
#include <utility>

namespace plumb::plan {

GroupShape group_shape(int ranks, int stride, const ClusterSpec& c) {
  GroupShape g;
  g.ranks = ranks;
  if (ranks <= 1) return g;
  const int per_node = stride >= c.devices_per_node ? 1 : c.devices_per_node / stride;
  g.per_node = std::min(ranks, std::max(1, per_node));
  g.nodes = (ranks + g.per_node - 1) / g.per_node;
  if (g.nodes <= 1) return g;
  // Consecutive members are stride ranks apart: the group covers ranks·stride ranks, which is
  // that many devices_per_node nodes when members are a node or more apart.
  const double span_nodes =
      stride >= c.devices_per_node ? static_cast<double>(ranks) * stride / c.devices_per_node
                                   : g.nodes;
  g.widest = span_nodes > c.nodes_per_rack ? NetLayer::kSpine : NetLayer::kRail;
  return g;
}

Network::Network(ClusterSpec cluster, Algorithm algorithm, MeasuredBusbw measured)
    : cluster_(std::move(cluster)), algorithm_(algorithm), measured_(std::move(measured)) {}

double Network::phase(Collective c, double bytes, int n, NetLayer layer, Algorithm a,
                      bool& measured) const {
  if (n <= 1 || bytes <= 0) return 0;
  if (measured_) {
    if (auto busbw = measured_(layer, c, bytes); busbw && *busbw > 0) {
      measured = true;
      used_[static_cast<size_t>(layer)][static_cast<size_t>(c)] = true;
      return bytes * bus_factor(c, n) / (*busbw * 1e9);
    }
  }
  const Link link = layer_link(cluster_, layer);
  return a == Algorithm::kTree ? tree_seconds(c, bytes, n, link) : ring_seconds(c, bytes, n, link);
}

double Network::flat(Collective c, double bytes, const GroupShape& g, Algorithm a,
                     bool& measured) const {
  return phase(c, bytes, g.ranks, g.widest, a, measured);
}

double Network::two_level(Collective c, double bytes, const GroupShape& g, bool& measured) const {
  const int q = g.per_node;
  const int m = g.nodes;
  switch (c) {
    case Collective::kAllReduce:
      return phase(Collective::kReduceScatter, bytes, q, NetLayer::kNode, Algorithm::kRing, measured) +
             phase(Collective::kAllReduce, bytes / q, m, g.widest, Algorithm::kRing, measured) +
             phase(Collective::kAllGather, bytes, q, NetLayer::kNode, Algorithm::kRing, measured);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return phase(c, bytes, q, NetLayer::kNode, Algorithm::kRing, measured) +
             phase(c, bytes / q, m, g.widest, Algorithm::kRing, measured);
    default:
      return hierarchical_seconds(c, bytes, q, m, cluster_.node, layer_link(cluster_, g.widest));
  }
}

std::vector<std::string> Network::measured_used() const {
  std::vector<std::string> used;
  for (NetLayer layer : {NetLayer::kNode, NetLayer::kRail, NetLayer::kSpine}) {
    for (int c = 0; c < 5; ++c) {
      if (used_[static_cast<size_t>(layer)][static_cast<size_t>(c)]) {
        used.push_back(std::string(net_layer_name(layer)) + " " +
                       collective_name(static_cast<Collective>(c)));
      }
    }
  }
  return used;
}

CollectiveTime Network::time(Collective c, double bytes, const GroupShape& g) const {
  if (c != Collective::kSendRecv && (g.ranks <= 1 || bytes <= 0)) return {};
  if (c == Collective::kSendRecv) {
    bool measured = false;
    const double s = phase(c, bytes, 2, g.widest, Algorithm::kRing, measured);
    return {s, Algorithm::kRing, measured};
  }
  static constexpr Algorithm kAll[] = {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical};
  const std::span<const Algorithm> candidates =
      algorithm_ == Algorithm::kAuto ? std::span<const Algorithm>(kAll)
                                     : std::span<const Algorithm>(&algorithm_, 1);
  CollectiveTime best{-1, Algorithm::kRing, false};
  for (Algorithm asked : candidates) {
    // NCCL has a tree for allreduce only; a group inside one node (or one rank per node) has one
    // level: what runs is the ring, and the result says so.
    const bool tree = asked == Algorithm::kTree && c == Collective::kAllReduce;
    const bool levels = asked == Algorithm::kHierarchical && g.per_node > 1 && g.nodes > 1;
    const Algorithm a = tree || levels ? asked : Algorithm::kRing;
    if (a != asked && algorithm_ == Algorithm::kAuto) continue;  // the ring is a candidate itself
    bool measured = false;
    const double s = levels ? two_level(c, bytes, g, measured) : flat(c, bytes, g, a, measured);
    if (best.seconds < 0 || s < best.seconds) best = {s, a, measured};
  }
  return best;
}

}  // namespace plumb::plan
