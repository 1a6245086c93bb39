// `plumb plan --calibrate STEP_RECORD`: the model's few efficiencies (plan/step.h, Efficiencies)
// fitted to what `plumb step --plan` measured on real steps of known layouts, within physical
// bounds (docs/plan.md section 13). A least-squares fit of the logarithms of predicted over
// measured components (compute, exposed communication per dimension, bubble, step), with a
// weak pull towards the documented constants so that what the measurements cannot tell apart
// stays where it was.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/model.h"
#include "plan/step.h"

namespace plumb::plan {

// The components a measured step gives, in this order; NaN where it gives none.
enum class StepPart { kCompute, kTp, kCp, kEp, kPp, kDp, kBubble, kStep };
inline constexpr size_t kStepParts = 8;
const char* step_part_name(StepPart p);  // "compute", "exposed tp", ..., "bubble", "step"

using PartSeconds = std::array<double, kStepParts>;
inline constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();

// The same components of a prediction.
PartSeconds predicted_parts(const Prediction& p);

// One measured step: what ran (model, device, cluster, precision, layout) and its seconds.
struct MeasuredStep {
  std::string source;  // "baseline 12", "file step.json"
  ModelSpec model;
  HardwareSpec hardware;
  ClusterSpec cluster;
  std::string precision = "bf16";
  Layout layout;
  PartSeconds measured{kUnmeasured, kUnmeasured, kUnmeasured, kUnmeasured,
                       kUnmeasured, kUnmeasured, kUnmeasured, kUnmeasured};
};

// One efficiency the fit may move: its name, its bounds and where it lives.
struct FitParameter {
  const char* name;     // "GEMM efficiency (dense)"
  const char* informs;  // what measures it: "compute", "exposed tp"
  double lower, upper;  // physical bounds of the value
  bool log_scale;       // fitted as a logarithm (a multiplier), else as itself (a share)
  double Efficiencies::*field;  // nullptr: comm[dim]
  CommDim dim;
  double shown_scale = 1;  // the value as shown: 1e6 for seconds shown in µs
};
const std::vector<FitParameter>& fit_parameters();
double parameter_value(const FitParameter& p, const Efficiencies& e);

struct ParameterChange {
  std::string name;
  std::string informs;
  double shown_scale = 1;  // FitParameter::shown_scale
  double before = 0, after = 0;
  bool measured = false;  // some measurement moves it; else left as it was
  bool at_bound = false;  // the fit pushed it to a physical bound
};

struct StepResidual {
  std::string source;
  StepPart part = StepPart::kStep;
  double measured = 0, before = 0, after = 0;  // seconds
};

struct StepFit {
  Efficiencies before, after;
  std::vector<ParameterChange> changes;  // every parameter, in fit_parameters() order
  std::vector<StepResidual> residuals;   // every measured part of every step
  int iterations = 0;
};

// Fits `start` to the measured steps. Throws plumb::Error when a step's layout is not valid for
// its model and devices, or when no step measures anything.
StepFit fit_efficiencies(const std::vector<MeasuredStep>& steps, const Efficiencies& start = {});

// The prediction of one measured step with the given efficiencies.
Prediction predict_measured(const MeasuredStep& s, const Efficiencies& e);

}  // namespace plumb::plan
