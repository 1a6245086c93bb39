// The MPI backend: collectives on host memory through the MPI library the ranks were started
// with (OpenMPI here). Also the control plane every other backend uses.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/communicator.h"

namespace plumb::comm {

// Initialises MPI when constructed (unless already initialised) and finalises it when destroyed.
// kThreads asks for MPI_THREAD_MULTIPLE (for the Watchdog's thread); threads() says whether the
// library gave it.
class MpiSession {
 public:
  enum Threads { kOneThread, kThreads };
  MpiSession(int* argc, char*** argv, Threads threads = kOneThread);
  static bool threads();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm`; frees it on destruction when `owned`.
  MpiCommunicator(MPI_Comm comm, bool owned);
  ~MpiCommunicator() override;

  // MPI_COMM_WORLD, not owned.
  static std::unique_ptr<MpiCommunicator> world();

  MPI_Comm handle() const { return comm_; }

  std::string_view backend() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node_id() override;
  // This rank's order among the ranks of its host (picks the GPU for device backends).
  int local_rank();
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<Buffer> allocate(size_t bytes) override;

  void all_reduce(const void* send, void* recv, size_t count, DataType type,
                  ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t send_count, DataType type) override;
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DataType type,
                      ReduceOp op) override;
  void all_to_all(const void* send, void* recv, size_t count_per_peer, DataType type) override;
  void broadcast(const void* send, void* recv, size_t count, DataType type, int root) override;
  void reduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op,
              int root) override;
  void send_recv(const void* send, void* recv, size_t count, DataType type, int to,
                 int from) override;
  bool avg_premultiplies(DataType /*type*/) const override { return false; }

  void start_timer() override;
  double stop_timer() override;
  void synchronize() override {}

  void barrier() override;
  std::vector<double> gather(std::span<const double> values, int root) override;
  std::vector<std::string> gather_strings(const std::string& value, int root) override;
  std::vector<std::string> all_gather_strings(const std::string& value) override;
  int broadcast_int(int value, int root) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
  double timer_start_ = 0.0;
};

// Host memory aligned to a page, usable by any CPU backend (and the tests' fake).
std::unique_ptr<Buffer> allocate_host_buffer(size_t bytes);

// Divides each of `count` elements by `divisor` in the element type (integer types truncate, as
// NCCL's avg does for them). MPI has no avg: plumb sums, then scales.
void divide_elements(void* data, size_t count, DataType type, int divisor);

}  // namespace plumb::comm
