// Reading a baseline record back from JSON: plumb.baseline/1 (plumb export) or plumb.comm/1
// (plumb comm --json). Writing is report::baseline_json.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "baseline/store.h"

namespace plumb::baseline {

// `origin` names the document in errors (a file path). Throws plumb::Error for a document of
// another schema or one whose fields do not have the expected types.
Record record_from_json(const nlohmann::json& doc, const std::string& origin);

// Reads and parses `path`; errors name the file.
Record read_record_file(const std::string& path);

// The rounds a record's figures were measured in, `settings.rounds` of its comm part, when it has
// one: a whole number from 1 to comm::kMaxRounds, else an Error "<origin>: <path>.settings.rounds:
// expected a whole number from 1 to 100, got -5" (plumb diff's noise model divides by it).
void check_rounds_setting(const nlohmann::json& comm, const std::string& origin,
                          const std::string& path);

// The "validity" member of a plumb.baseline/1 or plumb.comm/1 document (what plumb export writes:
// {"marks": [...], "wrong_rows": N, "issues": [...]}), its issues checked; none when absent.
Validity validity_of(const nlohmann::json& doc, const std::string& origin);

}  // namespace plumb::baseline
