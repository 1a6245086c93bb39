// plumb check links' outputs: the console table of suspects and plumb.check-links/1 JSON
// (docs/check.md, "Outputs").
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "check/links_analysis.h"
#include "check/links_measure.h"
#include "check/links_schedule.h"
#include "check/status.h"

namespace plumb::check {

inline constexpr const char* kCheckLinksSchema = "plumb.check-links/1";

struct LinksReport {
  std::string created;             // ISO 8601, UTC
  std::string backend;             // "mpi", "nccl"
  std::vector<std::string> hosts;  // index: rank
  std::string pattern;             // "bisection", "shift"
  LinkMeasureOptions measure;
  LinkThresholds thresholds;
  std::vector<LinkRound> rounds;
  LinksAnalysis analysis;
};

// ok with no suspect, warning with link suspects only, critical with a node suspect (a node to
// drain): the monitoring-plugin convention `plumb check` exits with.
Status links_status(const LinksAnalysis& analysis);

nlohmann::json links_json(const LinksReport& report);

// The reference per layer, one line per suspect, and the verdict line:
// "CHECK LINKS CRITICAL - 1 node suspect(s): rank 3 (host-a)".
void print_links_console(const LinksReport& report, std::ostream& out);

}  // namespace plumb::check
