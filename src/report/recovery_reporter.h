// Recovery baselines (plumb run --save) on a terminal: the `plumb show` detail of one (each
// failure with its detection, recovery steps, downtime and steps lost) and `plumb diff` of two.
#pragma once

#include <ostream>

#include "baseline/recovery_diff.h"
#include "baseline/store.h"
#include "supervise/recovery_record.h"

namespace plumb::report {

// `baseline` is supervise::recovery_from_json of the record's recovery.
void print_recovery_record(const baseline::Record& record,
                           const supervise::RecoveryBaseline& baseline, std::ostream& out);
// Its body without the record's header and footer lines (a baseline set's recovery section).
void print_recovery_summary(const supervise::RecoveryBaseline& baseline, std::ostream& out);

void print_recovery_diff(const baseline::RecoveryDiff& diff, std::ostream& out);

}  // namespace plumb::report
