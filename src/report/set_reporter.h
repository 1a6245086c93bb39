// `plumb show` of a baseline set (issue 29, item 4): the record's header, then a section per part
// in the order of report/set_parts.h, each headed "## topology" ... "## serving" and printed by
// the reporter of that kind (versions and comm as plumb show of a comm baseline, the model step as
// of a step record, memory as plumb mem creep, recovery as of a plumb run record, serving as
// plumb serve bench's console). A part not
// taken is one line with its reason -- "memory: missing — no train-events line had memory" --
// never a zero. See docs/outputs.md.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "baseline/store.h"

namespace plumb::report {

void print_set(const baseline::Record& record, std::ostream& out);

// The topology part in a few lines: "2 host(s), 8 rank(s), 1 binding warning(s)", then per host
// its packages, NUMA nodes, cores / PUs and accelerators, then each warning's message. Fields a document
// lacks are "?"; never an error (the part is shown as stored).
void print_topology_summary(const nlohmann::json& topo, std::ostream& out);

}  // namespace plumb::report
