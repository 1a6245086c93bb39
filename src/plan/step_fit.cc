#include "plan/step_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/error.h"
#include "common/strings.h"
#include "plan/network.h"

namespace plumb::plan {
namespace {

// Bounds: a GEMM class reaches at most the chip's measured best-shape rate (MAMF), so its
// multiplier at most 1/kFrameworkGemmShare; a link at most its line rate, and the default
// clusters take 0.77 of the scale-up and 0.92 of the scale-out line rate (docs/plan.md section
// 6), so a bandwidth multiplier at most 1/0.77. Below, a fifth of the documented rate for a GEMM
// and a twentieth for a link: beyond that the measurement is of something else (a wrong layout,
// another job on the links). A kernel costs 1 to 100 µs; an overlap hides none to all.
constexpr double kGemmCeiling = 1 / kFrameworkGemmShare;
constexpr double kLinkCeiling = 1 / 0.77;
constexpr double kGemmFloor = 0.2;
constexpr double kLinkFloor = 0.05;

const std::vector<FitParameter> kParameters = {
    {"GEMM efficiency, dense", "compute", kGemmFloor, kGemmCeiling, true, &Efficiencies::gemm,
     CommDim::kTp},
    {"GEMM efficiency, experts", "compute", kGemmFloor, kGemmCeiling, true,
     &Efficiencies::expert_gemm, CommDim::kTp},
    {"attention efficiency", "compute", kGemmFloor, kGemmCeiling, true, &Efficiencies::attention,
     CommDim::kTp},
    {"kernel overhead (µs)", "compute", 1e-6, 1e-4, true, &Efficiencies::kernel_overhead_s,
     CommDim::kTp, 1e6},
    {"TP bandwidth", "exposed tp", kLinkFloor, kLinkCeiling, true, nullptr, CommDim::kTp},
    {"CP bandwidth", "exposed cp", kLinkFloor, kLinkCeiling, true, nullptr, CommDim::kCp},
    {"EP bandwidth", "exposed ep", kLinkFloor, kLinkCeiling, true, nullptr, CommDim::kEp},
    {"PP bandwidth", "exposed pp", kLinkFloor, kLinkCeiling, true, nullptr, CommDim::kPp},
    {"DP bandwidth", "exposed dp", kLinkFloor, kLinkCeiling, true, nullptr, CommDim::kDp},
    {"overlap hidden", "exposed communication", 0, 1, false, &Efficiencies::overlap, CommDim::kTp},
};

// The weak pull of each parameter towards where it started, against residuals that are
// logarithms: a measurement moves a parameter it is sensitive to; one no measurement moves stays.
constexpr double kPull = 0.01;
// A part below this share of its measured step counts as this share (the logarithm of a part
// that is nearly zero would make noise of it).
constexpr double kFloorShare = 0.01;
constexpr int kMaxIterations = 200;
// A parameter whose residuals move less than this per unit of its (log) value is unmeasured.
constexpr double kMinSensitivity = 1e-4;

double& field_of(const FitParameter& p, Efficiencies& e) {
  return p.field ? e.*(p.field) : e.comm[static_cast<size_t>(p.dim)];
}

std::vector<double> to_x(const Efficiencies& e) {
  std::vector<double> x;
  for (const FitParameter& p : kParameters) {
    const double v = parameter_value(p, e);
    x.push_back(p.log_scale ? std::log(v) : v);
  }
  return x;
}

Efficiencies from_x(const std::vector<double>& x, Efficiencies e) {
  for (size_t i = 0; i < kParameters.size(); ++i) {
    field_of(kParameters[i], e) = kParameters[i].log_scale ? std::exp(x[i]) : x[i];
  }
  return e;
}

double lower_x(const FitParameter& p) { return p.log_scale ? std::log(p.lower) : p.lower; }
double upper_x(const FitParameter& p) { return p.log_scale ? std::log(p.upper) : p.upper; }

void clamp_x(std::vector<double>& x) {
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::clamp(x[i], lower_x(kParameters[i]), upper_x(kParameters[i]));
  }
}

bool measured(double v) { return std::isfinite(v) && v >= 0; }

Prediction predict_on(const MeasuredStep& s, const Network& net, const Efficiencies& e) {
  ComputeModel compute = compute_model(s.hardware);
  compute.tuned = e;
  return Predictor(s.model, s.hardware, net, s.precision, compute)(s.layout);
}

// Each step's network, built once (a Network is what a Predictor reads its links from).
struct Problem {
  const std::vector<MeasuredStep>& steps;
  std::vector<Network> networks;
  std::vector<double> x0;

  Problem(const std::vector<MeasuredStep>& s, const Efficiencies& start)
      : steps(s), x0(to_x(start)) {
    networks.reserve(s.size());
    for (const MeasuredStep& m : s) networks.emplace_back(m.cluster, Algorithm::kAuto);
  }

  Prediction predict(size_t i, const Efficiencies& e) const {
    return predict_on(steps[i], networks[i], e);
  }

  // log(predicted / measured) of every measured part (each floored at kFloorShare of its step),
  // then the pull of each parameter towards its start.
  std::vector<double> residuals(const std::vector<double>& x, const Efficiencies& base) const {
    const Efficiencies e = from_x(x, base);
    std::vector<double> r;
    for (size_t i = 0; i < steps.size(); ++i) {
      const PartSeconds pred = predicted_parts(predict(i, e));
      const PartSeconds& meas = steps[i].measured;
      const double step = measured(meas[static_cast<size_t>(StepPart::kStep)])
                              ? meas[static_cast<size_t>(StepPart::kStep)]
                              : pred[static_cast<size_t>(StepPart::kStep)];
      const double floor = kFloorShare * step;
      for (size_t k = 0; k < kStepParts; ++k) {
        if (!measured(meas[k])) continue;
        r.push_back(std::log((pred[k] + floor) / (meas[k] + floor)));
      }
    }
    for (size_t j = 0; j < x.size(); ++j) r.push_back(kPull * (x[j] - x0[j]));
    return r;
  }
};

double cost(const std::vector<double>& r) {
  double c = 0;
  for (double v : r) c += v * v;
  return c;
}

// Solves a · δ = b for a small symmetric positive matrix (Gaussian elimination, partial pivot).
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row) {
      if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
    }
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    if (std::fabs(a[col][col]) < 1e-300) continue;
    for (size_t row = col + 1; row < n; ++row) {
      const double f = a[row][col] / a[col][col];
      for (size_t k = col; k < n; ++k) a[row][k] -= f * a[col][k];
      b[row] -= f * b[col];
    }
  }
  std::vector<double> x(n, 0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = std::fabs(a[i][i]) < 1e-300 ? 0 : s / a[i][i];
  }
  return x;
}

// Forward-difference Jacobian of the residuals, one column per parameter.
std::vector<std::vector<double>> jacobian(const Problem& p, const std::vector<double>& x,
                                          const std::vector<double>& r, const Efficiencies& base) {
  constexpr double kStep = 1e-6;
  std::vector<std::vector<double>> j(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> moved = x;
    const double h = moved[i] + kStep > upper_x(kParameters[i]) ? -kStep : kStep;
    moved[i] += h;
    const std::vector<double> r2 = p.residuals(moved, base);
    j[i].resize(r.size());
    for (size_t k = 0; k < r.size(); ++k) j[i][k] = (r2[k] - r[k]) / h;
  }
  return j;
}

// How much the measurements (not the pull) move parameter i.
double sensitivity(const std::vector<double>& column, size_t pull_rows) {
  double s = 0;
  for (size_t k = 0; k + pull_rows < column.size(); ++k) s += column[k] * column[k];
  return std::sqrt(s);
}

// Levenberg–Marquardt, each step projected onto the bounds.
std::pair<std::vector<double>, int> minimise(const Problem& p, std::vector<double> x,
                                             const Efficiencies& base) {
  std::vector<double> r = p.residuals(x, base);
  double c = cost(r);
  double damping = 1e-3;
  int it = 0;
  for (; it < kMaxIterations; ++it) {
    const auto j = jacobian(p, x, r, base);
    const size_t n = x.size();
    std::vector<std::vector<double>> jtj(n, std::vector<double>(n, 0));
    std::vector<double> jtr(n, 0);
    for (size_t a = 0; a < n; ++a) {
      for (size_t k = 0; k < r.size(); ++k) jtr[a] -= j[a][k] * r[k];
      for (size_t b = 0; b < n; ++b) {
        for (size_t k = 0; k < r.size(); ++k) jtj[a][b] += j[a][k] * j[b][k];
      }
    }
    bool improved = false;
    while (damping < 1e12) {
      auto a = jtj;
      for (size_t i = 0; i < n; ++i) a[i][i] += damping * (jtj[i][i] + 1e-9);
      std::vector<double> trial = x;
      const std::vector<double> delta = solve(a, jtr);
      for (size_t i = 0; i < n; ++i) trial[i] += delta[i];
      clamp_x(trial);
      const std::vector<double> r2 = p.residuals(trial, base);
      const double c2 = cost(r2);
      if (c2 < c) {
        const bool converged = c - c2 < 1e-15 * std::max(1.0, c);
        x = std::move(trial);
        r = r2;
        c = c2;
        damping = std::max(damping / 3, 1e-12);
        improved = !converged;
        break;
      }
      damping *= 4;
    }
    if (!improved) break;
  }
  return {x, it};
}

}  // namespace

const char* step_part_name(StepPart p) {
  switch (p) {
    case StepPart::kCompute: return "compute";
    case StepPart::kTp: return "exposed tp";
    case StepPart::kCp: return "exposed cp";
    case StepPart::kEp: return "exposed ep";
    case StepPart::kPp: return "exposed pp";
    case StepPart::kDp: return "exposed dp";
    case StepPart::kBubble: return "bubble";
    case StepPart::kStep: return "step";
  }
  return "";
}

PartSeconds predicted_parts(const Prediction& p) {
  const Breakdown& b = p.breakdown;
  return {b.compute, b.tp, b.cp, b.ep, b.pp, b.dp, b.bubble, p.step_time_s};
}

const std::vector<FitParameter>& fit_parameters() { return kParameters; }

double parameter_value(const FitParameter& p, const Efficiencies& e) {
  return p.field ? e.*(p.field) : e.comm_of(p.dim);
}

Prediction predict_measured(const MeasuredStep& s, const Efficiencies& e) {
  return predict_on(s, Network(s.cluster, Algorithm::kAuto), e);
}

StepFit fit_efficiencies(const std::vector<MeasuredStep>& steps, const Efficiencies& start) {
  size_t parts = 0;
  for (const MeasuredStep& s : steps) {
    // devices() is tp·cp·pp·dp in int64: a layout beyond kMaxDevices is refused before it is formed.
    const std::vector<std::string> problems =
        beyond_max_devices(s.layout) ? std::vector<std::string>{too_many_devices(s.layout)}
                                     : layout_problems(s.model, s.layout, s.layout.devices());
    if (!problems.empty()) {
      throw Error(fmt::format("{}: its layout is not one plumb plan runs: {}", s.source,
                              join(problems, "; ")));
    }
    parts += static_cast<size_t>(std::count_if(s.measured.begin(), s.measured.end(), measured));
  }
  if (parts == 0) throw Error("--calibrate: the measured steps give no time to fit to");
  const Problem problem(steps, start);
  std::vector<double> x0 = problem.x0;
  clamp_x(x0);
  const auto [x, iterations] = minimise(problem, x0, start);
  StepFit fit;
  fit.before = start;
  fit.after = from_x(x, start);
  fit.iterations = iterations;
  const std::vector<double> r = problem.residuals(x, start);
  const auto j = jacobian(problem, x, r, start);
  for (size_t i = 0; i < kParameters.size(); ++i) {
    const FitParameter& p = kParameters[i];
    ParameterChange c{p.name, p.informs, p.shown_scale, parameter_value(p, start),
                      parameter_value(p, fit.after)};
    c.measured = sensitivity(j[i], kParameters.size()) > kMinSensitivity;
    c.at_bound = c.measured && (x[i] <= lower_x(p) + 1e-9 || x[i] >= upper_x(p) - 1e-9);
    if (!c.measured) field_of(p, fit.after) = c.after = c.before;
    fit.changes.push_back(c);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const PartSeconds before = predicted_parts(problem.predict(i, start));
    const PartSeconds after = predicted_parts(problem.predict(i, fit.after));
    for (size_t k = 0; k < kStepParts; ++k) {
      if (!measured(steps[i].measured[k])) continue;
      fit.residuals.push_back({steps[i].source, static_cast<StepPart>(k), steps[i].measured[k],
                               before[k], after[k]});
    }
  }
  return fit;
}

}  // namespace plumb::plan
