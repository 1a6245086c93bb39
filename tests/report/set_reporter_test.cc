// plumb show and plumb list of a baseline set (issue 29, item 4): a section per part in the order
// topology, versions, communication, model step, memory, recovery, serving, each by its kind's printer; a
// missing part with its reason, never a zero; the parts column of plumb list for sets and for the
// records of one kind.
#include "report/set_reporter.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/error.h"
#include "report/memory_baseline_reporter.h"
#include "report/serve_reporter.h"
#include "report/set_parts.h"
#include "support/set_record.h"

namespace plumb::report {
namespace {

std::string shown(const baseline::Record& r) {
  std::ostringstream out;
  print_set(r, out);
  return out.str();
}

std::string memory_text(const mem::MemoryBaseline& m) {
  std::ostringstream out;
  print_memory_baseline(m, out);
  return out.str();
}

TEST(SetReporter, ShowPrintsASectionPerPartAndTheMissingOneWithItsReason) {
  baseline::Record r = test::set_without_recovery();
  r.id = 4;
  // Topology from the dgx-like fixture (rank 1 bound across both NUMA nodes); versions, comm and
  // step as plumb show of their records prints them; memory as plumb mem creep of the lines
  // (figures checked in memory_baseline_reporter_test.cc); recovery missing with its reason.
  EXPECT_EQ(shown(r),
            "# baseline 4 · 2026-12-03T12:00:00Z · plumb baseline --workload · no-drill\n"
            "# hosts: gpu-001\n"
            "# a baseline set: topo env comm step memory -recovery -serve\n"
            "## topology\n"
            "1 host(s), 2 rank(s), 1 binding warning(s)\n"
            "  host-a: 2 package(s), 2 NUMA node(s), 32 core(s) / 64 PU(s), 8 accelerator(s)\n"
            "  warning: rank 1 on host-a is bound to cpus 0-63, across NUMA nodes 0,1; bind it to "
            "NUMA node 1 (cpus 16-31,48-63), e.g. mpirun --bind-to numa or numactl "
            "--cpunodebind=1\n"
            "## versions\n"
            "# torch          1.13.1\n"
            "## communication\n"
            "allreduce @ world: avg busbw 2.50 GB/s over 2 size(s) ≥ 1 MiB (slowest group world: "
            "2.50 GB/s)\n"
            "# 2 result row(s)\n"
            "## model step\n"
            "# step record: 2 rank(s) × 2 step(s), world size 2\n"
            "step time: 1000.0 us (median over the steps of the slowest rank)\n"
            "exposed communication: 100.0 us (median over the steps of the slowest rank)\n"
            "compute: 700.0 us (median over the steps of the slowest rank)\n"
            "straggler over the trace: none recorded\n"
            "## memory\n"
            "# plumb mem creep · events.jsonl · 2 rank(s) · 16 line(s), 0 without memory · "
            "warm-up from --warmup\n"
            "rank      steps  warm-up     settled    reserved        peak  creep per step (95% CI)"
            "            verdict\n"
            "0             8        0       4 GiB       5 GiB       4 GiB  +0 B (+0 B to +0 B)    "
            "            flat\n"
            "1             8        0     4.0 GiB     5.0 GiB     4.1 GiB  +8 MiB (+8 MiB to +8 MiB)"
            "          LEAK\n"
            "worst      rank 1: +8 MiB per step (95% CI +8 MiB to +8 MiB) over 8 steps: LEAK\n"
            "checkpoint rank 1: 4.0 GiB before the save · 4.0 GiB after it (step 5) · 4.0 GiB "
            "after the load (step 6) · tolerance 41.3 MiB: pass\n"
            "## recovery\n"
            "recovery: missing — --skip recovery: the drill was not run\n"
            "## serving\n"
            "serving: missing — not asked for: no --serve-url\n"
            "# plumb export 4 for the whole set; plumb report 4 for its page\n");
}

// The memory section is plumb mem creep's table of the part read back: the same text as of the
// baseline computed from the train-events lines (tests/report/memory_baseline_reporter_test.cc
// checks those figures against the lines).
TEST(SetReporter, TheMemorySectionIsTheMemoryBaselineReadBack) {
  const std::string text = shown(test::full_set());
  const std::string memory = memory_text(test::set_memory_baseline());
  EXPECT_NE(text.find("## memory\n" + memory + "## recovery\n"), std::string::npos) << text;
}

TEST(SetReporter, ADamagedPartIsAnErrorNamingTheRecordAndTheField) {
  baseline::Record r = test::full_set();
  r.id = 9;
  r.memory["ranks"][1]["settled_bytes"] = "x";
  try {
    shown(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "baseline 9: memory.ranks[1].settled_bytes: expected a number, got \"x\"");
  }
}

TEST(SetReporter, TopologySummaryOfADocumentLackingFields) {
  std::ostringstream out;
  print_topology_summary({{"hosts", {{{"host", "x"}}}}}, out);
  EXPECT_EQ(out.str(),
            "1 host(s), ? rank(s), ? binding warning(s)\n"
            "  x: ? package(s), ? NUMA node(s), ? core(s) / ? PU(s), 0 accelerator(s)\n");
}

baseline::Entry entry(const std::string& source) {
  baseline::Entry e;
  e.source = source;
  return e;
}

TEST(SetParts, ListColumnForSetsAndForRecordsOfOneKind) {
  baseline::Entry full = entry(baseline::kSetSource);
  full.topo = full.env = full.comm = full.step = full.memory = full.recovery = full.serve = true;
  EXPECT_EQ(parts_text(full), "topo env comm step memory recovery serve");
  baseline::Entry partial = full;
  partial.recovery = false;
  partial.serve = false;
  partial.missing = {"recovery", "serve"};
  EXPECT_EQ(parts_text(partial), "topo env comm step memory -recovery -serve");
  // A set is one whatever its source says once it names a missing part.
  baseline::Entry named = entry("plumb baseline");
  named.missing = {"memory"};
  EXPECT_EQ(parts_text(named), "-topo -env -comm -step -memory -recovery -serve");
  baseline::Entry comm = entry("plumb baseline");
  comm.topo = comm.env = comm.comm = true;
  EXPECT_EQ(parts_text(comm), "topo env comm");
  baseline::Entry step = entry("plumb step");
  step.step = true;
  EXPECT_EQ(parts_text(step), "step");
  baseline::Entry served = entry("plumb serve bench");
  served.serve = true;
  EXPECT_EQ(parts_text(served), "serve");
  EXPECT_EQ(parts_text(entry("nccl-tests run.log")), "-");
}

TEST(SetParts, MissingReason) {
  const baseline::Record set = test::set_without_recovery();
  ASSERT_EQ(set_parts().size(), 7u);
  const SetPart& recovery = set_parts()[5];
  const SetPart& serving = set_parts().back();
  EXPECT_EQ(std::string(serving.key), "serve");
  EXPECT_EQ(std::string(serving.title), "serving");
  EXPECT_EQ(missing_reason(set, serving), "not asked for: no --serve-url");
  EXPECT_EQ(missing_reason(set, recovery), "--skip recovery: the drill was not run");
  baseline::Record unexplained = set;
  unexplained.missing = {{"step", "no traces"}};
  EXPECT_EQ(missing_reason(unexplained, recovery), "no reason recorded");
  EXPECT_EQ(missing_reason(test::step_only_record(), set_parts().front()),
            "not part of this record (it is not a baseline set)");
}

// The serving part is plumb serve bench's console of the plumb.serve/1 the set holds.
TEST(SetReporter, TheServingSectionIsTheServeConsole) {
  const baseline::Record r = test::full_set();
  std::ostringstream console;
  print_serve_console(console, test::serve_sweep());
  const std::string text = shown(r);
  EXPECT_NE(text.find("# a baseline set: topo env comm step memory recovery serve\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("## serving\n" + console.str() + "# plumb export"), std::string::npos)
      << text;
  EXPECT_NE(console.str().find("c=16"), std::string::npos) << console.str();
}

TEST(SetReporter, ADamagedServingPartIsAnErrorNamingTheRecordAndTheField) {
  baseline::Record r = test::full_set();
  r.id = 9;
  r.serve["runs"][0]["ttft_ms"]["p99"] = "x";
  try {
    shown(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "baseline 9: runs[0].ttft_ms.p99: expected a number, got \"x\"");
  }
}

}  // namespace
}  // namespace plumb::report
