// plumb step's breakdown of the real Kineto fixtures against Holistic Trace Analysis run from
// source (github.com/facebookresearch/HolisticTraceAnalysis at f4d0062, Debian's python3-pandas
// 1.5.3; bench/step_peers.py reruns it) with the settings under which the two agree:
// TraceAnalysis(trace_dir, include_last_profiler_step=True) and HTA_DISABLE_NS_ROUNDING=1
// (docs/step.md, "Reconciling with HTA"). The figures below are get_temporal_breakdown's and
// get_comm_comp_overlap's output, as HTA printed them. The relations are exact when every kernel
// lies inside a step, as in these fixtures but kineto-compute-only.
#include <gtest/gtest.h>

#include <cmath>
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
  int rank;
  double kernel_time, idle, compute, non_compute;  // µs
  double overlap_pctg;                             // round(100 × overlap / communication, 2)
};

// plumb reads times exactly; HTA's come from the same decimal text as float64 µs.
constexpr double kTolerance = 0.01;

double rounded_pctg(double part, double whole) { return std::round(10000 * part / whole) / 100; }

TEST(StepAgreesWithHta, WhereEveryKernelIsInsideAStep) {
  const HtaFigures cases[] = {
      {"kineto-collective-args/rank-0.json.gz", 0, 660551.005633, 503050.991406, 115655.847,
       41844.167226, 15.61},
      {"kineto-2ranks-of-128/rank-0.json.gz", 0, 1222847.0, 675191.0, 210320.0, 337336.0, 14.95},
      {"kineto-2ranks-of-128/rank-1.json.gz", 1, 1231186.0, 651136.0, 271973.0, 308077.0, 19.93},
      {"kineto-ddp-rank1-of2/df_index_resolver.json.gz", 1, 1732965.0, 732352.0, 620516.0,
       380097.0, 0.0},
  };
  for (const HtaFigures& hta : cases) {
    SCOPED_TRACE(hta.file);
    const Sums s = sums_of(hta.file);
    EXPECT_NEAR(s.compute, hta.compute, kTolerance);
    // HTA's non-compute: exposed communication and memory copies not under compute.
    EXPECT_NEAR(s.exposed + s.memory, hta.non_compute, kTolerance);
    // HTA's idle leaves out the steps' time before the first and after the last kernel.
    EXPECT_NEAR(s.idle - (s.step - hta.kernel_time), hta.idle, kTolerance);
    EXPECT_DOUBLE_EQ(rounded_pctg(s.overlapped, s.communication), hta.overlap_pctg);
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
