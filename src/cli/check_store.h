// plumb check's records in the store (schema 7) and the repeat-offender rule over them, shared by
// check node, check burn-in and check history (docs/check.md, "History").
#pragma once

#include <string>
#include <vector>

#include "check/history.h"
#include "check/node_run.h"

namespace plumb::cli {

// Stores `report` as a pass of `kind` ("node" or "burn-in") in the store at `db` (empty: the
// default store); returns its id.
int64_t store_check_report(const check::NodeReport& report, const std::string& kind,
                           const std::string& db);

// The repeat offenders of `host` (every host when empty) over its newest `n` node passes.
std::vector<check::Offender> offenders_in(const std::string& db, const std::string& host, int k, int n);

}  // namespace plumb::cli
