// allreduce: every rank ends with the reduction of all ranks' buffers.
// busbw factor 2(n−1)/n: a ring allreduce is a reduce-scatter then an allgather, each moving
// (n−1)/n of the buffer over every rank's link (nccl-tests doc/PERFORMANCE.md, "AllReduce").
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class AllReduce final : public Collective {
 public:
  std::string_view name() const override { return "allreduce"; }
  bool uses_op() const override { return true; }

  Counts counts(size_t bytes, size_t element_size, int /*nranks*/) const override {
    return whole_counts(bytes, element_size);
  }

  double bus_factor(int nranks) const override { return 2.0 * (nranks - 1) / nranks; }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.all_reduce(send, recv, counts.count, args.type, args.op);
  }

  std::optional<double> expected(const Pattern& pattern, int /*rank*/, int /*nranks*/,
                                 const Counts& /*counts*/, const CollArgs& /*args*/,
                                 size_t j) const override {
    return pattern.reduced(j);
  }
};

}  // namespace

const Collective& allreduce_collective() {
  static const AllReduce kInstance;
  return kInstance;
}

}  // namespace plumb::comm
