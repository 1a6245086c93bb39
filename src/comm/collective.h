// One collective as the benchmark sees it: how many elements a requested size gives, its busbw
// factor, how to launch it, and what each rank must hold afterwards. Each collective is one small
// file filling this interface (the shape of nccl-tests' struct testColl), registered in
// collectives.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "comm/dtype.h"
#include "comm/pattern.h"
#include "comm/reduce_op.h"

namespace plumb::comm {

struct Counts {
  size_t send_count = 0;  // elements in each rank's send buffer
  size_t recv_count = 0;  // elements in each rank's receive buffer
  size_t count = 0;       // the count passed to the library; the table's "count" column
  size_t bytes = 0;       // the table's "size" column: max(send, recv) × element size
};

// The counts of a collective whose buffers hold the whole message on every rank (allreduce,
// broadcast, reduce, sendrecv): c = bytes / element_size elements each way.
Counts whole_counts(size_t bytes, size_t element_size);

// The per-rank block of a collective that splits its message over n ranks: ⌊bytes / e / n⌋.
size_t per_rank_count(size_t bytes, size_t element_size, int nranks);

struct CollArgs {
  DataType type = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;

  virtual std::string_view name() const = 0;
  virtual bool uses_op() const { return false; }
  virtual bool uses_root() const { return false; }

  // Element counts for a requested size in bytes, rounded down exactly as nccl-tests'
  // <coll>GetCollByteCount does (count = bytes / element_size, then per-rank division).
  virtual Counts counts(size_t bytes, size_t element_size, int nranks) const = 0;

  // busbw = algbw × bus_factor(n); derivations in nccl-tests doc/PERFORMANCE.md and docs/comm.md.
  virtual double bus_factor(int nranks) const = 0;

  // Launches one operation on `comm` (completion is awaited by the caller).
  virtual void run(Communicator& comm, const void* send, void* recv, const Counts& counts,
                   const CollArgs& args) const = 0;

  // Element j of `rank`'s receive buffer after the operation when every rank r's input element i
  // is pattern.value(r, i); nullopt where the result is unspecified (reduce's non-roots).
  virtual std::optional<double> expected(const Pattern& pattern, int rank, int nranks,
                                         const Counts& counts, const CollArgs& args,
                                         size_t j) const = 0;

  // True when `rank`'s receive buffer must hold its input before the operation (broadcast's root,
  // so that a backend may broadcast in place).
  virtual bool recv_starts_with_input(int /*rank*/, const CollArgs& /*args*/) const {
    return false;
  }
};

// The table of collectives, in the order plumb runs and prints them.
std::span<const Collective* const> all_collectives();

// Looks a collective up by name. Accepts nccl-tests' spellings too ("all_reduce",
// "all_reduce_perf"). Throws plumb::Error with the valid names and a suggestion.
// `where` names the option or the file position in the message for an unknown name.
const Collective& find_collective(std::string_view name, std::string_view where = "--collectives");

// The collectives' own definitions (one file each).
const Collective& allreduce_collective();
const Collective& allgather_collective();
const Collective& reducescatter_collective();
const Collective& alltoall_collective();
const Collective& broadcast_collective();
const Collective& reduce_collective();
const Collective& sendrecv_collective();

}  // namespace plumb::comm
