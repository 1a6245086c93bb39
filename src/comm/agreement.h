// Errors at phase boundaries, agreed by every rank. A step that fails on some ranks only (a
// library missing on one node, a file readable on some) must not leave the others waiting in the
// next collective call: every rank runs the step, then all learn whether any failed, and all
// throw the same plumb::Error -- printed once, by rank 0.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/sweep.h"
#include "common/error.h"

namespace plumb::comm {

// Runs `step` on this rank, then exchanges outcomes over `comm` (collective: every rank calls
// it). When the step threw on any rank, throws on every rank one Error with the first failing
// rank's exit code and message: the message alone when every rank failed alike, else prefixed
// "rank R on host H: " and followed by how many ranks failed.
void agree(Communicator& comm, const std::function<void()>& step);

// The end of a command after an agreed Error (every rank has it): rank 0 prints it, and all wait
// for that before MPI shuts down so that the launcher does not cut the message off. Returns the
// error's exit code.
int exit_agreed(Communicator& comm, const Error& error);

// For failures in the middle of a measurement, when other ranks may be blocked in a collective
// and no agreement is possible: prints "plumb: error: rank R on host H: <message>" on this rank
// and aborts every rank with the error's exit code (MPI_Abort).
[[noreturn]] void abort_all(int exit_code, const std::string& message);

// A watchdog for a stopped rank: a thread on every rank that knows which measurement its rank is
// in. When one rank's measurement has run longer than the time limit, the ranks' watchdogs tell
// each other where they stand (over MPI, from their own threads, while the measuring threads stay
// blocked); the lowest rank that answered names those that did not (a stopped or dead process, a
// hung host) and aborts the job.

// Where one rank stands, as its watchdog tells the others.
struct RankStatus {
  long step = 0;          // how many measurements it began
  std::string what;       // "world · allreduce · 1 KiB", or empty between measurements
  bool expired = false;   // its measurement ran past the time limit
};

// The message that names the ranks that did not answer (`heard[r]` empty), or when all did, the
// ranks still in the earliest step. `hosts[r]` is rank r's host.
std::string timeout_message(const std::vector<std::optional<RankStatus>>& heard,
                            const std::vector<std::string>& hosts, int timeout_seconds);

// The rank that reports: the lowest that answered.
int reporter(const std::vector<std::optional<RankStatus>>& heard);

// Needs MPI_THREAD_MULTIPLE (MpiSession::kThreads). Collective over MPI_COMM_WORLD when
// constructed and destroyed.
class Watchdog final : public StepWatch {
 public:
  Watchdog(int timeout_seconds, std::vector<std::string> hosts);
  ~Watchdog() override;
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void begin(const std::string& what) override;
  void end() override;

 private:
  using Clock = std::chrono::steady_clock;
  void watch();
  bool poll(std::vector<std::optional<RankStatus>>& heard);
  void tell_everyone(const RankStatus& mine);
  [[noreturn]] void raise_alarm(std::vector<std::optional<RankStatus>> heard);
  RankStatus status() const;

  int timeout_seconds_;
  std::vector<std::string> hosts_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::vector<MPI_Request> sends_;
  std::string sent_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  RankStatus status_;
  std::optional<Clock::time_point> deadline_;
  std::thread thread_;
};


}  // namespace plumb::comm
