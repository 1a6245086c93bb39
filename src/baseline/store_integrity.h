// plumb store check: what a store must hold for plumb to read it (docs/store.md, "Checking a
// store"). Read-only: nothing is migrated, repaired or written.
#pragma once

#include <string>
#include <vector>

#include "baseline/store.h"

namespace plumb::baseline {

// One check of a store: its name, what it says when it holds, and each problem it found (each
// naming the record, the table or the row).
struct StoreCheck {
  std::string name;
  std::string fine;                   // "ok", or what holds without being a failure
  std::vector<std::string> problems;  // empty: the check holds
};

// Every check, in order: the schema version; on SQLite, PRAGMA integrity_check and
// foreign_key_check; no result, step or recovery row of a baseline the store lacks; every baseline
// and check pass loads (Store::load's checks, and JSON that parses); write keys present and
// unique. A store of a newer plumb is refused by Store itself, before these.
std::vector<StoreCheck> check_store_integrity(Store& store);

}  // namespace plumb::baseline
