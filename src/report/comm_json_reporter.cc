
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

}  // namespace

nlohmann::json comm_result_json(const comm::Result& result) {
  json doc{
      {"schema", comm::kCommSchema},
      {"created", result.created},
      {"plumb_version", PLUMB_VERSION},
      {"backend", result.backend},
      {"launcher", result.launcher},
      {"ranks", result.ranks},
      {"hosts", result.hosts},
      {"env", result.env},
      {"settings", settings_json(result.settings)},
      {"placement", placement_json(result.placement)},
      {"layers", layers_json(result.layers)},
      {"results", result.rows},
      {"summary", comm::summary_json(comm::summarize(result.rows))},
      {"notes", result.notes},
  };
  if (result.job) doc["job"] = sysinfo::slurm_job_json(*result.job);  // only inside a Slurm job
  return doc;
}

void CommJsonReporter::report(const comm::Result& result, std::ostream& out) const {
  json doc = comm_result_json(result);
  doc["complete"] = true;  // the partial form (CommJsonStream) says false
  // Host names and environment values are not always UTF-8: replace bad bytes, never fail.
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

namespace {

constexpr std::string_view kJsonTail = "\n  ]\n}\n";  // closes results[] and the document

}  // namespace

CommJsonStream::CommJsonStream(std::string option, std::string path)
    : file_(std::move(option), std::move(path)) {}

void CommJsonStream::begin(const comm::Result& context) {
  json doc = comm_result_json(context);
  doc.erase("results");
  doc.erase("summary");
  doc["complete"] = false;
  doc["notes"] = json::array({kPartialJsonNote});
  // dump(2) of an object ends in "\n}": results[] goes last, where rows can be added.
  std::string head = doc.dump(2, ' ', false, json::error_handler_t::replace);
  head.resize(head.size() - 2);
  head += ",\n  \"results\": [";
  results_end_ = head.size();
  file_.start(head + std::string(kJsonTail));
}

void CommJsonStream::rows(const std::vector<comm::Row>& rows, int) {
  std::string piece;
  for (const comm::Row& r : rows) {
    piece += first_ ? "\n    " : ",\n    ";
    piece += json(r).dump(-1, ' ', false, json::error_handler_t::replace);
    first_ = false;
  }
  // The rows and the closing text in one write: between two writes the file is valid JSON.
  file_.write_at(results_end_, piece + std::string(kJsonTail));
  results_end_ += piece.size();
}

}  // namespace plumb::report
