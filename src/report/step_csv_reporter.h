// CSV in the columns of msprof-analyze's cluster_step_trace_time.csv, so that scripts written for
// Ascend's cluster analysis read plumb step's figures of any trace (docs/step.md, "CSV").
//
// One row per rank and step (Type "rank", Index the rank). msprof-analyze (cluster_analysis,
// commit 8399c1cd) adds "stage" rows only for runs with pipeline-parallel groups, which plumb does
// not identify: plumb writes none, as msprof-analyze does for the two Ascend fixtures. Times in
// µs, numbers written as Python writes floats (msprof-analyze is pandas): the shortest exact
// form, with ".0" on whole numbers.
//
// The columns are torch_npu's step_trace_time definitions, which cluster_analysis copies per rank
// (StepBreakdown, breakdown.h), over plumb's step [start, end) with every task clipped to it:
//   Step                      the step number (ProfilerStep#N)
//   Computing                 compute_us: |∪ compute|, overlapped part included
//   Communication(Not Overlapped)   exposed_communication_us: |∪ communication \ ∪ compute|
//   Overlapped                overlapped_us: |∪ communication ∩ ∪ compute|
//   Communication             communication_us: |∪ communication|
//   Free                      free_us: between the step's first and last computation or
//                             communication, the time neither covers (memcpy/memset count)
//   Stage                     stage_us: first to last computation or communication, less Bubble
//                             (= Computing + Communication(Not Overlapped) + Free − Bubble)
//   Bubble                    bubble_us: Σ receive ops (hcom_receive_*); empty where the trace
//                             cannot tell receives apart (Kineto: NCCL's SendRecv kernels)
//   Communication(Not Overlapped and Exclude Receive)   exposed_communication_us − Bubble
//   Preparing                 preparing_us: from the step's start to its first computation or
//                             communication (empty when the step has none)
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
