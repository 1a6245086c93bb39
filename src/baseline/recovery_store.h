// Recovery baselines (`plumb run --save`) in the store: a record holding a plumb.recovery/1
// document (Record::recovery), listed by plumb list, shown by plumb show, compared by plumb diff.
#pragma once

#include <cstdint>
#include <string>

#include "baseline/store.h"
#include "supervise/recovery_record.h"

namespace plumb::baseline {

// The record `plumb run --save` stores: created now, the run's host, source "plumb run
// COMMAND...", the baseline as plumb.recovery/1 and nothing else.
Record recovery_record(const supervise::RecoveryBaseline& baseline, const std::string& label);

// Saves it in the store at `db` (empty: default_store_path()), creating the store when missing;
// returns the new id. Errors (exit 2) name the store.
int64_t save_recovery(const supervise::RecoveryBaseline& baseline, const std::string& db,
                      const std::string& label);

}  // namespace plumb::baseline
