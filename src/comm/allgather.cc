// allgather: rank r's block of `count` elements lands at offset r·count on every rank.
// busbw factor (n−1)/n: each rank receives the n−1 blocks it does not have (nccl-tests
// doc/PERFORMANCE.md, "AllGather"). The size column is the gathered total, the count column the
// per-rank block, as in nccl-tests.
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class AllGather final : public Collective {
 public:
  std::string_view name() const override { return "allgather"; }

  Counts counts(size_t bytes, size_t element_size, int nranks) const override {
    const size_t per_rank = per_rank_count(bytes, element_size, nranks);
    const size_t total = per_rank * static_cast<size_t>(nranks);
    return {per_rank, total, per_rank, total * element_size};
  }

  double bus_factor(int nranks) const override {
    return static_cast<double>(nranks - 1) / nranks;
  }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.all_gather(send, recv, counts.count, args.type);
  }

  std::optional<double> expected(const Pattern& pattern, int /*rank*/, int /*nranks*/,
                                 const Counts& counts, const CollArgs& /*args*/,
                                 size_t j) const override {
    const int source = static_cast<int>(j / counts.send_count);
    return pattern.value(source, j % counts.send_count);
  }
};

}  // namespace

const Collective& allgather_collective() {
  static const AllGather kInstance;
  return kInstance;
}

}  // namespace plumb::comm
