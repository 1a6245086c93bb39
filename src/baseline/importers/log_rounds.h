// Several logs of the same test imported as one record (`plumb import run1.log run2.log ...`):
// the logs play the part of the rounds of plumb's own runs (comm/rounds.h) — each size keeps the
// log with the median busbw and the logs' spread around it — so that plumb diff has a noise
// estimate for imported results too (docs/import.md, "Several logs of one test").
#pragma once

#include <string>
#include <vector>

#include "baseline/importers/importer.h"

namespace plumb::baseline {

// tests[i]: the tests of files[i], in file order. Test k of every file must measure the same
// (collective, dtype, op, size)s on as many ranks, each once: otherwise an Error naming the file,
// the line and what differs. Returns test k of the first file with every row the median of the
// logs' rows (busbw_spread their median absolute deviation, relative) and every log's issues.
std::vector<ImportedTest> combine_logs(const std::vector<std::string>& files,
                                       std::vector<std::vector<ImportedTest>> tests);

}  // namespace plumb::baseline
