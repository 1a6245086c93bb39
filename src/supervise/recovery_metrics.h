// The recovery baseline as a Prometheus textfile (`plumb run --metrics FILE`), for
// node_exporter's textfile collector (--collector.textfile.directory): every series labelled
// job_name (the command's first word, without its folder; `job` itself is the scrape target's
// label and would be renamed exported_job). The metrics and why they are what they are:
// docs/run.md, "Metrics and the recovery baseline".
#pragma once

#include <string>

#include "supervise/recovery_record.h"

namespace plumb::supervise {

// The kinds of failure always written, with 0 when none happened (a series that appears only at
// the first failure cannot be alerted on with increase()).
inline constexpr const char* kFailureKinds[] = {"exit", "signal", "hang", "fatal_line"};

// The text exposition format (version 0.0.4), # HELP and # TYPE before each family.
std::string prometheus_textfile(const RecoveryBaseline& baseline);

// Writes it through OutputFile: a temporary file in the same folder (a name that does not end in
// .prom, so the collector never reads it), fsynced, then renamed over `path`, so a scrape sees
// the previous file or the new one, never half of one. Errors name the option:
// "--metrics PATH: cannot write: Permission denied".
void write_metrics_file(const std::string& path, const RecoveryBaseline& baseline);

}  // namespace plumb::supervise
