// Reporters for step::StepResult (`plumb step`): each one format, each writing to a stream it is
// handed, the CommReporter shape (comm_reporter.h). The console summary, JSON plumb.step/1 and the
// CSV of msprof-analyze's columns are in step_{console,json,csv}_reporter.h; the HTML page, built
// in memory, in step_html.h.
#pragma once

#include <ostream>

#include "step/result.h"

namespace plumb::report {

class StepReporter {
 public:
  virtual ~StepReporter() = default;
  virtual void report(const step::StepResult& result, std::ostream& out) const = 0;
};

}  // namespace plumb::report
