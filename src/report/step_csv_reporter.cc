#include "report/step_csv_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <array>
#include <cmath>
#include <string>

#include "report/step_console_reporter.h"

namespace plumb::report {
namespace {

// The numeric columns, Computing to Preparing, in header order.
constexpr size_t kColumns = 9;
using Columns = std::array<double, kColumns>;

Columns columns(const step::StepBreakdown& s) {
  const double bubble = std::isnan(s.bubble_us) ? 0.0 : s.bubble_us;
  return {s.compute_us,
          s.exposed_communication_us,
          s.overlapped_us,
          s.communication_us,
          s.free_us,
          s.stage_us,
          s.bubble_us,
          s.exposed_communication_us - bubble,
          s.preparing_us};
}

void print_row(int64_t step, int rank, const Columns& c, std::ostream& out) {
  fmt::print(out, "{},rank,{}", step, rank);
  for (double v : c) fmt::print(out, ",{}", python_float(v));
  out << "\n";
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
    for (const step::RankSteps& r : result.ranks) {
      for (const step::StepBreakdown& s : r.steps) {
        if (s.step == number) print_row(number, r.rank, columns(s), out);
      }
    }
  }
}

}  // namespace plumb::report
