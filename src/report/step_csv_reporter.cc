#include "report/step_csv_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "report/step_console_reporter.h"

namespace plumb::report {
namespace {

// The numeric columns, Computing to Preparing, in header order.
constexpr size_t kColumns = 9;
using Columns = std::array<double, kColumns>;

Columns columns(const step::StepBreakdown& s) {
  // msprof's Stage starts at the first device task: the step less its Preparing time.
  double preparing = std::isnan(s.preparing_us) ? 0.0 : s.preparing_us;
  return {s.compute_us,
          s.exposed_communication_us,
          s.overlapped_us,
          s.communication_us,
          s.idle_us + s.memory_us - preparing,
          s.step_time_us - preparing,
          step::kNaN,  // Bubble: not measured
          s.exposed_communication_us,
          s.preparing_us};
}

void print_row(int64_t step, const std::string& type, const std::string& index, const Columns& c,
               std::ostream& out) {
  fmt::print(out, "{},{},{}", step, type, index);
  for (double v : c) fmt::print(out, ",{}", python_float(v));
  out << "\n";
}

// msprof-analyze's stage row: the maximum of each column over the stage's ranks, over the known
// values (NaN when no rank knows it).
void print_stage(int64_t step, const std::vector<int>& ranks, const std::vector<Columns>& rows,
                 std::ostream& out) {
  Columns max;
  max.fill(step::kNaN);
  for (const Columns& r : rows) {
    for (size_t i = 0; i < kColumns; ++i) {
      if (!std::isnan(r[i]) && (std::isnan(max[i]) || r[i] > max[i])) max[i] = r[i];
    }
  }
  std::string index;
  for (int rank : ranks) index += fmt::format("{}{}", index.empty() ? "" : ", ", rank);
  print_row(step, "stage", "\"(" + index + ")\"", max, out);
}

}  // namespace

std::string python_float(double value) {
  if (std::isnan(value)) return "";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";  // "inf" has an n
  return text;
}

void StepCsvReporter::report(const step::StepResult& result, std::ostream& out) const {
  out << kStepCsvHeader << "\n";
  for (int64_t number : step_numbers(result)) {
    std::vector<int> ranks;
    std::vector<Columns> rows;
    for (const step::RankSteps& r : result.ranks) {
      for (const step::StepBreakdown& s : r.steps) {
        if (s.step != number) continue;
        ranks.push_back(r.rank);
        rows.push_back(columns(s));
        print_row(number, "rank", std::to_string(r.rank), rows.back(), out);
      }
    }
    print_stage(number, ranks, rows, out);
  }
}

}  // namespace plumb::report
