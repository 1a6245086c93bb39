// `plumb alerts test`: a promtool unit-test file (`promtool test rules FILE`) for the rules that
// `plumb alerts rules` writes with the same options. Input series come in every source's
// spelling (dcgm-exporter with `hostname` and with `Hostname`, its 1.x names, npu-exporter with
// old and new labels, plumb exporter); the recording rules' outputs are checked with exact values
// in base units; each alert is checked pending before its `for:` has passed (through ALERTS),
// firing after it with its exact labels and annotations, and silent just on the other side of
// its threshold. The numbers follow the options: --hbm-ratio 0.8 tests 0.8.
#pragma once

#include <string>

#include "exporter/rules.h"

namespace plumb::exporter {

// Seconds between rule evaluations and between input samples in the generated tests.
inline constexpr double kTestIntervalSeconds = 15;

// The test file; `rules_file` is the rule file's path as promtool should open it (relative to the
// test file's folder, or absolute).
std::string rule_tests_yaml(const AlertOptions& options, const std::string& rules_file);

}  // namespace plumb::exporter
