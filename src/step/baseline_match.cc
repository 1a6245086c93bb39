#include "step/baseline_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "comm/placement.h"
#include "common/stats.h"
#include "step/classify.h"

namespace plumb::step {
namespace {

// size → median busbw over the layer's groups at that size.
using Curve = std::map<uint64_t, double>;

Curve curve_of(const std::vector<comm::Row>& rows, std::string_view collective,
               const std::string& layer, int nranks) {
  std::map<uint64_t, std::vector<double>> by_size;
  for (const comm::Row& row : rows) {
    if (row.layer != layer || row.collective != collective || row.group_ranks != nranks) continue;
    if (row.bytes == 0 || !std::isfinite(row.busbw_gbps)) continue;
    by_size[row.bytes].push_back(row.busbw_gbps);
  }
  Curve out;
  for (auto& [bytes, values] : by_size) {
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    out[bytes] = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }
  return out;
}

double interpolate(const Curve& curve, uint64_t bytes) {
  auto above = curve.lower_bound(bytes);
  if (above == curve.end()) return std::prev(above)->second;
  if (above->first == bytes || above == curve.begin()) return above->second;
  auto below = std::prev(above);
  double x0 = std::log(static_cast<double>(below->first));
  double x1 = std::log(static_cast<double>(above->first));
  double t = (std::log(static_cast<double>(bytes)) - x0) / (x1 - x0);
  return below->second + t * (above->second - below->second);
}

}  // namespace

BaselineMatch match_baseline(const std::vector<comm::Row>& rows, CollectiveKind kind,
                             uint64_t bytes, int nranks, const std::string& layer) {
  if (bytes == 0 || kind == CollectiveKind::kUnknown) return {};
  std::vector<std::string> layers;
  if (!layer.empty()) {
    layers.push_back(layer);
  } else {
    for (const std::string& name : comm::layer_names()) layers.push_back(name);
  }
  for (const std::string& name : layers) {
    Curve curve = curve_of(rows, kind_name(kind), name, nranks);
    if (!curve.empty()) return {interpolate(curve, bytes), name};
  }
  return {};
}

void attach_baseline(const std::vector<comm::Row>& rows, const std::string& layer,
                     int world_size, std::vector<CollectiveInstance>& instances,
                     std::vector<std::string>& notes) {
  std::set<std::pair<std::string, int>> unanswered;
  for (CollectiveInstance& c : instances) {
    int nranks = !c.group_ranks.empty() ? static_cast<int>(c.group_ranks.size())
                                        : (world_size > 0 ? world_size : c.ranks_seen);
    BaselineMatch match = match_baseline(rows, c.kind, c.bytes, nranks, layer);
    c.baseline_busbw_gbps = match.busbw_gbps;
    c.baseline_layer = match.layer;
    if (std::isnan(match.busbw_gbps) && c.bytes > 0 && c.kind != CollectiveKind::kUnknown) {
      unanswered.insert({std::string(kind_name(c.kind)), nranks});
    }
  }
  for (const auto& [kind, nranks] : unanswered) {
    notes.push_back(fmt::format(
        "the baseline holds no {} over groups of {} ranks{}: those instances have no baseline "
        "ratio",
        kind, nranks, layer.empty() ? "" : fmt::format(" on layer {}", layer)));
  }
}

comm::BackendKind trace_kind(const std::vector<RankTrace>& traces) {
  for (const RankTrace& t : traces) {
    if (t.format.rfind("ascend", 0) == 0) return {"HCCL", "Ascend NPU"};
  }
  for (const RankTrace& t : traces) {
    for (const CollectiveCall& c : t.calls) {
      std::string name = c.name;
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (name.find("nccl") != std::string::npos) return {"NCCL", "GPU"};
      if (name.find("gloo") != std::string::npos) return {"Gloo", "CPU"};
    }
  }
  return {};
}

int trace_world_size(const std::vector<RankTrace>& traces) {
  for (const RankTrace& t : traces) {
    if (t.world_size > 0) return t.world_size;
  }
  return static_cast<int>(traces.size());
}

std::string baseline_mismatch(const std::string& source, const comm::MeasuredOn& on,
                              const std::vector<RankTrace>& traces) {
  const std::string differs = comm::mismatch_text(comm::backend_kind(on.backend), on.ranks,
                                                  trace_kind(traces), trace_world_size(traces));
  if (differs.empty()) return "";
  return fmt::format("--baseline {} was measured on {} than these traces: its busbw is not what "
                     "their collectives could reach",
                     source, differs);
}

}  // namespace plumb::step
