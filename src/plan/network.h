// Where a parallel group's ranks sit and what its collectives cost. Ranks are numbered as
// Megatron-LM numbers them: TP innermost, then CP, then DP (EP inside DP), then PP; a group of n
// ranks with stride k spans ranks k apart, packed into nodes of devices_per_node.
#pragma once

#include <functional>
#include <optional>
#include <array>
#include <vector>
#include <string>

#include "plan/cluster.h"
#include "plan/collective_cost.h"

namespace plumb::plan {

struct GroupShape {
  int ranks = 1;
  int per_node = 1;            // ranks of the group in one node
  int nodes = 1;               // nodes the group spans
  NetLayer widest = NetLayer::kNode;  // the outermost layer it crosses
};

// ranks with `stride` between consecutive members. Nodes hold devices_per_node consecutive ranks,
// racks nodes_per_rack consecutive nodes.
GroupShape group_shape(int ranks, int stride, const ClusterSpec& c);

// A measured busbw (GB/s) of `collective` on `layer` at `bytes`, or nothing when that was not
// measured (plumb plan --calibrate).
using MeasuredBusbw = std::function<std::optional<double>(NetLayer, Collective, double bytes)>;

struct CollectiveTime {
  double seconds = 0;
  Algorithm algorithm = Algorithm::kRing;
  bool measured = false;  // a measured busbw curve gave this time
};

class Network {
 public:
  Network(ClusterSpec cluster, Algorithm algorithm, MeasuredBusbw measured = {});

  // The fastest allowed algorithm (or the one asked for) for `bytes` as nccl-tests counts them
  // (allreduce: the buffer; allgather: the gathered output; reducescatter: the input; alltoall:
  // one rank's buffer; sendrecv: the message).
  CollectiveTime time(Collective c, double bytes, const GroupShape& g) const;

  const ClusterSpec& cluster() const { return cluster_; }
  // "node allreduce", ... each (layer, collective) a measured curve was used for.
  std::vector<std::string> measured_used() const;

 private:
  double flat(Collective c, double bytes, const GroupShape& g, Algorithm a, bool& measured) const;
  double two_level(Collective c, double bytes, const GroupShape& g, bool& measured) const;
  // Time of a ring-like phase on `layer`: the measured curve when there is one, else the model.
  double phase(Collective c, double bytes, int n, NetLayer layer, Algorithm a, bool& measured) const;

  ClusterSpec cluster_;
  Algorithm algorithm_;
  MeasuredBusbw measured_;
  mutable std::array<std::array<bool, 5>, 3> used_{};  // [NetLayer][Collective]
};

}  // namespace plumb::plan
