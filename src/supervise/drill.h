// `plumb run --drill K`: a recovery drill. K faults are injected into the real run, one at a time —
// SIGKILL to the job's process group (a crash) or SIGSTOP (a hang) — each a random 1..N progress
// lines after a checkpoint newer than the one the attempt started from, so that every recovery
// has a checkpoint to resume from and steps to lose (docs/run.md, "Drills").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace plumb::supervise {

enum class FaultKind { kKill, kStop };

struct DrillOptions {
  int faults = 0;                                // K
  std::vector<FaultKind> kinds = {FaultKind::kKill, FaultKind::kStop};  // cycled through
  std::filesystem::path checkpoint_dir;          // empty: inject after progress alone
  int max_lines_after = 3;                       // the fault comes 1..this many progress lines late
  uint32_t seed = 1;
};

struct Injection {
  FaultKind kind = FaultKind::kKill;
  std::chrono::steady_clock::time_point at;
  std::optional<int64_t> step;                   // the last step reported before it
};

// "kill" / "hang" (the names --drill-faults takes); parse_fault_kinds throws plumb::Error for
// another word.
std::string fault_name(FaultKind kind);
std::vector<FaultKind> parse_fault_kinds(const std::string& list);

class Drill {
 public:
  explicit Drill(DrillOptions options);

  // A new attempt started with its own process group: the checkpoint it starts from is noted.
  void on_start(int process_group);
  // A progress line (or heartbeat) of the running attempt: the fault is injected when due.
  void on_progress(std::optional<int64_t> step);
  // The fault injected into the attempt that just ended, once; none if it failed by itself.
  std::optional<Injection> take_injection();

  int injected() const { return injected_; }
  int faults() const { return options_.faults; }

 private:
  bool armed();
  void inject(std::optional<int64_t> step);

  DrillOptions options_;
  std::mt19937 random_;
  int injected_ = 0;
  int group_ = -1;
  std::optional<int64_t> start_checkpoint_;      // the newest complete checkpoint at the start
  bool had_checkpoint_ = false;
  int countdown_ = -1;                           // progress lines until the fault; -1: not armed
  std::chrono::steady_clock::time_point last_look_{};
  std::optional<Injection> pending_;
};

}  // namespace plumb::supervise
