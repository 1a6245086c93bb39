// The console summary of `plumb step` (docs/step.md, "Reading the summary"): per step the slowest
// rank and its breakdown (compute, exposed communication, overlapped, memory, idle, with % of the
// step), the top exposed collectives with their bandwidth against the baseline, the straggler;
// then the whole trace's stragglers, the plan comparison and the notes. Fits in 100 columns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/step_reporter.h"

namespace plumb::report {

// How many collectives the summary lists per step, by exposed time.
inline constexpr size_t kTopExposedCollectives = 5;

class StepConsoleReporter final : public StepReporter {
 public:
  void report(const step::StepResult& result, std::ostream& out) const override;
};

// "12.345 ms" (to the microsecond); "?" for NaN. Shared by the step reporters.
std::string step_ms(double us);
// A group as the summary names it: "dp(0,1,..,7)": its role (report/step_group_name.h: the name a
// person gave it, "world", else "ranks"), then its ranks (all of them up to four, else the first
// two and the last); "all ranks" when neither its name nor its ranks are known.
std::string group_label(const std::string& group, const std::vector<int>& ranks,
                        int world_size = -1);
// The step numbers the ranks hold, ascending, each once.
std::vector<int64_t> step_numbers(const step::StepResult& result);

}  // namespace plumb::report
