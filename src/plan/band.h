// Prediction bands (docs/plan.md section 14): where the measured speed of runs like a plan's fell
// relative to plumb's prediction, in the published runs of the validation sets. A band is a
// prediction interval of log(measured / predicted speed) over comparable runs (dense or MoE, the
// device's vendor, the scale), whose spread grows with the share of the step that is not compute
// (exposed communication, bubble, optimizer): the parts the model is least sure of. Calibrated
// from measured steps, the band is centred on the calibrated prediction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/step.h"
#include "plan/validation.h"

namespace plumb::plan {

// One published run as a band sees it.
struct Residual {
  double log_ratio = 0;  // log(measured speed / predicted speed)
  bool moe = false;
  std::string vendor;
  int64_t devices = 0;
  double overhead_share = 0;
  std::string name;   // "megatron-sc21: tp 8 pp 1 dp 1", for tests and --rows
  std::string split;  // "build" or "check"
};

std::vector<Residual> residuals_of(const std::vector<ValidationSet>& sets);

// What a plan is, for choosing comparable runs.
struct RunClass {
  bool moe = false;
  std::string vendor;
  int64_t devices = 0;
};

// The bands' level unless asked: the 80% band, between the 10th and 90th percentiles.
inline constexpr double kBandLevel = 0.8;
// The fewest comparable runs a band is drawn from; with fewer, the class widens (same kind and
// vendor at any scale, then the same kind, then every run).
inline constexpr size_t kMinBandRows = 8;
// "The same scale": within this factor of the plan's device count.
inline constexpr double kScaleFactor = 8;

struct BandModel {
  double level = kBandLevel;
  double mean = 0;          // of log(measured / predicted speed)
  double base_var = 0;      // the spread every run has
  double overhead_var = 0;  // and what grows with the overhead share, squared
  double t = 0;             // Student's t at the level, rows − 1 degrees of freedom
  size_t rows = 0;
  std::string basis;        // "18 published runs: MoE on nvidia devices, 256 to 16384 devices"
  bool calibrated = false;
  bool empty() const { return rows < 2; }
};

// The band of a class from the residuals (`leave_out`: a row not to use, for leave-one-out).
BandModel band_model(const std::vector<Residual>& all, const RunClass& c,
                     double level = kBandLevel, std::optional<size_t> leave_out = std::nullopt);

// Centres a band on a prediction calibrated from measured steps: the bias is what calibration
// removes; the spread is the larger of the published runs' and the steps' own after the fit
// (`step_log_errors`: log(measured / fitted) of each measured step time).
BandModel calibrated(BandModel m, const std::vector<double>& step_log_errors);

// Measured over predicted speed, at the band's two ends.
struct Band {
  double low = 1, high = 1;
};
Band band_for(const BandModel& m, double overhead_share);

// The pessimistic end of a prediction's tokens/s: its band's low end (the point without a band).
double pessimistic_tokens_per_s(const BandModel& m, const Prediction& p);

// Student's t quantile for a two-sided `level` interval with `dof` degrees of freedom.
double student_t(double level, size_t dof);

// How often a run's band, drawn from every other run (leave-one-out), holds its measured speed.
struct Coverage {
  size_t rows = 0, covered = 0;
  size_t check_rows = 0, check_covered = 0;  // of the check split
};
Coverage leave_one_out_coverage(const std::vector<Residual>& all, double level = kBandLevel);

// The residuals of the validation sets shipped in the data folder (both built-in sets and every
// run-set file); none when the folder has none.
std::vector<Residual> shipped_residuals();

}  // namespace plumb::plan
