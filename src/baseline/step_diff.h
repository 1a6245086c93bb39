// `plumb diff` of two step records (plumb.step/1, saved by `plumb step --save`): did the training
// step get slower, did more communication become exposed, did the straggler move.
//
// Each figure is the median over the record's steps of the slowest rank's value in that step
// (the rank that gates the step). Step time and exposed communication gate: a rise beyond the
// threshold and the steps' own spread is a regression (exit 1), with the verdicts and the noise
// model of the comm diff (diff.h, docs/diff.md) — the steps play the part of the rounds. Compute,
// busbw per collective kind and the whole-trace straggler are shown, not judged into the status.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/record_kind.h"  // check_same_kind
#include "baseline/store.h"

namespace plumb::baseline {

inline constexpr const char* kStepDiffSchema = "plumb.step-diff/1";

// Below this many steps in either record, the steps' spread is no estimate: only the threshold
// judges.
inline constexpr int kMinStepsForNoise = 3;

// A figure per step: step time, exposed communication, compute.
struct StepFigureDiff {
  std::string figure;      // "step time", "exposed communication", "compute"
  std::string field;       // its plumb.step/1 field: "step_time_us", ...
  double a_us = 0;         // median over steps of the slowest rank's value
  double b_us = 0;
  double change = 0;       // (b − a) / base; NaN when neither is known
  bool of_step_time = false;  // base is A's step time (A's own figure was 0), not A's figure
  double noise = 0;        // kNoiseSigmas × σ of the change, from the steps' spread; 0 when either
                           // record has fewer than kMinStepsForNoise steps
  Verdict verdict = Verdict::kSame;
  bool gates = false;      // counts towards the exit status (step time, exposed communication)
};

// busbw of one collective kind: median over its instances in the trace.
struct StepCollectiveDiff {
  std::string kind;
  int instances_a = 0;     // with a busbw (instances without a message size have none)
  int instances_b = 0;
  double busbw_a = 0;      // GB/s; NaN when A has none
  double busbw_b = 0;
  double change = 0;       // (b − a) / a; NaN when either is missing
  double noise = 0;
  Verdict verdict = Verdict::kSame;  // kOnlyInA / kOnlyInB when one trace has none
};

// The rank the others waited for over the whole trace (stragglers[] entry with step −1).
struct StepStraggler {
  int rank = -1;                // −1: the record names none
  double waited_on_us = 0;
};

struct StepDiff {
  RecordRef a;
  RecordRef b;
  int ranks_a = 0;
  int ranks_b = 0;
  int steps_a = 0;              // distinct steps over the ranks
  int steps_b = 0;
  double threshold = 0;
  std::vector<StepFigureDiff> figures;          // step time, exposed communication, compute
  std::vector<StepCollectiveDiff> collectives;  // by kind
  StepStraggler straggler_a;
  StepStraggler straggler_b;
  std::vector<VariableDiff> variables;          // context, as the comm diff's, and world size
  std::vector<std::string> unrecorded;          // context parts a record holds none of
  std::vector<std::string> notes;               // e.g. too few steps to estimate the noise

  bool straggler_moved() const;  // both name one, and not the same rank
  int regressions() const;       // gating figures with Verdict::kRegression
  int too_noisy() const;         // gating figures with Verdict::kTooNoisy
  int exit_code() const;         // 1 on a regression, else kTooNoisyExitCode when too noisy, else 0
  std::string too_noisy_advice() const;
  std::string attribution_warning() const;
};

bool holds_step(const Record& r);

// What `plumb show` says of a step record: its size and the figures the diff compares.
struct StepSummary {
  int world_size = -1;
  int ranks = 0;
  int steps = 0;  // distinct steps over the ranks
  struct Figure {
    std::string figure;  // "step time", "exposed communication", "compute"
    double median_us = 0;  // over steps of the slowest rank's value; NaN when none is known
  };
  std::vector<Figure> figures;
  struct Collective {
    std::string kind;
    int instances = 0;  // with a busbw
    double busbw_gbps = 0;  // median over them
  };
  std::vector<Collective> collectives;  // by kind
  StepStraggler straggler;
};

// Errors (exit 2) name `name` ("baseline 3") and the field, as step_diff's do.
StepSummary summarize_step(const nlohmann::json& step, const std::string& name);

// Both records must hold a step record. Errors (exit 2) name the record and the field
// ("baseline 3: step.ranks[1].steps[0].step_time_us: expected a number, got \"x\""), and a record
// without any step.
StepDiff step_diff(const Record& a, const Record& b, const DiffOptions& options = {});

// plumb.step-diff/1
nlohmann::json step_diff_json(const StepDiff& diff);

}  // namespace plumb::baseline
