// plumb diff's context: what differs between two runs besides their results, and what a record
// does not hold (never "the same" for it).
#include "baseline/context_diff.h"

#include <gtest/gtest.h>

#include <sstream>

#include "baseline/diff.h"
#include "report/diff_reporter.h"

namespace plumb::baseline {
namespace {

comm::Row row(const std::string& collective, const std::string& dtype, uint64_t bytes) {
  comm::Row r;
  r.layer = "world";
  r.group = "world";
  r.group_ranks = 2;
  r.collective = collective;
  r.dtype = dtype;
  r.requested_bytes = bytes;
  r.bytes = bytes;
  r.busbw_gbps = 10;
  r.time_us = 100;
  r.p50_us = 100;
  r.p99_us = 110;
  return r;
}

// A plumb comm record with topology, versions and settings.
Record full(std::vector<comm::Row> rows) {
  Record r;
  r.hosts = {"h0"};
  r.rows = std::move(rows);
  r.topo = {{"schema", "plumb.topo/1"}, {"hosts", {{{"host", "h0"}, {"cores", 8}}}}};
  r.env = {{"versions", {{"nccl", "2.21.5"}}}, {"env", nlohmann::json::object()}};
  r.comm = {{"backend", "mpi"}, {"ranks", 2}, {"launcher", "mpirun (Open MPI)"},
            {"settings", {{"iters", 20}, {"warmup", 5}, {"rounds", 3}, {"op", "sum"},
                          {"check", true}, {"dtype", "float32"}}}};
  return r;
}

std::string printed(const Diff& d) {
  std::ostringstream out;
  report::print_diff(d, false, out);
  return out.str();
}

std::string context_line(const std::string& printed) {
  const size_t at = printed.find("# context: ");
  return at == std::string::npos ? "" : printed.substr(at, printed.find('\n', at) - at);
}

TEST(ContextDiff, TheSameOnlyWhenBothHoldEverything) {
  const Record a = full({row("allreduce", "float32", 1 << 20)});
  const Diff d = diff(a, a);
  EXPECT_TRUE(d.variables.empty());
  EXPECT_TRUE(d.unrecorded.empty());
  EXPECT_EQ(context_line(printed(d)), "# context: topology, versions and settings are the same");
}

// Imported logs and plumb comm --json files hold no topology (nor versions): never "the same".
TEST(ContextDiff, NoTopologyRecordedIsSaidNotCalledTheSame) {
  Record a = full({row("allreduce", "float32", 1 << 20)});
  Record b = a;
  a.topo = nullptr;
  b.topo = nullptr;
  EXPECT_EQ(context_line(printed(diff(a, b))),
            "# context: no topology recorded in A or B: only the hosts and rank counts are "
            "compared; versions and settings are the same");
  b.env = nullptr;
  EXPECT_EQ(context_line(printed(diff(a, b))),
            "# context: no topology recorded in A or B: only the hosts and rank counts are "
            "compared; no versions recorded in B; settings are the same");
  // One record with a topology, one without: its fields are not listed as differences.
  Record c = full({row("allreduce", "float32", 1 << 20)});
  const Diff d = diff(c, a);
  EXPECT_TRUE(d.variables.empty());
  EXPECT_EQ(d.unrecorded, (std::vector<std::string>{
                              "no topology recorded in B: only the hosts and rank counts are "
                              "compared"}));
  // Nothing at all besides the rows (a record made by hand): every part said.
  Record bare;
  bare.rows = a.rows;
  EXPECT_EQ(context_line(printed(diff(bare, bare))),
            "# context: no topology recorded in A or B: only the hosts and rank counts are "
            "compared; no versions recorded in A or B; no settings recorded in A or B");
}

// Sizes, collectives, dtypes, iterations, rounds and the launcher: each a setting of its own.
TEST(ContextDiff, SweepRangesCollectivesDtypesIterationsRoundsAndLauncher) {
  Record a = full({row("allreduce", "float32", 1024), row("allreduce", "float32", 1 << 20),
                   row("allreduce", "float32", 4 << 20), row("allgather", "float32", 1 << 20)});
  Record b = full({row("allreduce", "bfloat16", 1024), row("allreduce", "float32", 1 << 20)});
  b.comm["settings"]["iters"] = 50;
  b.comm["settings"]["rounds"] = 1;
  b.comm["launcher"] = "srun";
  b.comm["job"] = {{"scheduler", "slurm"}, {"mpi", "pmix"}};
  const Diff d = diff(a, b);
  std::vector<std::string> lines;
  for (const VariableDiff& v : d.variables) {
    lines.push_back(v.kind + " " + v.name + ": " + v.a + " -> " + v.b);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "setting launcher: mpirun (Open MPI) -> srun",
                       "setting launcher.srun_mpi: (absent) -> pmix",
                       "setting sweep.collectives: allreduce,allgather -> allreduce",
                       "setting sweep.dtypes: float32 -> bfloat16,float32",
                       "setting sweep.iters: 20 -> 50",
                       "setting sweep.rounds: 3 -> 1",
                       "setting sweep.sizes: 3 sizes 1 KiB–4 MiB -> 2 sizes 1 KiB–1 MiB",
                   }));
  EXPECT_EQ(context_line(printed(d)), "# context: 7 difference(s)");
}

TEST(ContextDiff, HeadlineWording) {
  EXPECT_EQ(context_headline({}, {}), "topology, versions and settings are the same");
  EXPECT_EQ(context_headline({}, {"no versions recorded in A", "no settings recorded in B"}),
            "no versions recorded in A; no settings recorded in B; topology is the same");
  EXPECT_EQ(context_headline({{"setting", "sweep.iters", "20", "50"}},
                             {"no versions recorded in A or B"}),
            "1 difference(s); no versions recorded in A or B");
}

}  // namespace
}  // namespace plumb::baseline
