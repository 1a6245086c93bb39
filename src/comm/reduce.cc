// reduce: the root ends with the reduction of all ranks' buffers; other ranks' receive buffers
// are unspecified and not checked.
// busbw factor 1: a pipelined reduce moves the whole buffer over every link once (nccl-tests
// doc/PERFORMANCE.md, "Reduce").
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class Reduce final : public Collective {
 public:
  std::string_view name() const override { return "reduce"; }
  bool uses_op() const override { return true; }
  bool uses_root() const override { return true; }

  Counts counts(size_t bytes, size_t element_size, int /*nranks*/) const override {
    return whole_counts(bytes, element_size);
  }

  double bus_factor(int /*nranks*/) const override { return 1.0; }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.reduce(send, recv, counts.count, args.type, args.op, args.root);
  }

  std::optional<double> expected(const Pattern& pattern, int rank, int /*nranks*/,
                                 const Counts& /*counts*/, const CollArgs& args,
                                 size_t j) const override {
    if (rank != args.root) return std::nullopt;
    return pattern.reduced(j);
  }
};

}  // namespace

const Collective& reduce_collective() {
  static const Reduce kInstance;
  return kInstance;
}

}  // namespace plumb::comm
