// alltoall: block p of rank r's send buffer lands as block r of rank p's receive buffer.
// busbw factor (n−1)/n: each rank keeps 1/n of its data and exchanges the rest (nccl-tests
// src/alltoall.cu). The size column is each rank's whole buffer, the count column one block.
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class AllToAll final : public Collective {
 public:
  std::string_view name() const override { return "alltoall"; }

  Counts counts(size_t bytes, size_t element_size, int nranks) const override {
    const size_t per_peer = per_rank_count(bytes, element_size, nranks);
    const size_t total = per_peer * static_cast<size_t>(nranks);
    return {total, total, per_peer, total * element_size};
  }

  double bus_factor(int nranks) const override {
    return static_cast<double>(nranks - 1) / nranks;
  }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.all_to_all(send, recv, counts.count, args.type);
  }

  std::optional<double> expected(const Pattern& pattern, int rank, int /*nranks*/,
                                 const Counts& counts, const CollArgs& /*args*/,
                                 size_t j) const override {
    const size_t block = counts.count;
    const int source = static_cast<int>(j / block);
    return pattern.value(source, static_cast<size_t>(rank) * block + j % block);
  }
};

}  // namespace

const Collective& alltoall_collective() {
  static const AllToAll kInstance;
  return kInstance;
}

}  // namespace plumb::comm
