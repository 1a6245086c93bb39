// The context sections of the HTML report: the run (plumb.comm/1 settings), the topology
// (plumb.topo/1) and the environment (plumb.env/1) of each baseline, as HTML tables.
//
// The topology and run documents are rendered generically -- an object becomes a key/value table,
// an array of objects a table with one column per key -- so a field added to plumb.topo/1 shows up
// without a change here, and a missing one is simply absent. Long arrays are cut at
// kMaxTableRows with a note. Every string is HTML-escaped.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "baseline/store.h"

namespace plumb::report {

inline constexpr size_t kMaxTableRows = 256;

// "A: id 3 · label · 2026-12-02T10:00:00Z": how the report names a baseline everywhere.
std::string baseline_name(char letter, const baseline::Record& record);

// `doc` as nested HTML tables (keys in `skip_key`, and "schema", left out at the top level).
void append_json_table(const nlohmann::json& doc, fmt::memory_buffer& out,
                       const std::string& skip_key = "");

// <section> "Run", "Topology" and "Environment", each with A then B (b may be null).
void append_context_sections(const baseline::Record& a, const baseline::Record* b,
                             fmt::memory_buffer& out);

// Pieces of those sections, for the page of a baseline set: one baseline's topology (a heading,
// its warnings, its tables) and the environment's versions and variables tables, A and B side by
// side.
void append_topology_of(const baseline::Record& record, char letter, fmt::memory_buffer& out);
void append_environment_tables(const baseline::Record& a, const baseline::Record* b,
                               fmt::memory_buffer& out);

}  // namespace plumb::report
