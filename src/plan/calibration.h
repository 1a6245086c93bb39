// `plumb plan --calibrate BASELINE`: the measured busbw curve of each topology layer stands in for
// the analytic link model. A curve is the slowest group's busbw at each measured size of one
// (layer, collective); between sizes it is interpolated in log(size), below the smallest size the
// time stays that of the smallest size (latency-bound), above the largest the busbw stays that of
// the largest (bandwidth-bound). Every number says whether it came from a measurement.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/measurement_origin.h"
#include "comm/result.h"
#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/network.h"

namespace plumb::plan {

// One measured (layer, collective): busbw against message size.
struct Curve {
  std::vector<std::pair<double, double>> points;  // (bytes, busbw GB/s), sorted by bytes
  int groups = 0;           // groups the layer ran at once; each point is the slowest of them
  int group_ranks = 0;      // ranks per group (the largest group when they differ)
  std::string measured_on;  // the record's layer name ("world" when world stands in for a layer)
};

// Which part of a curve gave a number.
enum class CurveRegion { kMeasured, kInterpolated, kBelowRange, kAboveRange };

struct MeasuredEstimate {
  double busbw_gbps = 0;
  std::string collective;   // the curve used: the one asked for, or its substitute
  bool substitute = false;  // another ring collective's curve stood in (see substitutes_of)
  CurveRegion region = CurveRegion::kMeasured;
};

// What a calibration is made from: a stored or imported record's rows (plan/ sits below the
// store, so the CLI hands them over), the hosts it ran on, and its name for the report.
struct Measurement {
  std::string source;  // "baseline 3 · 2026-12-02T16:39:32Z · label"
  size_t hosts = 0;
  std::vector<comm::Row> rows;
  comm::MeasuredOn on{};  // its backend and world size (comm::measured_on of the record)
};

// The collective library and device kind a plan's hardware implies, by the vendor its name begins
// with: NVIDIA → (NCCL, GPU), AMD → (RCCL, GPU), Huawei Ascend → (HCCL, Ascend NPU), Google TPU →
// (unknown, TPU); unknown otherwise.
comm::BackendKind hardware_kind(const HardwareSpec& hardware);

class Calibration {
 public:
  // Curves from a stored or imported measurement. Rows are grouped by (layer, collective); at each
  // requested size the slowest group's busbw is kept, because a collective in a training step
  // runs in many groups at once and the step waits for the slowest. Rows of every dtype and op
  // are pooled the same way (busbw counts bytes, not elements). Rows with busbw ≤ 0, NaN or infinite, or
  // with no size, are skipped.
  //
  // Layers: "node", "rail" and "spine" map to themselves. "world" is used only where it is the
  // same thing as a layer the record lacks: on one host (hosts ≤ 1) world is the
  // node, and stands in for it when there are no "node" rows; on several hosts world crosses the
  // widest network the record reaches, and stands in for the spine when there are no "spine"
  // rows. Otherwise world rows are ignored, as are layers plumb does not know.
  //
  // A measurement with no usable row → plumb::Error "<source>: no collective measurements to
  // calibrate from".
  static Calibration from_measurement(const Measurement& m);

  // busbw (GB/s) of `collective` on `layer` for a message of `bytes` as nccl-tests counts it, or
  // nothing when that (layer, collective) was not measured or bytes is not positive. A missing
  // reducescatter is read from the allgather curve and the reverse, then from the allreduce; a
  // missing allreduce from either: the ring halves move the same data with the same (n−1)/n bus
  // factor and a ring allreduce is one of each (nccl-tests doc/PERFORMANCE.md).
  std::optional<double> busbw_gbps(NetLayer layer, const std::string& collective,
                                   double bytes) const;
  // The same, saying which curve and which part of it gave the number.
  std::optional<MeasuredEstimate> estimate(NetLayer layer, const std::string& collective,
                                           double bytes) const;

  // One line per measured curve, for the CLI to say which numbers came from measurement:
  // "node allreduce: 12 sizes 1 KiB–16 MiB, 8 ranks, slowest of 1 group(s)".
  std::vector<std::string> measured() const;

  // The calibration as plan::Network reads it (a copy of the curves travels with the function).
  MeasuredBusbw as_measured_busbw() const;

  // One line when the measurement was taken on another backend, device kind or world size than a
  // plan for `hardware` on `devices` (0: several, as plumb plan scale; the world size is then not
  // compared): "--calibrate <source> was measured on another backend (MPI, not NCCL), device kind
  // (CPU, not GPU) and world size (2 ranks, not 1024) than this plan for NVIDIA H100 SXM: its
  // busbw may not hold for the plan's links". Empty when nothing known differs.
  std::string mismatch(const HardwareSpec& hardware, int64_t devices) const;

  const std::string& source() const { return source_; }
  const std::map<std::pair<NetLayer, std::string>, Curve>& curves() const { return curves_; }

 private:
  std::string source_;
  comm::MeasuredOn on_;
  std::map<std::pair<NetLayer, std::string>, Curve> curves_;
};

// busbw of a curve at `bytes` (> 0, curve not empty). Between measured points: linear in
// log(bytes), as sweeps step sizes by a factor (nccl-tests -f 2) and the curve is smooth on that
// axis. Below the first point: busbw ∝ bytes, i.e. the first point's time is kept — in the α–β
// model (Hockney 1994) t = α + S·f/β is ≈ α for small S, so time stops falling while busbw = S·f/t
// falls with S; clamping busbw instead would predict a 1-byte message faster than the latency.
// The kept time is an upper bound (the first point's time still holds some S·f/β), so small
// messages are never predicted faster than measured. Above the last point: that point's busbw
// (the bandwidth has saturated; time grows with S).
double curve_busbw(const Curve& curve, double bytes, CurveRegion* region = nullptr);

}  // namespace plumb::plan
