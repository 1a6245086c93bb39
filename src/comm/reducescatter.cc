// reducescatter: rank r ends with block r of the reduction of all ranks' buffers.
// busbw factor (n−1)/n: each rank sends and receives n−1 blocks of 1/n of the buffer (nccl-tests
// doc/PERFORMANCE.md, "ReduceScatter"). The size column is the full input, the count column the
// per-rank output block.
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class ReduceScatter final : public Collective {
 public:
  std::string_view name() const override { return "reducescatter"; }
  bool uses_op() const override { return true; }

  Counts counts(size_t bytes, size_t element_size, int nranks) const override {
    const size_t per_rank = per_rank_count(bytes, element_size, nranks);
    const size_t total = per_rank * static_cast<size_t>(nranks);
    return {total, per_rank, per_rank, total * element_size};
  }

  double bus_factor(int nranks) const override {
    return static_cast<double>(nranks - 1) / nranks;
  }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.reduce_scatter(send, recv, counts.count, args.type, args.op);
  }

  std::optional<double> expected(const Pattern& pattern, int rank, int /*nranks*/,
                                 const Counts& counts, const CollArgs& /*args*/,
                                 size_t j) const override {
    return pattern.reduced(static_cast<size_t>(rank) * counts.recv_count + j);
  }
};

}  // namespace

const Collective& reducescatter_collective() {
  static const ReduceScatter kInstance;
  return kInstance;
}

}  // namespace plumb::comm
