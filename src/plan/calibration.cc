#include "plan/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::plan {
namespace {

// The layer a record's layer name calibrates, or nothing (world is decided by world_layer()).
std::optional<NetLayer> own_layer(const std::string& name) {
  if (name == "node") return NetLayer::kNode;
  if (name == "rail") return NetLayer::kRail;
  if (name == "spine") return NetLayer::kSpine;
  return std::nullopt;
}

bool usable(const comm::Row& row) {
  return std::isfinite(row.busbw_gbps) && row.busbw_gbps > 0 &&
         (row.requested_bytes > 0 || row.bytes > 0);
}

// Imported records may carry only the measured size.
uint64_t size_of(const comm::Row& row) {
  return row.requested_bytes > 0 ? row.requested_bytes : row.bytes;
}

// World on one host is the node; on several it crosses the widest network the record reaches and
// stands in for the spine. It is used only where the record has no rows of that layer itself.
std::optional<NetLayer> world_layer(size_t hosts, const std::set<NetLayer>& present) {
  const NetLayer layer = hosts <= 1 ? NetLayer::kNode : NetLayer::kSpine;
  if (present.count(layer) > 0) return std::nullopt;
  return layer;
}

struct Building {
  std::map<uint64_t, double> slowest;  // size → slowest group's busbw
  std::set<std::string> groups;
  int group_ranks = 0;
  std::string measured_on;
};

// Curves that stand in for a collective not measured, best first. Ring allgather and
// reduce-scatter move the same data with the same (n−1)/n bus factor; ring allreduce is a
// reduce-scatter then an allgather of the same size, so its busbw is theirs (nccl-tests
// doc/PERFORMANCE.md: busbw is comparable across collectives for that reason).
std::vector<const char*> substitutes_of(const std::string& collective) {
  if (collective == "reducescatter") return {"allgather", "allreduce"};
  if (collective == "allgather") return {"reducescatter", "allreduce"};
  if (collective == "allreduce") return {"reducescatter", "allgather"};
  return {};
}

}  // namespace

double curve_busbw(const Curve& curve, double bytes, CurveRegion* region) {
  CurveRegion where = CurveRegion::kMeasured;
  double busbw = 0;
  const auto& p = curve.points;
  const auto upper = std::lower_bound(p.begin(), p.end(), bytes,
                                      [](const auto& point, double b) { return point.first < b; });
  if (upper == p.end()) {
    where = CurveRegion::kAboveRange;
    busbw = p.back().second;
  } else if (upper->first == bytes) {
    busbw = upper->second;
  } else if (upper == p.begin()) {
    where = CurveRegion::kBelowRange;
    busbw = p.front().second * bytes / p.front().first;
  } else {
    where = CurveRegion::kInterpolated;
    const auto lower = upper - 1;
    const double t = std::log(bytes / lower->first) / std::log(upper->first / lower->first);
    busbw = lower->second + t * (upper->second - lower->second);
  }
  if (region != nullptr) *region = where;
  return busbw;
}

comm::BackendKind hardware_kind(const HardwareSpec& hardware) {
  struct Vendor {
    std::string_view prefix;
    const char* library;
    const char* device;
  };
  static constexpr Vendor kVendors[] = {
      {"NVIDIA", "NCCL", "GPU"},
      {"AMD", "RCCL", "GPU"},
      {"Huawei Ascend", "HCCL", "Ascend NPU"},
      {"Ascend", "HCCL", "Ascend NPU"},
      {"Google TPU", "", "TPU"},
  };
  for (const Vendor& v : kVendors) {
    if (hardware.name.rfind(v.prefix, 0) == 0) return {v.library, v.device};
  }
  return {};
}

std::string Calibration::mismatch(const HardwareSpec& hardware, int64_t devices) const {
  const std::string differs = comm::mismatch_text(comm::backend_kind(on_.backend), on_.ranks,
                                                  hardware_kind(hardware), devices);
  if (differs.empty()) return "";
  return fmt::format("--calibrate {} was measured on {} than this plan for {}: its busbw may not "
                     "hold for the plan's links",
                     source_, differs, hardware.name);
}

Calibration Calibration::from_measurement(const Measurement& m) {
  Calibration c;
  c.source_ = m.source.empty() ? "baseline" : m.source;
  c.on_ = m.on;
  std::set<NetLayer> present;
  for (const comm::Row& row : m.rows) {
    if (auto layer = own_layer(row.layer); layer && usable(row)) present.insert(*layer);
  }
  const std::optional<NetLayer> world = world_layer(m.hosts, present);

  std::map<std::pair<NetLayer, std::string>, Building> building;
  for (const comm::Row& row : m.rows) {
    if (!usable(row)) continue;
    std::optional<NetLayer> layer = row.layer == "world" ? world : own_layer(row.layer);
    if (!layer) continue;
    Building& b = building[{*layer, row.collective}];
    // A step's collective runs in every group at once and finishes with the slowest group.
    auto [it, fresh] = b.slowest.try_emplace(size_of(row), row.busbw_gbps);
    if (!fresh) it->second = std::min(it->second, row.busbw_gbps);
    b.groups.insert(row.group);
    b.group_ranks = std::max(b.group_ranks, row.group_ranks);
    b.measured_on = row.layer;
  }
  if (building.empty()) {
    throw Error(fmt::format("{}: no collective measurements to calibrate from", c.source_));
  }
  for (auto& [key, b] : building) {
    Curve& curve = c.curves_[key];
    for (const auto& [size, busbw] : b.slowest) {  // std::map: ascending sizes
      curve.points.emplace_back(static_cast<double>(size), busbw);
    }
    curve.groups = static_cast<int>(b.groups.size());
    curve.group_ranks = b.group_ranks;
    curve.measured_on = b.measured_on;
  }
  return c;
}

std::optional<MeasuredEstimate> Calibration::estimate(NetLayer layer, const std::string& collective,
                                                      double bytes) const {
  if (!(bytes > 0)) return std::nullopt;  // also NaN
  MeasuredEstimate e;
  e.collective = collective;
  auto it = curves_.find({layer, collective});
  for (const char* other : substitutes_of(collective)) {
    if (it != curves_.end()) break;
    it = curves_.find({layer, other});
    e.collective = other;
    e.substitute = true;
  }
  if (it == curves_.end()) return std::nullopt;
  e.busbw_gbps = curve_busbw(it->second, bytes, &e.region);
  return e;
}

std::optional<double> Calibration::busbw_gbps(NetLayer layer, const std::string& collective,
                                              double bytes) const {
  if (auto e = estimate(layer, collective, bytes)) return e->busbw_gbps;
  return std::nullopt;
}

std::vector<std::string> Calibration::measured() const {
  std::vector<std::string> lines;
  for (const auto& [key, curve] : curves_) {
    const auto& [layer, collective] = key;
    const std::string name = net_layer_name(layer);
    const std::string on = curve.measured_on == name ? "" : " (" + curve.measured_on + " layer)";
    const size_t n = curve.points.size();
    const std::string sizes =
        n == 1
            ? fmt::format("1 size {}", format_bytes(static_cast<uint64_t>(curve.points[0].first)))
            : fmt::format("{} sizes {}–{}", n,
                          format_bytes(static_cast<uint64_t>(curve.points.front().first)),
                          format_bytes(static_cast<uint64_t>(curve.points.back().first)));
    lines.push_back(fmt::format("{} {}{}: {}, {} ranks, slowest of {} group(s)", name, collective,
                                on, sizes, curve.group_ranks, curve.groups));
  }
  return lines;
}

MeasuredBusbw Calibration::as_measured_busbw() const {
  auto copy = std::make_shared<const Calibration>(*this);
  return [copy](NetLayer layer, Collective c, double bytes) {
    return copy->busbw_gbps(layer, collective_name(c), bytes);
  };
}

}  // namespace plumb::plan
