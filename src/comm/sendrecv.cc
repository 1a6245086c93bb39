// sendrecv: every rank sends its buffer to the next rank and receives the previous rank's, all at
// once (a ring shift; nccl-tests src/sendrecv.cu). busbw factor 1: each link carries the buffer
// once in each direction.
#include "comm/collective.h"

namespace plumb::comm {
namespace {

class SendRecv final : public Collective {
 public:
  std::string_view name() const override { return "sendrecv"; }

  Counts counts(size_t bytes, size_t element_size, int /*nranks*/) const override {
    return whole_counts(bytes, element_size);
  }

  double bus_factor(int /*nranks*/) const override { return 1.0; }

  void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
           const CollArgs& args) const override {
    const int n = comm.size();
    const int r = comm.rank();
    comm.send_recv(send, recv, counts.count, args.type, (r + 1) % n, (r - 1 + n) % n);
  }

  std::optional<double> expected(const Pattern& pattern, int rank, int nranks,
                                 const Counts& /*counts*/, const CollArgs& /*args*/,
                                 size_t j) const override {
    return pattern.value((rank - 1 + nranks) % nranks, j);
  }
};

}  // namespace

const Collective& sendrecv_collective() {
  static const SendRecv kInstance;
  return kInstance;
}

}  // namespace plumb::comm
