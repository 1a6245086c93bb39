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

}  // namespace plumb::baseline
