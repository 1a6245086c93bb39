
#include "report/comm_reporter.h"

namespace plumb::report {
namespace {

using nlohmann::json;

json settings_json(const comm::SweepSettings& s) {
  return json{{"min_bytes", s.min_bytes}, {"max_bytes", s.max_bytes},
              {"step_factor", s.step_factor}, {"step_bytes", s.step_bytes},
              {"iters", s.iters}, {"warmup", s.warmup}, {"check", s.check},
              {"dtype", s.dtype}, {"op", s.op}, {"root", s.root},
              {"rounds", s.rounds}};
}

json placement_json(const comm::Placement& p) {
  json ranks = json::array();
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    const comm::RankPlace& rank = p.ranks[r];
    const comm::NodePlace& node = p.nodes[static_cast<size_t>(rank.node)];
    ranks.push_back({{"rank", r}, {"host", rank.host}, {"node", node.name},
                     {"rack", p.racks[static_cast<size_t>(node.rack)]},
                     {"local_rank", rank.local_rank}});
  }
  return json{{"simulated", p.simulated}, {"ranks", ranks}};
}

json layers_json(const std::vector<comm::Layer>& layers) {
  json out = json::array();
  for (const comm::Layer& layer : layers) {
    json groups = json::array();
    for (const comm::Group& g : layer.groups) groups.push_back({{"name", g.name}, {"ranks", g.ranks}});
    json entry = {{"name", layer.name}, {"groups", groups}};
    entry["skipped"] = layer.skipped.empty() ? json(nullptr) : json(layer.skipped);
    out.push_back(entry);
  }
  return out;
}

json summary_json(const std::vector<comm::Summary>& summaries) {
  json out = json::array();
  for (const comm::Summary& s : summaries) {
    out.push_back({{"layer", s.layer}, {"collective", s.collective},
                   {"min_bytes", comm::kSummaryMinBytes}, {"sizes", s.sizes},
                   {"avg_busbw_gbps", s.avg_busbw_gbps}, {"slowest_group", s.slowest_group},
                   {"slowest_busbw_gbps", s.slowest_busbw_gbps}, {"spread", s.spread}});
  }
  return out;
}

}  // namespace

nlohmann::json comm_result_json(const comm::Result& result) {
  json doc{
      {"schema", comm::kCommSchema},
      {"created", result.created},
      {"plumb_version", PLUMB_VERSION},
      {"backend", result.backend},
      {"ranks", result.ranks},
      {"hosts", result.hosts},
      {"env", result.env},
      {"settings", settings_json(result.settings)},
      {"placement", placement_json(result.placement)},
      {"layers", layers_json(result.layers)},
      {"results", result.rows},
      {"summary", summary_json(comm::summarize(result))},
      {"notes", result.notes},
  };
  if (result.job) doc["job"] = sysinfo::slurm_job_json(*result.job);  // only inside a Slurm job
  return doc;
}

void CommJsonReporter::report(const comm::Result& result, std::ostream& out) const {
  // Host names and environment values are not always UTF-8: replace bad bytes, never fail.
  out << comm_result_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

}  // namespace plumb::report
