// The recovery baseline of `plumb run` as a console table: one row per failure — how long it took
// to notice, to recover, to make progress again, and the steps lost — and the medians.
#pragma once

#include <ostream>

#include "supervise/recovery_record.h"

namespace plumb::report {

void print_recovery_table(const supervise::RecoveryBaseline& baseline, std::ostream& out);

}  // namespace plumb::report
