// The seven parts of a baseline set (issues 29 and 31, docs/baseline.md) in the order every output
// gives them -- topology, versions, communication, model step, memory, recovery, serving -- with
// what a record
// holds of them and why a part is missing. plumb list, plumb show and plumb report read this one
// table.
#pragma once

#include <string>
#include <vector>

#include "baseline/store.h"

namespace plumb::report {

struct SetPart {
  const char* key;    // as plumb export and `missing` name it: "topo", "env", "comm", ...
  const char* title;  // as plumb show and the report head it: "topology", "versions", ...
  bool (*held)(const baseline::Record&);
  bool (*listed)(const baseline::Entry&);
};

const std::vector<SetPart>& set_parts();

// A baseline set (baseline::holds_set) as plumb list sees it: a memory part, a missing part, or
// the set's source.
bool entry_is_set(const baseline::Entry& entry);

// plumb list's parts column: the parts held, each by its key, and for a set the others marked
// missing ("topo env comm step memory -recovery -serve"); "-" when a record holds none.
std::string parts_text(const baseline::Entry& entry);

// Why a set's part is missing: the reason its `missing` object gives, else "no reason recorded";
// for a record that is not a set, "not part of this record (it is not a baseline set)".
std::string missing_reason(const baseline::Record& record, const SetPart& part);

}  // namespace plumb::report
