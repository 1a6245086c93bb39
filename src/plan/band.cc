#include "plan/band.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "common/error.h"
#include "plan/catalog.h"
#include "plan/hardware.h"
#include "plan/step.h"
#include "plan/validation_set.h"

namespace plumb::plan {
namespace {

bool same_scale(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return false;
  return std::fabs(std::log(static_cast<double>(a) / static_cast<double>(b))) <=
         std::log(kScaleFactor) + 1e-12;
}

const char* kind_name(bool moe) { return moe ? "MoE" : "dense"; }

// The comparable runs, from the narrowest class that has kMinBandRows of them.
struct Selection {
  std::vector<const Residual*> rows;
  std::string what;
};

Selection select(const std::vector<Residual>& all, const RunClass& c,
                 std::optional<size_t> leave_out) {
  using Match = bool (*)(const Residual&, const RunClass&);
  struct Level {
    Match match;
    std::string what;
  };
  const std::vector<Level> levels = {
      {[](const Residual& r, const RunClass& k) {
         return r.moe == k.moe && r.vendor == k.vendor && same_scale(r.devices, k.devices);
       },
       fmt::format("{} on {} devices within {:g}× of {} devices", kind_name(c.moe), c.vendor,
                   kScaleFactor, c.devices)},
      {[](const Residual& r, const RunClass& k) { return r.moe == k.moe && r.vendor == k.vendor; },
       fmt::format("{} on {} devices, any scale", kind_name(c.moe), c.vendor)},
      {[](const Residual& r, const RunClass& k) { return r.moe == k.moe; },
       fmt::format("{} on any device", kind_name(c.moe))},
      {[](const Residual&, const RunClass&) { return true; }, "every published run"},
  };
  Selection s;
  for (const Level& level : levels) {
    s.rows.clear();
    for (size_t i = 0; i < all.size(); ++i) {
      if (leave_out && *leave_out == i) continue;
      if (level.match(all[i], c)) s.rows.push_back(&all[i]);
    }
    s.what = level.what;
    if (s.rows.size() >= kMinBandRows) break;
  }
  return s;
}

// The normal quantile: Φ⁻¹(p) by bisection on erfc (p in (0, 1)).
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::numbers::sqrt2) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Squared deviations as a + b·u², a and b ≥ 0, by least squares.
void fit_variance(const std::vector<double>& e2, const std::vector<double>& u2, double& a,
                  double& b) {
  const double n = static_cast<double>(e2.size());
  double su = 0, suu = 0, se = 0, sue = 0;
  for (size_t i = 0; i < e2.size(); ++i) {
    su += u2[i];
    suu += u2[i] * u2[i];
    se += e2[i];
    sue += u2[i] * e2[i];
  }
  const double det = n * suu - su * su;
  a = se / n;
  b = 0;
  if (det <= 1e-12 * n * suu) return;
  b = (n * sue - su * se) / det;
  a = (se - b * su) / n;
  if (b < 0) {
    b = 0;
    a = se / n;
  } else if (a < 0) {
    a = 0;
    b = suu > 0 ? sue / suu : 0;
  }
}

}  // namespace

std::vector<Residual> residuals_of(const std::vector<ValidationSet>& sets) {
  std::vector<Residual> out;
  for (const ValidationSet& set : sets) {
    for (const ValidationRow& row : set.rows) {
      if (!(row.predicted > 0) || !(row.published > 0)) continue;
      out.push_back({std::log(row.speed_ratio()), row.moe, row.vendor, row.devices,
                     row.overhead_share,
                     fmt::format("{}: {}", set.name, row.name.empty() ? row.layout : row.name),
                     row.split});
    }
  }
  return out;
}

double student_t(double level, size_t dof) {
  const double p = (1 + level) / 2;
  if (dof == 0) return std::numeric_limits<double>::infinity();
  if (dof == 1) return std::tan(std::numbers::pi * (p - 0.5));
  if (dof == 2) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  // Cornish–Fisher expansion of t in the normal quantile (Abramowitz and Stegun 26.7.5).
  const double z = normal_quantile(p);
  const double v = static_cast<double>(dof);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

BandModel band_model(const std::vector<Residual>& all, const RunClass& c, double level,
                     std::optional<size_t> leave_out) {
  const Selection s = select(all, c, leave_out);
  BandModel m;
  m.level = level;
  m.rows = s.rows.size();
  if (m.rows < 2) {
    m.basis = fmt::format("{} published run{}: too few for a band", m.rows, m.rows == 1 ? "" : "s");
    return m;
  }
  double sum = 0;
  for (const Residual* r : s.rows) sum += r->log_ratio;
  m.mean = sum / static_cast<double>(m.rows);
  std::vector<double> e2, u2;
  for (const Residual* r : s.rows) {
    e2.push_back((r->log_ratio - m.mean) * (r->log_ratio - m.mean));
    u2.push_back(r->overhead_share * r->overhead_share);
  }
  fit_variance(e2, u2, m.base_var, m.overhead_var);
  // Deviations from the sample's own mean understate the spread by (n − 1)/n.
  const double n = static_cast<double>(m.rows);
  m.base_var *= n / (n - 1);
  m.overhead_var *= n / (n - 1);
  m.t = student_t(level, m.rows - 1);
  m.basis = fmt::format("{} published runs: {}", m.rows, s.what);
  return m;
}

BandModel calibrated(BandModel m, const std::vector<double>& step_log_errors) {
  double own = 0;
  for (double e : step_log_errors) own += e * e;
  if (!step_log_errors.empty()) own /= static_cast<double>(step_log_errors.size());
  m.mean = 0;
  m.base_var = std::max(m.base_var, own);
  m.calibrated = true;
  m.basis = "centred on the calibrated prediction; spread of " + m.basis;
  return m;
}

Band band_for(const BandModel& m, double overhead_share) {
  if (m.empty()) return {};
  const double n = static_cast<double>(m.rows);
  const double var = (m.base_var + m.overhead_var * overhead_share * overhead_share) * (1 + 1 / n);
  const double half = m.t * std::sqrt(var);
  return {std::exp(m.mean - half), std::exp(m.mean + half)};
}

Coverage leave_one_out_coverage(const std::vector<Residual>& all, double level) {
  Coverage c;
  for (size_t i = 0; i < all.size(); ++i) {
    const Residual& r = all[i];
    const BandModel m = band_model(all, {r.moe, r.vendor, r.devices}, level, i);
    const Band b = band_for(m, r.overhead_share);
    const double ratio = std::exp(r.log_ratio);
    const bool in = !m.empty() && ratio >= b.low && ratio <= b.high;
    ++c.rows;
    c.covered += in ? 1 : 0;
    if (r.split == "check") {
      ++c.check_rows;
      c.check_covered += in ? 1 : 0;
    }
  }
  return c;
}

double pessimistic_tokens_per_s(const BandModel& m, const Prediction& p) {
  return p.tokens_per_s * band_for(m, overhead_share(p)).low;
}

std::vector<Residual> shipped_residuals() {
  const std::string dir = data_dir() + "/validation/";
  std::vector<ValidationSet> sets;
  const HardwareSpec a100 = load_hardware(preset_path("hardware", "a100-80gb"));
  sets.push_back(validate_megatron_sc21(dir + "megatron_sc21_table1.csv", a100));
  sets.push_back(validate_vtrain(dir + "vtrain_ground_truth_multi.csv", a100));
  for (const std::string& file : run_set_files(dir)) sets.push_back(load_run_set(file).set);
  return residuals_of(sets);
}

}  // namespace plumb::plan
