#include "exporter/probe_source.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "baseline/record_json.h"
#include "comm/bandwidth.h"
#include "common/error.h"
#include "common/json.h"
#include "exporter/device_reading.h"
#include "exporter/series.h"
#include "exporter/value_bounds.h"

namespace plumb::exporter {
namespace {

std::optional<std::string> row_problem(const comm::Row& row, size_t i) {
  const std::string at = fmt::format("probe: results[{}]", i);
  if (const auto problem = layer_problem(row.layer, at + ".layer")) return problem;
  if (const auto problem = bandwidth_problem(row.algbw_gbps * comm::kBytesPerGB,
                                             row.busbw_gbps * comm::kBytesPerGB)) {
    return fmt::format("{} ({}, {} bytes, layer {}): {}", at, row.collective, row.bytes,
                       row.layer, *problem);
  }
  return std::nullopt;
}

}  // namespace

ProbeRows checked_probe_rows(const std::vector<comm::Row>& rows) {
  ProbeRows out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (auto problem = row_problem(rows[i], i)) {
      out.refused.push_back(std::move(*problem));
    } else {
      out.kept.push_back(rows[i]);
    }
  }
  return out;
}

ProbeSource::ProbeSource(ProbeSourceOptions options)
    : options_(std::move(options)), malformed_("refused row(s)", options_.log, options_.now) {}

std::string default_probe_command(const std::string& plumb_binary) {
  return fmt::format(
      "'{}' comm --collectives allreduce,allgather -b 1M -e 64M -f 4 -n 20 -w 5 --json - -q",
      plumb_binary);
}

Families probe_families(const std::string& host, const std::vector<comm::Row>& rows) {
  std::map<std::tuple<std::string, std::string, uint64_t>, double> lowest;
  for (const comm::Row& row : rows) {
    const auto key = std::make_tuple(row.layer, row.collective, row.bytes);
    const double busbw = row.busbw_gbps * comm::kBytesPerGB;
    const auto [it, added] = lowest.emplace(key, busbw);
    if (!added && busbw < it->second) it->second = busbw;
  }
  Family family{series::kBusbw,
                "Bus bandwidth of a collective (nccl-tests busbw), bytes per second; probe: the "
                "lowest over the layer's groups in the last probe sweep",
                "gauge",
                {}};
  for (const auto& [key, busbw] : lowest) {
    const auto& [layer, collective, bytes] = key;
    family.samples.push_back({{{series::kHost, host}, {"layer", layer}, {"collective", collective},
                               {"bytes", std::to_string(bytes)}, {"source", "probe"}},
                              busbw,
                              ""});
  }
  return {std::move(family)};
}

Families ProbeSource::collect() {
  const std::string output =
      run_device_tool({"/bin/sh", "-c", options_.command}, options_.timeout_seconds, "probe");
  std::string problem;
  const nlohmann::json doc = parse_json_or_discarded(output, problem);
  if (doc.is_discarded()) throw Error(fmt::format("probe: printed no plumb.comm/1 JSON: {}", problem));
  const baseline::Record record = baseline::record_from_json(doc, "probe output");
  if (record.rows.empty()) throw Error("probe: the plumb.comm/1 JSON holds no results");
  ProbeRows rows = checked_probe_rows(record.rows);
  for (std::string& message : rows.refused) malformed_.add(std::move(message));
  malformed_.flush();
  if (rows.kept.empty()) {
    throw Error(fmt::format("probe: every row of its plumb.comm/1 JSON was refused ({} in all)",
                            rows.refused.size()));
  }
  Families families = probe_families(options_.host, rows.kept);
  families.push_back(source_malformed_family(options_.host, name(), malformed_.count()));
  return families;
}

}  // namespace plumb::exporter
