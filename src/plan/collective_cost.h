// Time of one collective in the α–β model (Hockney 1994): a message of S bytes costs α + S/β per
// step. Ring, tree and hierarchical algorithms as NCCL runs them; the bus factors are those of
// nccl-tests doc/PERFORMANCE.md, so a measured busbw curve can stand in for the link bandwidth.
// Sources: Thakur, Rabenseifner, Gropp 2005, "Optimization of Collective Communication Operations
// in MPICH" (ring reduce-scatter/allgather: (n−1) steps of S/n); Patarasuk & Yuan 2009 (ring
// allreduce is bandwidth optimal: 2(n−1)/n·S); Sanders, Speck, Träff 2009 (two pipelined binary
// trees: 2·S at log2 n latency), used by NCCL 2.4+ for allreduce.
#pragma once

#include <string>

namespace plumb::plan {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
enum class Algorithm { kAuto, kRing, kTree, kHierarchical };

// The name plumb comm and nccl-tests give the collective ("allreduce", ..., "sendrecv").
const char* collective_name(Collective c);
const char* algorithm_name(Algorithm a);

// One link class as a device sees it: bandwidth in one direction and latency per step.
struct Link {
  double gbps = 0;       // GB/s one direction, after the achievable-fraction discount
  double latency_s = 0;  // per algorithm step
};

// nccl-tests' bus factor: busbw = algbw × factor. allreduce 2(n−1)/n; allgather, reducescatter
// and alltoall (n−1)/n; sendrecv 1. S/algbw is the time, so time = S·factor/busbw.
double bus_factor(Collective c, int n);

// Ring over n ranks: steps 2(n−1) for allreduce, (n−1) for the others, each S/n bytes;
// time = steps·α + S·factor/β. alltoall is costed as (n−1) pairwise exchanges of S/n.
double ring_seconds(Collective c, double bytes, int n, const Link& link);

// Double binary tree allreduce: 2·S/β bandwidth term (each byte up and down once), 2·log2(n)
// latency steps. Other collectives have no tree in NCCL and fall back to the ring.
double tree_seconds(Collective c, double bytes, int n, const Link& link);

// Two levels: q ranks per node, m nodes. allreduce = reduce-scatter in the node (S), allreduce
// across the m nodes of S/q by each of the q ranks on its own rail, allgather in the node (S).
// allgather / reducescatter: the node phase and the cross-node phase of S/q each. alltoall: the
// cross-node part (m−1)/m of the data goes over the scale-out link, the rest over scale-up.
double hierarchical_seconds(Collective c, double bytes, int q, int m, const Link& inside,
                            const Link& across);

}  // namespace plumb::plan
