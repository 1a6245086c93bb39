#include "report/set_parts.h"

#include "baseline/record_kind.h"
#include "baseline/step_diff.h"
#include "common/strings.h"

namespace plumb::report {
namespace {

bool topo_held(const baseline::Record& r) { return !r.topo.is_null(); }
bool env_held(const baseline::Record& r) { return !r.env.is_null(); }
bool comm_held(const baseline::Record& r) { return !r.comm.is_null() || !r.rows.empty(); }
bool step_held(const baseline::Record& r) { return baseline::holds_step(r); }
bool memory_held(const baseline::Record& r) { return !r.memory.is_null(); }
bool recovery_held(const baseline::Record& r) { return baseline::holds_recovery(r); }
bool serve_held(const baseline::Record& r) { return baseline::holds_serve(r); }

bool topo_listed(const baseline::Entry& e) { return e.topo; }
bool env_listed(const baseline::Entry& e) { return e.env; }
bool comm_listed(const baseline::Entry& e) { return e.comm; }
bool step_listed(const baseline::Entry& e) { return e.step; }
bool memory_listed(const baseline::Entry& e) { return e.memory; }
bool recovery_listed(const baseline::Entry& e) { return e.recovery; }
bool serve_listed(const baseline::Entry& e) { return e.serve; }

}  // namespace

const std::vector<SetPart>& set_parts() {
  static const std::vector<SetPart> kParts = {
      {"topo", "topology", topo_held, topo_listed},
      {"env", "versions", env_held, env_listed},
      {"comm", "communication", comm_held, comm_listed},
      {"step", "model step", step_held, step_listed},
      {"memory", "memory", memory_held, memory_listed},
      {"recovery", "recovery", recovery_held, recovery_listed},
      {"serve", "serving", serve_held, serve_listed},
  };
  return kParts;
}

bool entry_is_set(const baseline::Entry& e) {
  return e.memory || !e.missing.empty() || e.source == baseline::kSetSource;
}

std::string parts_text(const baseline::Entry& e) {
  std::vector<std::string> parts;
  for (const SetPart& p : set_parts()) {
    if (p.listed(e)) {
      parts.emplace_back(p.key);
    } else if (entry_is_set(e)) {
      parts.push_back(std::string("-") + p.key);
    }
  }
  return parts.empty() ? std::string("-") : join(parts, " ");
}

std::string missing_reason(const baseline::Record& r, const SetPart& part) {
  if (!baseline::holds_set(r)) return "not part of this record (it is not a baseline set)";
  if (r.missing.is_object()) {
    const auto it = r.missing.find(part.key);
    if (it != r.missing.end() && it->is_string() && !it->get<std::string>().empty()) {
      return it->get<std::string>();
    }
  }
  return "no reason recorded";
}

}  // namespace plumb::report
