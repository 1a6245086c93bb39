#include "baseline/context_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;
using Fields = std::map<std::string, std::string>;

constexpr const char* kAbsent = "(absent)";

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return kAbsent;
  return v.dump();
}

// Leaves of `doc` as "path" -> text; keys in `skip` are left out at every depth.
void flatten(const json& doc, const std::string& path, const std::set<std::string>& skip,
             Fields& out) {
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (skip.count(key) == 0) flatten(value, path.empty() ? key : path + "." + key, skip, out);
    }
  } else if (doc.is_array()) {
    for (size_t i = 0; i < doc.size(); ++i) flatten(doc[i], fmt::format("{}[{}]", path, i), skip, out);
  } else if (!doc.is_null()) {
    out[path] = text_of(doc);
  }
}

Fields object_fields(const json& doc, const char* key) {
  Fields out;
  if (doc.is_object() && doc.contains(key) && doc[key].is_object()) {
    for (const auto& [name, value] : doc[key].items()) {
      if (!value.is_null()) out[name] = text_of(value);
    }
  }
  return out;
}

void compare(const Fields& a, const Fields& b, const std::string& kind,
             std::vector<VariableDiff>& out) {
  std::set<std::string> names;
  for (const auto& [name, value] : a) names.insert(name);
  for (const auto& [name, value] : b) names.insert(name);
  for (const std::string& name : names) {
    auto ia = a.find(name);
    auto ib = b.find(name);
    const std::string va = ia == a.end() ? kAbsent : ia->second;
    const std::string vb = ib == b.end() ? kAbsent : ib->second;
    if (va != vb) out.push_back({kind, name, va, vb});
  }
}

bool holds_topology(const Record& r) { return r.topo.is_object() && !r.topo.empty(); }

bool holds_versions(const Record& r) {
  return r.env.is_object() && r.env.contains("versions") && r.env["versions"].is_object() &&
         !r.env["versions"].empty();
}

// Settings of its own (not what the rows imply): the environment, the backend or the sweep's.
bool holds_settings(const Record& r) {
  const bool env = r.env.is_object() && r.env.contains("env") && r.env["env"].is_object() &&
                   !r.env["env"].empty();
  const bool comm = r.comm.is_object() && (r.comm.contains("backend") || r.comm.contains("settings"));
  return env || comm;
}

// Hosts and ranks always (the records carry them); the plumb.topo/1 fields when `deep`.
Fields topology_fields(const Record& r, bool deep) {
  Fields f;
  f["hosts"] = join(r.hosts, ",");
  if (r.comm.is_object() && r.comm.contains("ranks")) f["ranks"] = text_of(r.comm["ranks"]);
  if (deep) flatten(r.topo, "topo", {"schema", "created", "warnings", "pid"}, f);
  return f;
}

// What the rows themselves say of the sweep, for imported records too: the requested sizes
// ("13 sizes 8 B–16 MiB"), the collectives and the dtypes in the order measured.
void row_fields(const Record& r, Fields& f) {
  if (r.rows.empty()) return;
  std::set<uint64_t> sizes;
  std::vector<std::string> collectives;
  std::vector<std::string> dtypes;
  for (const comm::Row& row : r.rows) {
    sizes.insert(row.requested_bytes > 0 ? row.requested_bytes : row.bytes);
    for (auto [list, name] : {std::pair{&collectives, &row.collective}, std::pair{&dtypes, &row.dtype}}) {
      if (std::find(list->begin(), list->end(), *name) == list->end()) list->push_back(*name);
    }
  }
  f["sweep.sizes"] =
      sizes.size() == 1
          ? fmt::format("1 size {}", format_bytes(*sizes.begin()))
          : fmt::format("{} sizes {}–{}", sizes.size(), format_bytes(*sizes.begin()),
                        format_bytes(*sizes.rbegin()));
  f["sweep.collectives"] = join(collectives, ",");
  f["sweep.dtypes"] = join(dtypes, ",");
}

// The launcher plumb comm recorded, and srun's MPI plugin when the run was a Slurm job's.
void launcher_fields(const Record& r, Fields& f) {
  if (!r.comm.is_object()) return;
  if (r.comm.contains("launcher")) f["launcher"] = text_of(r.comm["launcher"]);
  const json job = r.comm.value("job", json());
  if (job.is_object() && job.contains("mpi") && !job["mpi"].is_null()) {
    f["launcher.srun_mpi"] = text_of(job["mpi"]);
  }
}

Fields setting_fields(const Record& r) {
  Fields f = object_fields(r.env, "env");
  if (r.comm.is_object() && r.comm.contains("backend")) f["backend"] = text_of(r.comm["backend"]);
  launcher_fields(r, f);
  row_fields(r, f);
  const Fields sweep = object_fields(r.comm, "settings");
  for (const char* key : {"iters", "warmup", "rounds", "op", "check"}) {
    if (auto it = sweep.find(key); it != sweep.end()) f[std::string("sweep.") + key] = it->second;
  }
  return f;
}

// "A", "B" or "A or B": the records that lack a part.
std::string lacking(bool in_a, bool in_b) {
  if (!in_a && !in_b) return "A or B";
  return !in_a ? "A" : "B";
}

// More than kMaxTopologyFields differing topology fields: one entry says how many and which first.
void fold_topology(std::vector<VariableDiff>& topology) {
  if (topology.size() <= kMaxTopologyFields) return;
  VariableDiff folded{"topology", fmt::format("{} fields", topology.size()),
                      fmt::format("first: {} = {}", topology[0].name, topology[0].a),
                      fmt::format("first: {} = {}", topology[0].name, topology[0].b)};
  topology.assign(1, folded);
}

}  // namespace

std::vector<VariableDiff> context_diffs(const Record& a, const Record& b) {
  const bool deep = holds_topology(a) && holds_topology(b);
  std::vector<VariableDiff> topology;
  compare(topology_fields(a, deep), topology_fields(b, deep), "topology", topology);
  fold_topology(topology);
  std::vector<VariableDiff> out = topology;
  if (holds_versions(a) && holds_versions(b)) {
    compare(object_fields(a.env, "versions"), object_fields(b.env, "versions"), "version", out);
  }
  compare(setting_fields(a), setting_fields(b), "setting", out);
  return out;
}

std::vector<std::string> unrecorded_context(const Record& a, const Record& b) {
  std::vector<std::string> out;
  if (!holds_topology(a) || !holds_topology(b)) {
    out.push_back(fmt::format("no topology recorded in {}: only the hosts and rank counts are "
                              "compared",
                              lacking(holds_topology(a), holds_topology(b))));
  }
  if (!holds_versions(a) || !holds_versions(b)) {
    out.push_back(fmt::format("no versions recorded in {}",
                              lacking(holds_versions(a), holds_versions(b))));
  }
  const bool settings_a = holds_settings(a);
  const bool settings_b = holds_settings(b);
  if (!settings_a || !settings_b) {
    out.push_back(fmt::format("no settings recorded in {}", lacking(settings_a, settings_b)));
  }
  return out;
}

std::string context_headline(const std::vector<VariableDiff>& variables,
                             const std::vector<std::string>& unrecorded) {
  std::vector<std::string> parts = unrecorded;
  if (!variables.empty()) {
    parts.insert(parts.begin(), fmt::format("{} difference(s)", variables.size()));
    return join(parts, "; ");
  }
  // The parts both records hold: those no unrecorded line names.
  std::vector<std::string> same;
  for (const char* part : {"topology", "versions", "settings"}) {
    const std::string prefix = fmt::format("no {} recorded", part);
    const bool missing = std::any_of(unrecorded.begin(), unrecorded.end(), [&](const std::string& u) {
      return u.rfind(prefix, 0) == 0;
    });
    if (!missing) same.emplace_back(part);
  }
  if (same.size() == 3) {
    parts.push_back("topology, versions and settings are the same");
  } else if (same.size() == 2) {
    parts.push_back(fmt::format("{} and {} are the same", same[0], same[1]));
  } else if (same.size() == 1) {
    parts.push_back(fmt::format("{} {} the same", same[0], same[0] == "topology" ? "is" : "are"));
  }
  return join(parts, "; ");
}

}  // namespace plumb::baseline
