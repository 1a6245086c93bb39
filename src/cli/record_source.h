// Where a command's baseline argument comes from: a stored id, "latest", or a JSON file.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/store.h"
#include "common/output_file.h"

namespace plumb::cli {

// `what` is a path to an existing file holding plumb.baseline/1 (plumb export) or plumb.comm/1
// (plumb comm --json), else a stored id or "latest" in the store at `db_path` (empty: the
// default store). Errors name the file or the id.
baseline::Record load_record(const std::string& what, const std::string& db_path);

// load_record for a command that draws comm measurements (report, baseline --compare, plan
// --calibrate): a step record (plumb step --save) or a recovery record (plumb run --save) is an
// Error (exit 2) naming the record ("baseline 7", "file x.json") and ending in `use`, which says
// what the command needs instead: "baseline 7 holds a step record (plumb step), not comm
// measurements: <use>".
baseline::Record load_comm_record(const std::string& what, const std::string& db_path,
                                  std::string_view use);

// The files a command that loads these records reads: those that exist, and the store, for
// refuse_overlapping_paths().
std::vector<NamedPath> record_inputs(std::initializer_list<std::string_view> whats,
                                     const std::string& db_path);

// "baseline 3 · 2026-12-02T16:39:32Z · label"; a record never stored (id 0) is named by its
// source ("nccl-tests run.log"). Empty parts are left out.
std::string describe_record(const baseline::Record& record);

// How errors name a record: "file <what>" for a file, else "baseline <id>" (else `what`).
std::string record_name(const std::string& what, const baseline::Record& record);

}  // namespace plumb::cli
