// `plumb diff` of two baseline sets (plumb baseline --workload): each part compared by its own
// diff where both sets hold it — comm (diff.h), model step (step_diff.h), memory (memory_diff.h),
// recovery (recovery_diff.h), serving (serve_diff.h) — then topology, versions and settings once for the set, with the
// one-variable-at-a-time check, and a go/no-go line (docs/diff.md, "Baseline sets").
//
// A part diff that cannot compare (two sweeps that share no measurement, a part that does not
// read) is that part's note, "not compared", never the end of the whole comparison. A part only
// one set holds is named with the other's reason from its "missing" object.
//
// Exit status, the first that applies: 1 a part regressed (or B's comm has wrong results); 2 a
// part could not be compared; kTooNoisyExitCode a part was too noisy to judge; 0 otherwise.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/diff.h"
#include "baseline/memory_diff.h"
#include "baseline/recovery_diff.h"
#include "baseline/serve_diff.h"
#include "baseline/step_diff.h"
#include "baseline/store.h"
#include "mem/memory_baseline.h"

namespace plumb::baseline {

inline constexpr const char* kSetDiffSchema = "plumb.set-diff/1";

enum class PartVerdict {
  kUnchanged,
  kImprovement,
  kTooNoisy,
  kRegression,
  kNotCompared,  // both hold it, but its diff could not compare them (the note says why)
  kOnlyInA,
  kOnlyInB,
  kInNeither,
};

// "unchanged", "improvement", "too noisy to judge", "regression", "not compared", "only in A",
// "only in B", "in neither".
std::string_view part_verdict_name(PartVerdict verdict);

struct SetPart {
  std::string name;       // "comm", "model", "memory", "recovery", "serve"
  std::string key;        // its field in the record and in "missing": "comm", "step", ...
  PartVerdict verdict = PartVerdict::kUnchanged;
  int exit_code = 0;      // what its own diff would exit with (2 when not compared)
  std::string headline;   // what decided the verdict, one line: "rank 1 leaks +1 MiB per step
                          // (95% CI ...) in B, flat in A", "only in A (B: skipped (--skip ...))"
  std::vector<std::string> details;  // more of the same, for the console
  std::string note;       // why it was not compared (its diff's error), or the other set's reason
                          // for not holding it; "" otherwise
  // The part's own diff, when it compared (for --json and the console's --all), and its JSON
  // (plumb.diff/1, plumb.step-diff/1, plumb.memory-diff/1, plumb.recovery-diff/1,
  // plumb.serve-diff/1); null when not.
  nlohmann::json diff_json;
  std::optional<Diff> comm;
  std::optional<StepDiff> step;
  std::optional<MemoryDiff> memory;
  std::optional<RecoveryDiff> recovery;
  std::optional<ServeDiff> serve;
};

struct SetDiff {
  RecordRef a;
  RecordRef b;
  double threshold = 0;
  std::vector<SetPart> parts;           // comm, model, memory, recovery, serve
  std::vector<VariableDiff> variables;  // topology, versions and settings: every difference
  std::vector<std::string> unrecorded;  // context parts a set holds none of (context_diff.h)

  // "no variable changed", "one variable changed: setting NCCL_ALGO ring → tree", or, with more
  // than one, warning().
  std::string variables_line() const;
  // Empty unless more than one variable changed: "one variable at a time: version cann 8.0.RC2 →
  // 8.0.RC3 and setting HCCL_ALGO ring → tree both changed; their effects cannot be told apart".
  std::string warning() const;
  int exit_code() const;
  std::string_view outcome() const;     // "go" (exit 0), "no-go" (1), "undecided" (2, 3)
  // The last line: "no-go: memory regressed (rank 1 leaks ...)", "go: no part regressed (comm,
  // model, memory, recovery unchanged; one variable changed)".
  std::string go_line() const;
};

// Reads a set's memory part back (report::memory_baseline_from_json, which lives above this
// module); errors name `origin` and the field.
using MemoryPartReader =
    std::function<mem::MemoryBaseline(const nlohmann::json& part, const std::string& origin)>;
// Reads a set's serving part (plumb.serve/1) back (report::serve_from_json).
using ServePartReader =
    std::function<serve::ServeResult(const nlohmann::json& part, const std::string& origin)>;

struct PartReaders {
  MemoryPartReader memory;
  ServePartReader serve;
};

// Both records are baseline sets (holds_set). Throws only for what makes no comparison at all
// (records of different kinds, check_same_kind); each part's own failure is its note.
SetDiff set_diff(const Record& a, const Record& b, const DiffOptions& options,
                 const PartReaders& readers);

// plumb.set-diff/1: a, b, threshold, parts.<name> {verdict, exit_code, headline, details, note,
// diff (the part diff's own JSON, null when not compared)}, variables, unrecorded, warning,
// outcome, go, exit_code.
nlohmann::json set_diff_json(const SetDiff& diff);

}  // namespace plumb::baseline
