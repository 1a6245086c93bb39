// plumb step's breakdown of the real Kineto fixtures against Holistic Trace Analysis's
// definitions (docs/step.md, "Reconciling with HTA"). The HTA figures were computed from the raw
// JSON by an independent script following hta/analyzers/breakdown_analysis.py's definitions
// (whole trace: kernel_time = last kernel end − first kernel start, idle = kernel_time − |∪ all|,
// compute = |∪ compute|, non_compute = kernel_time − compute − idle) and communication_analysis's
// overlap; the relations are exact when every kernel lies inside a step, as in these fixtures.
#include <gtest/gtest.h>

#include <string>

#include "step/analysis.h"
#include "step/readers.h"

namespace plumb::step {
namespace {

const std::string kTraces = std::string(PLUMB_TEST_FIXTURES) + "/traces/";

struct Sums {
  double step = 0, compute = 0, communication = 0, overlapped = 0, exposed = 0, memory = 0,
         idle = 0;
};

Sums sums_of(const std::string& file) {
  StepResult result = analyze({read_kineto(kTraces + file, {})}, {});
  Sums s;
  for (const StepBreakdown& b : result.ranks.at(0).steps) {
    s.step += b.step_time_us;
    s.compute += b.compute_us;
    s.communication += b.communication_us;
    s.overlapped += b.overlapped_us;
    s.exposed += b.exposed_communication_us;
    s.memory += b.memory_us;
    s.idle += b.idle_us;
  }
  return s;
}

struct HtaFigures {
  const char* file;
  double kernel_time, idle, compute, non_compute, communication, overlap;  // µs
};

// Rounding: HTA's figures come from float µs timestamps, plumb's from exact decimal text.
constexpr double kTolerance = 0.01;

TEST(StepAgreesWithHta, WhereEveryKernelIsInsideAStep) {
  const HtaFigures cases[] = {
      {"kineto-collective-args/rank-0.json.gz", 660551.006, 503050.992, 115655.847, 41844.167,
       46876.493, 7317.025},
      {"kineto-2ranks-of-128/rank-0.json.gz", 1222846.928, 675190.936, 210320.000, 337335.992,
       396199.000, 59216.008},
  };
  for (const HtaFigures& hta : cases) {
    SCOPED_TRACE(hta.file);
    const Sums s = sums_of(hta.file);
    EXPECT_NEAR(s.compute, hta.compute, kTolerance);
    EXPECT_NEAR(s.communication, hta.communication, kTolerance);
    EXPECT_NEAR(s.overlapped, hta.overlap, kTolerance);
    // HTA's non-compute: exposed communication and memory copies not under compute.
    EXPECT_NEAR(s.exposed + s.memory, hta.non_compute, kTolerance);
    // HTA's idle leaves out the steps' time before the first and after the last kernel.
    EXPECT_NEAR(s.idle - (s.step - hta.kernel_time), hta.idle, kTolerance);
  }
}

// Kernels that run after their step's host span ended (the device lags the host) count in HTA's
// whole-trace figures, not in any plumb step: plumb's compute is then below HTA's.
TEST(StepAgreesWithHta, KernelsOutsideStepsCountOnlyInHta) {
  const Sums s = sums_of("kineto-compute-only/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  EXPECT_NEAR(s.compute, 380405.967, kTolerance);
  EXPECT_LT(s.compute, 468153.602);  // HTA's compute_time over the whole trace
  EXPECT_DOUBLE_EQ(s.communication, 0);
}

}  // namespace
}  // namespace plumb::step
