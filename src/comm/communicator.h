// The backend interface: one group of ranks that can run collectives on its buffers, time them,
// and exchange small host-side values (times, counts) among themselves.
//
// A backend (MPI on the CPU, NCCL on GPUs) implements it once; collectives, the sweep runner and
// the tests (with a fake) only see this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "comm/dtype.h"
#include "comm/reduce_op.h"

namespace plumb::comm {

// Memory the backend's collectives can read and write (host memory for MPI, device memory for
// NCCL). Freed by the backend that made it.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
  // Host <-> buffer copies of `bytes` from the start; set every byte to `value`.
  virtual void upload(const void* host, size_t bytes) = 0;
  virtual void download(void* host, size_t bytes) const = 0;
  virtual void fill(unsigned char value, size_t bytes) = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual std::string_view backend() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The same number on every rank of one host (shared-memory domain), different across hosts:
  // the lowest rank of this communicator on that host.
  virtual int node_id() = 0;

  // Splits into disjoint groups like MPI_Comm_split: ranks with the same `color` form one group,
  // ordered by `key`. A negative color means "in no group": the call returns nullptr. Collective:
  // every rank of this communicator must call it.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  virtual std::unique_ptr<Buffer> allocate(size_t bytes) = 0;

  // ---- collectives (counts in elements, semantics as NCCL's) --------------------------------
  virtual void all_reduce(const void* send, void* recv, size_t count, DataType type,
                          ReduceOp op) = 0;
  virtual void all_gather(const void* send, void* recv, size_t send_count, DataType type) = 0;
  virtual void reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type,
                              ReduceOp op) = 0;
  virtual void all_to_all(const void* send, void* recv, size_t count_per_peer,
                          DataType type) = 0;
  virtual void broadcast(const void* send, void* recv, size_t count, DataType type,
                         int root) = 0;
  virtual void reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
                      int root) = 0;
  // Sends `send` to rank `to` and receives into `recv` from rank `from`, concurrently.
  virtual void send_recv(const void* send, void* recv, size_t count, DataType type, int to,
                         int from) = 0;

  // True when avg multiplies each input by 1/n before summing (NCCL on floating types), so the
  // result may round; false when it divides the exact sum (MPI here).
  virtual bool avg_premultiplies(DataType type) const = 0;

  // ---- timing --------------------------------------------------------------------------------
  // Marks the start of a timed region on this rank.
  virtual void start_timer() = 0;
  // Waits until the operations launched since start_timer() completed; returns the seconds
  // between the two (host clock for MPI, CUDA events for NCCL).
  virtual double stop_timer() = 0;
  // Waits until every launched operation completed (no timing).
  virtual void synchronize() = 0;

  // ---- host-side control plane (small values, host memory) -----------------------------------
  virtual void barrier() = 0;
  // Every rank's `values` concatenated in rank order, on `root`; empty on the other ranks.
  virtual std::vector<double> gather(std::span<const double> values, int root) = 0;
  // Every rank's string in rank order, on `root`; empty on the other ranks.
  virtual std::vector<std::string> gather_strings(const std::string& value, int root) = 0;
  // Every rank's string in rank order, on every rank.
  virtual std::vector<std::string> all_gather_strings(const std::string& value) = 0;
  // `root`'s value, on every rank.
  virtual int broadcast_int(int value, int root) = 0;
};

}  // namespace plumb::comm
