// broadcast: every rank ends with the root's buffer.
// busbw factor 1: a pipelined broadcast moves the whole buffer over every link once, whatever the
// rank count (nccl-tests doc/PERFORMANCE.md, "Broadcast").
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class Broadcast final : public Collective {
 public:
  std::string_view name() const override { return "broadcast"; }
  bool uses_root() const override { return true; }

  Counts counts(size_t bytes, size_t element_size, int /*nranks*/) const override {
    return whole_counts(bytes, element_size);
  }

  double bus_factor(int /*nranks*/) const override { return 1.0; }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    comm.broadcast(send, recv, counts.count, args.type, args.root);
  }

  std::optional<double> expected(const Pattern& pattern, int /*rank*/, int /*nranks*/,
                                 const Counts& /*counts*/, const CollArgs& args,
                                 size_t j) const override {
    return pattern.value(args.root, j);
  }

  bool recv_starts_with_input(int rank, const CollArgs& args) const override {
    return rank == args.root;
  }
};

}  // namespace

const Collective& broadcast_collective() {
  static const Broadcast kInstance;
  return kInstance;
}

}  // namespace plumb::comm
