// The recovery baseline of one `plumb run`: every failure with what followed it — how long it took
// to notice, each recovery step's time, how long until the job made progress again, and how many
// steps were lost (docs/run.md). Saved in the store as plumb.recovery/1, written as a Prometheus
// textfile, compared by `plumb diff`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sysinfo/slurm_job.h"

namespace plumb::supervise {

inline constexpr const char* kRecoverySchema = "plumb.recovery/1";

// One recovery step after a failure (clear-cache, reset-device, link-check, on-failure).
struct RecoveryStepTiming {
  std::string name;             // "clear-cache", "reset-device", "link-check", "on-failure"
  double seconds = 0;
  bool ok = true;
  std::string detail;           // why it failed, or what it did ("reset 8 devices")
};

// One failure and the recovery that followed it.
struct Recovery {
  int attempt = 0;                         // the attempt that failed (1-based)
  std::string kind;                        // exit | signal | hang | fatal_line
  std::string detail;                      // "exit 3", the fatal line, ...
  double detect_seconds = 0;               // failure → plumb acting on it
  std::vector<RecoveryStepTiming> steps;   // in the order they ran
  double backoff_seconds = 0;
  // The restarted job started → its first progress line; null when it never made progress (the
  // run gave up or was stopped first).
  std::optional<double> restart_to_first_step_seconds;
  // The failure (the injected fault in a drill; else the moment plumb noticed it, less the
  // detection time) → the restarted job's first progress line: everything the failure cost.
  std::optional<double> downtime_seconds;
  std::optional<int64_t> last_step;        // the last step the failed attempt reported
  std::optional<int64_t> checkpoint_step;  // the step of the checkpoint the restart resumed from
  std::optional<int64_t> first_step_after; // the first step the restarted attempt reported
  // Steps done again: last_step less the step the restarted job resumed after — the one it said
  // (a resume line), else checkpoint_step unless first_step_after is not past it, else
  // first_step_after - 1, else 0 — never below 0 (docs/run.md "Resuming"); null when the failed
  // attempt reported no step.
  std::optional<int64_t> steps_lost;
  // first_step_after == checkpoint_step + 1; null when either is unknown.
  std::optional<bool> resumed_after_checkpoint;

  double recovery_seconds() const {
    double sum = 0;
    for (const RecoveryStepTiming& s : steps) sum += s.seconds;
    return sum;
  }
};

struct RecoveryBaseline {
  std::vector<std::string> command;
  std::string host;
  std::string started;          // ISO 8601 UTC
  double wall_seconds = 0;
  int attempts = 0;
  std::string result;           // finished | gave_up | stopped
  bool drill = false;           // faults injected by --drill
  int faults_injected = 0;
  std::map<std::string, int> failures_by_kind;
  std::vector<Recovery> recoveries;
  std::optional<sysinfo::SlurmJob> job;  // the Slurm job plumb run ran in (JSON "job" when set)
};

}  // namespace plumb::supervise
