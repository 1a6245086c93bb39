// CSV in the columns of msprof-analyze's cluster_step_trace_time.csv, so that scripts written for
// Ascend's cluster analysis read plumb step's figures of any trace (docs/step.md, "CSV").
//
// One row per rank and step (Type "rank", Index the rank), then per step one "stage" row over
// all the ranks present (Index "(0, 1, ...)", each column the maximum over those ranks), as
// msprof-analyze writes a run without pipeline stages. Times in µs, numbers written as Python
// writes floats (msprof-analyze is pandas): the shortest exact form, with ".0" on whole numbers.
//
// Column mapping (msprof-analyze's definitions; Stage = Computing + Communication(Not
// Overlapped) + Free holds in both):
//   Step                      the step number (ProfilerStep#N)
//   Computing                 compute_us: |∪ compute|, overlapped part included
//   Communication(Not Overlapped)   exposed_communication_us: |∪ communication \ ∪ compute|
//   Overlapped                overlapped_us: |∪ communication ∩ ∪ compute|
//   Communication             communication_us: |∪ communication|
//   Free                      idle_us + memory_us − preparing_us: device time covered by neither
//                             compute nor communication after the first computation (msprof counts
//                             memcpy/memset as free time)
//   Stage                     step_time_us − preparing_us: the step from its first computation
//                             to its end (msprof's Stage ends at the last task: plumb's holds
//                             the tail after it too)
//   Bubble                    empty: the pipeline bubble (msprof: time in PP receive ops) is not
//                             measured by plumb step
//   Communication(Not Overlapped and Exclude Receive)   exposed_communication_us: plumb does not
//                             tell receive ops apart, so receive time is not excluded
//   Preparing                 preparing_us: from the step's start to its first computation
//                             (empty when the step has none)
// An unknown figure (NaN) is an empty cell.
#pragma once

#include "report/step_reporter.h"

namespace plumb::report {

inline constexpr const char* kStepCsvHeader =
    "Step,Type,Index,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,"
    "Bubble,Communication(Not Overlapped and Exclude Receive),Preparing";

class StepCsvReporter final : public StepReporter {
 public:
  void report(const step::StepResult& result, std::ostream& out) const override;
};

// 136581.0, 8873.756000000001, 0.1: a double as Python's repr() writes it; empty for NaN.
std::string python_float(double value);

}  // namespace plumb::report
