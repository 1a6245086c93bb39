#include "plan/reliability.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "common/error.h"
#include "plan/hardware.h"

namespace plumb::plan {
namespace {

constexpr double kBytesPerGB = 1e9;
constexpr double kSecondsPerHour = 3600;

}  // namespace

double job_mtbf_hours(double failures_per_device_hour, int64_t devices) {
  assert(failures_per_device_hour > 0 && devices > 0);
  return 1 / (failures_per_device_hour * static_cast<double>(devices));
}

double failure_rate_from_mtbf(double device_mtbf_hours) {
  assert(device_mtbf_hours > 0);
  return 1 / device_mtbf_hours;
}

double young_interval(double checkpoint_s, double mtbf_s) {
  assert(checkpoint_s >= 0 && mtbf_s > 0);
  return std::sqrt(2 * checkpoint_s * mtbf_s);
}

double daly_interval(double checkpoint_s, double mtbf_s) {
  assert(checkpoint_s >= 0 && mtbf_s > 0);
  const double delta = checkpoint_s;
  const double m = mtbf_s;
  if (delta >= 2 * m) return m;
  const double x = delta / (2 * m);
  return std::sqrt(2 * delta * m) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

Reliability expected_goodput(double mtbf_s, double checkpoint_s, double restart_s,
                             double interval_s) {
  assert(mtbf_s > 0 && checkpoint_s >= 0 && restart_s >= 0 && interval_s > 0);
  Reliability r;
  r.mtbf_s = mtbf_s;
  r.checkpoint_s = checkpoint_s;
  r.restart_s = restart_s;
  r.interval_s = interval_s;
  const double segment = interval_s + checkpoint_s;
  r.checkpoint_waste = checkpoint_s / segment;
  r.failure_waste = (restart_s + segment / 2) / mtbf_s;
  r.goodput = std::max(0.0, 1 - r.checkpoint_waste - r.failure_waste);
  return r;
}

double checkpoint_seconds(double checkpoint_bytes, double storage_gbps) {
  assert(checkpoint_bytes >= 0 && storage_gbps > 0);
  return checkpoint_bytes / (storage_gbps * kBytesPerGB);
}

double checkpoint_bytes(double parameters) { return kCheckpointBytesPerParameter * parameters; }

TrainingCost training_cost(double tokens, double tokens_per_s, double goodput, int64_t devices,
                           std::optional<double> tdp_w, double pue,
                           std::optional<double> usd_per_device_hour) {
  assert(tokens >= 0 && tokens_per_s > 0 && devices > 0 && pue >= 1);
  if (goodput <= 0) {
    throw Error("plan: goodput is 0: failures come faster than checkpoints can be written");
  }
  const double hours = tokens / (tokens_per_s * goodput) / kSecondsPerHour;
  TrainingCost c;
  c.days = hours / kHoursPerDay;
  c.device_hours = static_cast<double>(devices) * hours;
  if (tdp_w) c.energy_mwh = *tdp_w * c.device_hours * pue / kWattHoursPerMWh;
  if (usd_per_device_hour) c.usd = *usd_per_device_hour * c.device_hours;
  return c;
}

}  // namespace plumb::plan
