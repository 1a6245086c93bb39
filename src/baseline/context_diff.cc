#include "baseline/context_diff.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

#include "common/strings.h"

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

Fields topology_fields(const Record& r) {
  Fields f;
  f["hosts"] = join(r.hosts, ",");
  if (r.comm.is_object() && r.comm.contains("ranks")) f["ranks"] = text_of(r.comm["ranks"]);
  flatten(r.topo, "topo", {"schema", "created", "warnings", "pid"}, f);
  return f;
}

Fields setting_fields(const Record& r) {
  Fields f = object_fields(r.env, "env");
  if (r.comm.is_object() && r.comm.contains("backend")) f["backend"] = text_of(r.comm["backend"]);
  const Fields sweep = object_fields(r.comm, "settings");
  for (const char* key : {"iters", "warmup", "dtype", "op", "check"}) {
    if (auto it = sweep.find(key); it != sweep.end()) f[std::string("sweep.") + key] = it->second;
  }
  return f;
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
  std::vector<VariableDiff> topology;
  compare(topology_fields(a), topology_fields(b), "topology", topology);
  fold_topology(topology);
  std::vector<VariableDiff> out = topology;
  compare(object_fields(a.env, "versions"), object_fields(b.env, "versions"), "version", out);
  compare(setting_fields(a), setting_fields(b), "setting", out);
  return out;
}

}  // namespace plumb::baseline
