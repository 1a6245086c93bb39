// One definition of the average busbw (comm::summarize, docs/comm.md "Summary line"): the test
// recomputes it from a record's rows by hand and finds that very number in every output that
// shows it — the console table, plumb show, the JSON summary of plumb comm --json and plumb
// export, the HTML report and plumb diff — even when the record carries a stale summary (as a
// plumb baseline of several rounds did: its first round's, 1.03 where the rows say 0.39).
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <map>
#include <sstream>
#include <string>

#include "baseline/diff.h"
#include "comm/result.h"
#include "report/baseline_reporter.h"
#include "report/comm_reporter.h"
#include "report/diff_reporter.h"
#include "report/html_report.h"

namespace plumb::report {
namespace {

comm::Row row(const std::string& group, uint64_t bytes, double busbw) {
  comm::Row r;
  r.layer = "node";
  r.group = group;
  r.group_ranks = 2;
  r.collective = "allreduce";
  r.dtype = "float32";
  r.op = "sum";
  r.requested_bytes = bytes;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw;
  r.time_us = static_cast<double>(bytes) / 1e3 / busbw;
  r.wrong = 0;
  r.p50_us = r.time_us;
  r.p99_us = r.time_us;
  r.max_us = r.time_us;
  r.straggler = 0;
  return r;
}

// Two groups, a small size (not averaged) and two of ≥ 1 MiB with uneven busbw.
baseline::Record record() {
  baseline::Record r;
  r.id = 7;
  r.created = "2026-12-02T10:00:00Z";
  r.source = "plumb baseline";
  r.hosts = {"h0", "h1"};
  r.rows = {row("h0", 1024, 0.01), row("h1", 1024, 0.02),      row("h0", 1 << 20, 0.31),
            row("h1", 1 << 20, 0.52), row("h0", 4 << 20, 0.29), row("h1", 4 << 20, 0.44)};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 4},
            {"settings", {{"rounds", 3}, {"check", true}}},
            // what the first round said: stale against the combined rows above
            {"summary", {{{"layer", "node"}, {"collective", "allreduce"}, {"avg_busbw_gbps", 1.03}}}}};
  return r;
}

// By hand from the rows: each group's mean over the sizes ≥ 1 MiB, then the mean of the groups.
double by_hand(const baseline::Record& r) {
  std::map<std::string, std::pair<double, int>> groups;
  for (const comm::Row& row : r.rows) {
    if (row.requested_bytes < (1u << 20)) continue;
    groups[row.group].first += row.busbw_gbps;
    groups[row.group].second += 1;
  }
  double sum = 0;
  for (const auto& [name, acc] : groups) sum += acc.first / acc.second;
  return sum / static_cast<double>(groups.size());
}

comm::Result result_of(const baseline::Record& r) {
  comm::Result result;
  result.backend = "mpi";
  result.ranks = 4;
  result.hosts = r.hosts;
  result.settings.check = true;
  result.rows = r.rows;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AverageBusbw, EveryOutputShowsTheNumberTheRowsGive) {
  const baseline::Record r = record();
  const double expected = by_hand(r);  // (0.30 + 0.48) / 2 = 0.39
  EXPECT_NEAR(expected, 0.39, 1e-12);
  const std::string text = fmt::format("{:.2f}", expected);
  ASSERT_EQ(text, "0.39");

  std::ostringstream console;
  CommConsoleReporter().report(result_of(r), console);
  EXPECT_TRUE(contains(console.str(), "# allreduce @ node: avg busbw 0.39 GB/s over 2 sizes ≥ 1 "
                                      "MiB, mean of 2 groups (slowest group h0: 0.30 GB/s, "
                                      "spread 37.5%)\n"))
      << console.str();

  std::ostringstream show;
  print_baseline_summary(r, show);
  EXPECT_TRUE(contains(show.str(), "allreduce @ node: avg busbw 0.39 GB/s over 2 size(s) ≥ 1 MiB"))
      << show.str();

  const nlohmann::json comm_json = comm_result_json(result_of(r));
  EXPECT_NEAR(comm_json["summary"][0]["avg_busbw_gbps"].get<double>(), expected, 1e-12);
  const nlohmann::json exported = baseline_json(r);  // plumb export: not the stored 1.03
  ASSERT_EQ(exported["comm"]["summary"].size(), 1u);
  EXPECT_NEAR(exported["comm"]["summary"][0]["avg_busbw_gbps"].get<double>(), expected, 1e-12);
  EXPECT_EQ(exported["comm"]["summary"][0]["groups"], 2);

  std::ostringstream html;
  write_html_report(r, nullptr, nullptr, html);
  EXPECT_TRUE(contains(html.str(), "<td>node</td><td>allreduce</td><td class=\"num\">0.39</td>"))
      << html.str().substr(0, 4000);

  baseline::Record b = r;
  b.id = 8;
  for (comm::Row& row : b.rows) row.busbw_gbps *= 2;
  const baseline::Diff d = baseline::diff(r, b);
  EXPECT_NEAR(d.summary_a[0].avg_busbw_gbps, expected, 1e-12);
  std::ostringstream diff;
  print_diff(d, false, diff);
  EXPECT_TRUE(contains(diff.str(), "node    allreduce           0.39      0.78  +100.0%\n"))
      << diff.str();
  EXPECT_NEAR(baseline::diff_json(d)["summary"]["a"][0]["avg_busbw_gbps"].get<double>(), expected,
              1e-12);
}

// The console says which group a table line shows and what the average is over.
TEST(AverageBusbw, TheConsoleSaysWhatItsTablesShow) {
  std::ostringstream console;
  CommConsoleReporter().report(result_of(record()), console);
  EXPECT_TRUE(contains(console.str(),
                       "\n# each table: per size, the layer's slowest group (lowest busbw); avg "
                       "busbw: each group's mean over the sizes ≥ 1 MiB, then the mean over the "
                       "layer's groups\n"))
      << console.str();
}

}  // namespace
}  // namespace plumb::report
