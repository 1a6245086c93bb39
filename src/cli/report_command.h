// plumb report A [B]: one self-contained HTML file with charts per layer and collective, two
// baselines overlaid and the diff's regressions marked when B is given (report/html_report.h);
// when A or B is a baseline set, the page of the set: a section per part, A and B side by side
// (report/set_html.h).
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct ReportOptions {
  std::string a;                             // id, latest, or a JSON file
  std::string b;                             // empty: a report of A alone
  std::string output = "plumb-report.html";  // "-": standard output
  std::string db;
  double threshold_percent = 10;
};

void setup_report(CLI::App& app, ReportOptions& options);
int run_report(const ReportOptions& options);

}  // namespace plumb::cli
