// Reliability and cost of a training plan: how often a job of N devices fails, how often it
// should checkpoint (Young 1974; Daly 2006), what fraction of wall time is left for training, and
// what the run costs in days, device-hours, energy and money.
// Failures are independent across devices and arrive as a Poisson process (exponential times
// between failures), the assumption of both Young and Daly. Units are named in each signature;
// the interval functions take any one time unit and return the same unit.
#pragma once

#include <cstdint>
#include <optional>

namespace plumb::plan {

// Failures per device-hour of a large, well-run training cluster: Dubey et al. 2024, "The Llama 3
// Herd of Models", Section 3.3.4: 419 unexpected interruptions in a 54-day snapshot of Llama 3
// 405B pre-training on 16,384 H100 GPUs: 419 / (16,384 · 54 · 24) ≈ 1.973e-5. It counts every
// interruption (GPU, HBM, NIC, host, network, software), each charged to the whole job.
inline constexpr double kLlama3FailuresPerDeviceHour = 419.0 / (16384.0 * 54 * 24);

// Mixed-precision Adam checkpoint: bf16 weights (2 B) and the fp32 master weights, momentum and
// variance (12 B) per parameter. Gradients (the other 2 B of the 16 B of model states, see
// model_states in plan/memory.h) are rebuilt by the next step and not saved.
inline constexpr double kCheckpointBytesPerParameter = 14;

// Power usage effectiveness (facility power / IT power) of the data centre. 1.2 is the figure
// for a modern hyperscale or purpose-built AI facility: hyperscalers report fleet averages of
// about 1.1 (Google's environmental reports: 1.10), while the Uptime Institute Global Data
// Center Survey 2023 puts the average of all surveyed sites at 1.58. Large training runs use the
// former kind; 1.2 leaves a margin above the best fleets. Pass the site's own figure when known.
inline constexpr double kDefaultPue = 1.2;

// Mean time between failures of a job on `devices` devices, in hours: 1 / (rate · N), the
// minimum of N independent exponential lifetimes.
double job_mtbf_hours(double failures_per_device_hour, int64_t devices);

// Failures per device-hour of a device with the given MTBF in hours: 1 / MTBF.
double failure_rate_from_mtbf(double device_mtbf_hours);

// Young 1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9):
// the work between checkpoints that minimises lost time, sqrt(2 · C · M), for checkpoint time C
// and mean time between failures M.
double young_interval(double checkpoint_s, double mtbf_s);

// Daly 2006, "A higher order estimate of the optimum checkpoint interval for restart dumps",
// FGCS 22(3), Eq. 37: for δ < 2M,
//   τ = sqrt(2δM) · [1 + (1/3)·sqrt(δ/(2M)) + (1/9)·(δ/(2M))] − δ,
// else τ = M. Tends to Young's sqrt(2δM) as δ/M → 0.
double daly_interval(double checkpoint_s, double mtbf_s);

struct Reliability {
  double mtbf_s = 0;            // M: mean time between failures of the whole job
  double checkpoint_s = 0;      // δ: time to write one checkpoint (training stalls meanwhile)
  double restart_s = 0;         // R: time from a failure until training resumes from a checkpoint
  double interval_s = 0;        // τ: work between checkpoints
  double checkpoint_waste = 0;  // δ / (τ + δ): share of wall time spent writing checkpoints
  double failure_waste = 0;     // (R + (τ + δ)/2) / M: share lost to restarts and rework
  double goodput = 0;           // max(0, 1 − checkpoint_waste − failure_waste)
};

// Share of wall time spent on useful training, after the first-order model of Daly 2006 (its
// simplified cost function: solve, dump, rework and restart time): the run is segments of τ work
// plus a δ checkpoint; failures arrive every M on average and each costs the restart R plus, on
// average, half a segment (τ + δ)/2 of rework. So the wasted share of wall time is
// δ/(τ + δ) + (R + (τ + δ)/2)/M, and goodput = max(0, 1 − that). It is accurate to first order,
// while τ + δ and R are small against M; its best τ is sqrt(2δM) − δ, Daly's first-order optimum,
// which daly_interval refines. All four arguments in seconds.
Reliability expected_goodput(double mtbf_s, double checkpoint_s, double restart_s,
                             double interval_s);

// Seconds to write `checkpoint_bytes` at `storage_gbps`, the file system's aggregate write
// bandwidth in GB/s (1e9 bytes per second).
double checkpoint_seconds(double checkpoint_bytes, double storage_gbps);

// Bytes of one full checkpoint of mixed-precision Adam training: kCheckpointBytesPerParameter
// (14) per parameter.
double checkpoint_bytes(double parameters);

struct TrainingCost {
  double days = 0;                   // wall time, failures and checkpoints included
  double device_hours = 0;           // devices × wall hours
  std::optional<double> energy_mwh;  // absent when the device's TDP is unknown
  std::optional<double> usd;         // absent when no price per device-hour is given
};

// Cost of training on `tokens` at `tokens_per_s` (the whole job's throughput while it runs):
// wall time = tokens / (tokens_per_s · goodput); device-hours = devices × wall hours; energy =
// TDP × devices × wall hours × PUE (TDP bounds the devices' draw from above; PUE adds the
// facility's cooling and power losses; host CPUs, network and storage are not counted); money =
// device-hours × price. Throws plumb::Error when goodput ≤ 0 (failures outpace checkpoints).
TrainingCost training_cost(double tokens, double tokens_per_s, double goodput, int64_t devices,
                           std::optional<double> tdp_w, double pue,
                           std::optional<double> usd_per_device_hour);

}  // namespace plumb::plan
