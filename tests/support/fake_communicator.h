// A one-rank communicator on host memory with a clock the test controls and a fault to inject:
// lets the sweep runner, the check and the reporters run without MPI.
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "comm/mpi_backend.h"

namespace plumb::test {

class FakeCommunicator final : public comm::Communicator {
 public:
  // Seconds each operation "takes" on the fake clock.
  double seconds_per_op = 1e-3;
  // When set, every operation writes this value into element 0 of its output afterwards.
  bool corrupt = false;
  // When set, operations write nothing at all.
  bool write_nothing = false;
  // What "other ranks" contribute to all_gather_strings (for the agreement tests).
  std::vector<std::string> peer_strings;
  int operations = 0;

  std::string_view backend() const override { return "fake"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int node_id() override { return 0; }
  std::unique_ptr<comm::Communicator> split(int color, int) override {
    return color < 0 ? nullptr : std::make_unique<FakeCommunicator>(*this);
  }
  std::unique_ptr<comm::Buffer> allocate(size_t bytes) override {
    return comm::allocate_host_buffer(bytes);
  }

  void all_reduce(const void* s, void* r, size_t n, comm::DataType t, comm::ReduceOp) override {
    copy(s, r, n, t);
  }
  void all_gather(const void* s, void* r, size_t n, comm::DataType t) override { copy(s, r, n, t); }
  void reduce_scatter(const void* s, void* r, size_t n, comm::DataType t, comm::ReduceOp) override {
    copy(s, r, n, t);
  }
  void all_to_all(const void* s, void* r, size_t n, comm::DataType t) override { copy(s, r, n, t); }
  void broadcast(const void* s, void* r, size_t n, comm::DataType t, int) override {
    copy(s, r, n, t);
  }
  void reduce(const void* s, void* r, size_t n, comm::DataType t, comm::ReduceOp, int) override {
    copy(s, r, n, t);
  }
  void send_recv(const void* s, void* r, size_t n, comm::DataType t, int, int) override {
    copy(s, r, n, t);
  }
  bool avg_premultiplies(comm::DataType) const override { return false; }

  void start_timer() override { start_ = clock_; }
  double stop_timer() override { return clock_ - start_; }
  void synchronize() override {}
  void barrier() override {}
  std::vector<double> gather(std::span<const double> v, int) override {
    return {v.begin(), v.end()};
  }
  std::vector<std::string> gather_strings(const std::string& v, int) override { return {v}; }
  std::vector<std::string> all_gather_strings(const std::string& v) override {
    std::vector<std::string> all = {v};
    all.insert(all.end(), peer_strings.begin(), peer_strings.end());
    return all;
  }
  int broadcast_int(int v, int) override { return v; }

 private:
  void copy(const void* s, void* r, size_t n, comm::DataType t) {
    ++operations;
    clock_ += seconds_per_op;
    if (n == 0 || write_nothing) return;
    std::memmove(r, s, n * comm::info(t).size);
    if (corrupt) comm::store(t, r, 0, 12345.0);
  }

  double clock_ = 0;
  double start_ = 0;
};

}  // namespace plumb::test
