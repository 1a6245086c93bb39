// What a predicted step means for a long run: how often the job is interrupted, the checkpoint
// interval that wastes least (Young, Daly), the goodput left, and — given the tokens to train —
// days, device-hours, energy and money.
#pragma once

#include <optional>

#include "plan/hardware.h"
#include "plan/model.h"
#include "plan/reliability.h"
#include "plan/step.h"

namespace plumb::plan {

// Aggregate write bandwidth of the checkpoint file system, GB/s (an assumption; --storage-gbps).
inline constexpr double kDefaultStorageGbps = 100;
// From a failure to training again: detection, rescheduling, loading the checkpoint
// (an assumption; --restart-minutes).
inline constexpr double kDefaultRestartS = 10 * 60;

struct OutlookInputs {
  double failures_per_device_hour = kLlama3FailuresPerDeviceHour;
  double storage_gbps = kDefaultStorageGbps;
  double restart_s = kDefaultRestartS;
  double pue = kDefaultPue;
  std::optional<double> tokens;  // tokens to train; no cost without it
};

struct Outlook {
  OutlookInputs inputs;
  double job_mtbf_h = 0;
  double checkpoint_bytes = 0;
  double young_s = 0;
  double daly_s = 0;
  Reliability at_daly;              // goodput with checkpoints every daly_s
  double effective_tokens_per_s = 0;  // tokens_per_s × goodput
  std::optional<TrainingCost> cost;
};

Outlook outlook(const Prediction& p, const ModelSpec& m, const HardwareSpec& hw,
                const OutlookInputs& in);

}  // namespace plumb::plan
