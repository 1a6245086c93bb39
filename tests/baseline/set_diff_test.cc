// plumb diff of two baseline sets (issue 29 item 5) on hand-made sets holding all four compared
// parts: the clean pair, one variable changed, two changed, clean against a leak, a part only one
// set holds, a part diff that cannot compare, and the console's blocks and go/no-go line.
#include "baseline/set_diff.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "baseline/record_kind.h"
#include "common/error.h"
#include "report/memory_baseline_reporter.h"
#include "report/set_diff_reporter.h"
#include "supervise/recovery_json.h"
#include "support/serve_record.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024 * kMiB;

std::vector<comm::Row> comm_rows() {
  std::vector<comm::Row> rows;
  for (uint64_t bytes = 1 << 20; bytes <= (16u << 20); bytes *= 2) {
    comm::Row r;
    r.layer = "world";
    r.group = "world";
    r.group_ranks = 2;
    r.collective = "allreduce";
    r.dtype = "float32";
    r.op = "sum";
    r.requested_bytes = r.bytes = bytes;
    r.count = bytes / 4;
    r.time_us = 100 + static_cast<double>(bytes) / 1000;
    r.algbw_gbps = static_cast<double>(bytes) / 1e3 / r.time_us;
    r.busbw_gbps = r.algbw_gbps;
    r.p50_us = r.time_us;
    r.p99_us = 1.05 * r.time_us;
    r.max_us = r.p99_us;
    r.busbw_spread = 0.01;
    rows.push_back(r);
  }
  return rows;
}

// Two ranks, five steps of 100 ms with 5 ms exposed.
json step_part() {
  json ranks = json::array();
  for (int rank = 0; rank < 2; ++rank) {
    json steps = json::array();
    for (int s = 1; s <= 5; ++s) {
      steps.push_back({{"step", s}, {"step_time_us", 100000 + 100 * s}, {"compute_us", 80000},
                       {"communication_us", 5000}, {"exposed_communication_us", 5000},
                       {"overlapped_us", 0}, {"memory_us", 0}, {"idle_us", 15000}});
    }
    ranks.push_back({{"rank", rank}, {"steps", steps}});
  }
  return {{"schema", "plumb.step/1"}, {"world_size", 2}, {"ranks", ranks},
          {"collectives", json::array()}, {"stragglers", json::array()}};
}

mem::RankMemory memory_rank(const std::string& name, double slope) {
  mem::RankMemory r;
  r.rank = name;
  r.steps = 40;
  r.warmup_steps = 8;
  r.settled_bytes = kGiB;
  r.verdict = slope > 1000 ? "leak" : "flat";
  r.creep.steps = 32;
  r.creep.verdict = slope > 1000 ? "leak" : "stable";
  r.creep.slope_bytes_per_step = slope;
  r.creep.ci95_low = slope - 64 * 1024;
  r.creep.ci95_high = slope + 64 * 1024;
  r.checkpoint.verdict = "pass";
  r.checkpoint.rank = name;
  return r;
}

// Ranks 0 and 1 at 1 GiB; rank 1 leaking `leak` bytes per step (0: flat).
json memory_part(double leak = 0) {
  mem::MemoryBaseline b;
  b.source = "events.jsonl";
  b.ranks = {memory_rank("0", 100), memory_rank("1", leak > 0 ? leak : 100)};
  b.worst = 1;
  b.checkpoint = b.ranks[0].checkpoint;
  return report::memory_baseline_json(b);
}

json recovery_part() {
  supervise::RecoveryBaseline b;
  b.command = {"python3", "train.py"};
  b.attempts = 2;
  b.result = "finished";
  b.drill = true;
  b.faults_injected = 1;
  b.failures_by_kind = {{"signal", 1}};
  supervise::Recovery r;
  r.attempt = 1;
  r.kind = "signal";
  r.detail = "SIGKILL";
  r.detect_seconds = 1;
  r.steps = {{"clear-cache", 2, true, ""}};
  r.downtime_seconds = 30;
  r.steps_lost = 3;
  r.resumed_after_checkpoint = true;
  b.recoveries.push_back(r);
  return supervise::recovery_to_json(b);
}

Record clean_set(int64_t id) {
  Record r;
  r.id = id;
  r.source = kSetSource;
  r.hosts = {"node1"};
  r.topo = {{"schema", "plumb.topo/1"}, {"hosts", {{{"name", "node1"}, {"cores", 16}}}}};
  r.env = {{"schema", "plumb.env/1"},
           {"versions", {{"cann", "8.0.RC2"}, {"torch", "1.13.1"}}},
           {"env", {{"HCCL_ALGO", "ring"}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 2},
            {"settings", {{"iters", 20}, {"rounds", 3}}}};
  r.rows = comm_rows();
  r.step = step_part();
  r.memory = memory_part();
  r.recovery = recovery_part();
  r.serve = test::serve_part();
  return r;
}

mem::MemoryBaseline read_memory(const json& part, const std::string& origin) {
  return report::memory_baseline_from_json(part, origin);
}

SetDiff compare(const Record& a, const Record& b) {
  return set_diff(a, b, DiffOptions{0.10, false, "", ""}, {read_memory, report::serve_from_json});
}

const SetPart& part(const SetDiff& d, const std::string& name) {
  for (const SetPart& p : d.parts) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no part " + name);
}

std::string console(const SetDiff& d, bool all = false) {
  std::ostringstream out;
  report::print_set_diff(d, all, out);
  return out.str();
}

TEST(SetDiff, TwoCleanSetsAreAGo) {
  const SetDiff d = compare(clean_set(1), clean_set(2));
  for (const char* name : {"comm", "model", "memory", "recovery", "serve"}) {
    EXPECT_EQ(part(d, name).verdict, PartVerdict::kUnchanged) << name << ": " << part(d, name).headline;
  }
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(d.variables_line(), "no variable changed");
  EXPECT_EQ(d.go_line(),
            "go: no part regressed (comm, model, memory, recovery, serve unchanged; no variable changed)");
  EXPECT_EQ(part(d, "memory").headline,
            "settled level and creep unchanged on 2 rank(s); checkpoint check pass in B");
  EXPECT_EQ(part(d, "model").headline,
            "step time 100.3 ms → 100.3 ms (+0.0%); exposed communication 5.0 ms → 5.0 ms (+0.0%)");
}

// Issue 29: two clean sets with one environment variable changed: no regression, the variable
// named.
TEST(SetDiff, OneVariableChangedIsNamed) {
  Record b = clean_set(2);
  b.env["env"]["HCCL_ALGO"] = "tree";
  const SetDiff d = compare(clean_set(1), b);
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(d.warning(), "");
  EXPECT_EQ(d.variables_line(), "one variable changed: setting HCCL_ALGO ring → tree");
  EXPECT_EQ(d.go_line(),
            "go: no part regressed (comm, model, memory, recovery, serve unchanged; one variable changed)");
  const std::string out = console(d);
  EXPECT_NE(out.find("# one variable changed: setting HCCL_ALGO ring → tree\n"), std::string::npos) << out;
}

// Issue 29: two changed: the warning, in the words.
TEST(SetDiff, TwoVariablesChangedAreTheWarning) {
  Record b = clean_set(2);
  b.env["env"]["HCCL_ALGO"] = "tree";
  b.env["versions"]["cann"] = "8.0.RC3";
  const SetDiff d = compare(clean_set(1), b);
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(d.warning(),
            "one variable at a time: version cann 8.0.RC2 → 8.0.RC3 and setting HCCL_ALGO ring → "
            "tree both changed; their effects cannot be told apart");
  EXPECT_EQ(d.go_line(),
            "go: no part regressed (comm, model, memory, recovery, serve unchanged; 2 variables changed: "
            "their effects cannot be told apart)");
  const std::string out = console(d);
  EXPECT_NE(out.find("# warning: one variable at a time: version cann"), std::string::npos) << out;
  const json j = set_diff_json(d);
  EXPECT_EQ(j["warning"], d.warning());
  EXPECT_EQ(j["variables"].size(), 2u);
  b.env["versions"]["torch"] = "2.1.0";
  EXPECT_EQ(compare(clean_set(1), b).warning(),
            "one variable at a time: version cann 8.0.RC2 → 8.0.RC3, version torch 1.13.1 → 2.1.0 "
            "and setting HCCL_ALGO ring → tree all 3 changed; their effects cannot be told apart");
}

// Issue 29: clean against a leak: exit 1 naming memory and the leak's rank and rate.
TEST(SetDiff, ALeakIsANoGoNamingMemory) {
  Record b = clean_set(2);
  b.memory = memory_part(kMiB);
  const SetDiff d = compare(clean_set(1), b);
  EXPECT_EQ(part(d, "memory").verdict, PartVerdict::kRegression);
  EXPECT_EQ(part(d, "memory").exit_code, 1);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.outcome(), "no-go");
  EXPECT_EQ(d.go_line(), "no-go: memory regressed (rank 1 leaks +1 MiB per step (95% CI +960 KiB "
                         "to +1.1 MiB) in B, flat in A)");
  const std::string out = console(d);
  EXPECT_NE(out.find("memory    REGRESSION: rank 1 leaks +1 MiB per step"), std::string::npos) << out;
  const json j = set_diff_json(d);
  EXPECT_EQ(j["schema"], "plumb.set-diff/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["outcome"], "no-go");
  EXPECT_EQ(j["parts"]["memory"]["verdict"], "regression");
  EXPECT_EQ(j["parts"]["memory"]["diff"]["schema"], "plumb.memory-diff/1");
  EXPECT_EQ(j["parts"]["comm"]["diff"]["schema"], "plumb.diff/1");
  EXPECT_EQ(j["parts"]["model"]["diff"]["schema"], "plumb.step-diff/1");
  EXPECT_EQ(j["parts"]["recovery"]["diff"]["schema"], "plumb.recovery-diff/1");
  EXPECT_EQ(j["parts"]["serve"]["diff"]["schema"], "plumb.serve-diff/1");
}

// Issue 31: the serving part by plumb diff's serve diff. Identical sweeps are unchanged; TPOT
// 20% slower at every load (ITL and E2E with it) is a regression beyond the 10% threshold, a
// no-go naming serve; the one-variable check is the set's, unchanged.
TEST(SetDiff, ServingPartIdenticalIsUnchanged) {
  const SetDiff d = compare(clean_set(1), clean_set(2));
  const SetPart& serve = part(d, "serve");
  EXPECT_EQ(serve.verdict, PartVerdict::kUnchanged);
  EXPECT_EQ(serve.exit_code, 0);
  EXPECT_EQ(serve.headline,
            "3 run(s) compared, no latency or throughput changed beyond the threshold and the "
            "noise");
  ASSERT_TRUE(serve.serve.has_value());
  EXPECT_EQ(serve.serve->runs.size(), 3u);
}

TEST(SetDiff, ServingTpotTwentyPercentSlowerIsANoGo) {
  Record b = clean_set(2);
  b.serve = test::serve_part(1.2);
  const SetDiff d = compare(clean_set(1), b);
  const SetPart& serve = part(d, "serve");
  EXPECT_EQ(serve.verdict, PartVerdict::kRegression);
  EXPECT_EQ(serve.exit_code, 1);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.outcome(), "no-go");
  EXPECT_EQ(d.variables_line(), "no variable changed");
  EXPECT_EQ(serve.headline.rfind("concurrency 1 tpot p50 5 → 6 ms (+20.0%); ", 0), 0u)
      << serve.headline;
  EXPECT_EQ(d.go_line().rfind("no-go: serve regressed (concurrency 1 tpot p50 5 → 6 ms (+20.0%)", 0),
            0u)
      << d.go_line();
  EXPECT_EQ(part(d, "comm").verdict, PartVerdict::kUnchanged);
  EXPECT_NE(console(d).find("serve     REGRESSION: concurrency 1 tpot p50 5 → 6 ms (+20.0%)"),
            std::string::npos)
      << console(d);
  EXPECT_NE(console(d, true).find("## serve: the whole comparison\n"), std::string::npos)
      << console(d, true);
  EXPECT_EQ(set_diff_json(d)["parts"]["serve"]["verdict"], "regression");
}

// A set taken without --serve-url against one with a serving part: named, not judged.
TEST(SetDiff, AServingPartOnlyInBIsNamedWithAsReason) {
  Record a = clean_set(1);
  a.serve = nullptr;
  a.missing = {{"serve", "not asked for: no --serve-url"}};
  const SetDiff d = compare(a, clean_set(2));
  EXPECT_EQ(part(d, "serve").verdict, PartVerdict::kOnlyInB);
  EXPECT_EQ(part(d, "serve").note, "A: not asked for: no --serve-url");
  EXPECT_EQ(d.exit_code(), 0);
}

// A part one set does not hold is named with the other set's reason, not judged.
TEST(SetDiff, APartOnlyInOneIsNamedWithTheReason) {
  Record b = clean_set(2);
  b.recovery = nullptr;
  b.missing = {{"recovery", "skipped (--skip recovery)"}};
  const SetDiff d = compare(clean_set(1), b);
  EXPECT_EQ(part(d, "recovery").verdict, PartVerdict::kOnlyInA);
  EXPECT_EQ(part(d, "recovery").note, "B: skipped (--skip recovery)");
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_EQ(d.go_line(), "go: no part regressed (comm, model, memory, serve unchanged; recovery only "
                         "in A; no variable changed)");
  EXPECT_NE(console(d).find("recovery  only in A (B: skipped (--skip recovery))\n"), std::string::npos)
      << console(d);
  // The model part under its "missing" key, "step"; in neither: both reasons.
  Record a = clean_set(1);
  a.step = nullptr;
  a.missing = {{"step", "no traces were written in /tmp/t"}};
  b.step = nullptr;
  const SetDiff neither = compare(a, b);
  EXPECT_EQ(part(neither, "model").verdict, PartVerdict::kInNeither);
  EXPECT_EQ(part(neither, "model").note,
            "A: no traces were written in /tmp/t; B: not taken, no reason recorded");
  EXPECT_EQ(set_diff_json(neither)["parts"]["model"]["diff"], nullptr);
}

// A part diff that cannot compare is that part's note; the others are still compared; exit 2.
TEST(SetDiff, APartThatCannotCompareIsItsNote) {
  Record b = clean_set(2);
  for (comm::Row& r : b.rows) r.collective = "allgather";
  const SetDiff d = compare(clean_set(1), b);
  const SetPart& comm = part(d, "comm");
  EXPECT_EQ(comm.verdict, PartVerdict::kNotCompared);
  EXPECT_EQ(comm.exit_code, 2);
  EXPECT_EQ(comm.note.rfind("A (baseline 1) and B (baseline 2) share no measurement: ", 0), 0u)
      << comm.note;
  EXPECT_EQ(part(d, "memory").verdict, PartVerdict::kUnchanged);
  EXPECT_EQ(d.exit_code(), 2);
  EXPECT_EQ(d.go_line().rfind("undecided: comm not compared (A (baseline 1) and B (baseline 2) "
                              "share no measurement: ", 0), 0u) << d.go_line();
  EXPECT_EQ(d.go_line().substr(d.go_line().size() - 19), "; no part regressed") << d.go_line();
  // A regression elsewhere still decides: exit 1.
  b.memory = memory_part(kMiB);
  EXPECT_EQ(compare(clean_set(1), b).exit_code(), 1);
  // A memory part that does not read: its reader's message, naming the record and the field.
  Record bad = clean_set(2);
  bad.memory["ranks"][0]["settled_bytes"] = "x";
  const SetDiff unread = compare(clean_set(1), bad);
  const SetPart& memory = part(unread, "memory");
  EXPECT_EQ(memory.verdict, PartVerdict::kNotCompared);
  EXPECT_EQ(memory.note, "baseline 2: memory.ranks[0].settled_bytes: expected a number, got \"x\"");
}

// Two parts regressed: both named in the no-go line, each with what decided it. comm: busbw
// halved at every size (a regression whatever the noise; the group's noise over the 5 sizes
// ≥ 1 MiB is 3.5 × √(1%² + 1%²) / √5 = 2.2%); model: every step 30% longer (step time
// 100.3 → 130.39 ms; the steps' MAD 0.1 ms keeps the noise under 1%).
TEST(SetDiff, TwoPartsRegressedAreBothNamed) {
  Record b = clean_set(2);
  for (comm::Row& r : b.rows) {
    r.busbw_gbps /= 2;
    r.algbw_gbps /= 2;
    r.time_us *= 2;
  }
  for (json& rank : b.step["ranks"]) {
    for (json& step : rank["steps"]) step["step_time_us"] = step["step_time_us"].get<double>() * 1.3;
  }
  const SetDiff d = compare(clean_set(1), b);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(part(d, "comm").headline, "world allreduce float32 busbw -50.0% (noise 2%)");
  EXPECT_EQ(part(d, "model").headline, "step time 100.3 ms → 130.4 ms (+30.0%)");
  EXPECT_EQ(d.go_line(), "no-go: comm and model regressed (comm: world allreduce float32 busbw "
                         "-50.0% (noise 2%); model: step time 100.3 ms → 130.4 ms (+30.0%))");
}

// A part too noisy to judge and none regressed: undecided, exit 3. A level of 64 MiB rising to
// 76.8 MiB (+20%) is within the level's noise of 16 MiB / 64 MiB = 25%.
TEST(SetDiff, APartTooNoisyToJudgeIsUndecided) {
  Record a = clean_set(1);
  Record b = clean_set(2);
  a.memory["ranks"][0]["settled_bytes"] = 64 * kMiB;
  b.memory["ranks"][0]["settled_bytes"] = 80530637;
  const SetDiff d = compare(a, b);
  EXPECT_EQ(part(d, "memory").verdict, PartVerdict::kTooNoisy);
  EXPECT_EQ(d.exit_code(), 3);
  EXPECT_EQ(d.outcome(), "undecided");
  EXPECT_EQ(d.go_line(), "undecided: memory too noisy to judge (rank 0 settles: 76.8 MiB in B, 64 "
                         "MiB in A (+20.0%, within the level's noise of 25.0%)); no part regressed");
}

// A set against a record that is not one: the kinds' message, nothing compared.
TEST(SetDiff, ASetAgainstAnotherKindIsRefused) {
  Record comm_only;
  comm_only.id = 5;
  comm_only.rows = comm_rows();
  try {
    compare(clean_set(1), comm_only);
    FAIL() << "compared a set with a comm record";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "baseline 1 holds a baseline set, baseline 5 none: plumb diff compares records of "
              "the same kind");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

// The console: the two sets, one line per part, the context, the go line; --all shows each part
// whole.
TEST(SetDiff, TheConsoleIsOneBlockPerPart) {
  Record b = clean_set(2);
  b.memory = memory_part(kMiB);
  const SetDiff d = compare(clean_set(1), b);
  const std::string out = console(d);
  EXPECT_EQ(out,
            "# baseline sets · A: baseline 1\n"
            "# baseline sets · B: baseline 2\n"
            "# each part by its own diff, threshold 10% (--all shows each whole)\n"
            "comm      unchanged: 1 collective(s) compared, none changed beyond the threshold and "
            "the noise\n"
            "model     unchanged: step time 100.3 ms → 100.3 ms (+0.0%); exposed communication "
            "5.0 ms → 5.0 ms (+0.0%)\n"
            "memory    REGRESSION: rank 1 leaks +1 MiB per step (95% CI +960 KiB to +1.1 MiB) in "
            "B, flat in A\n"
            "recovery  unchanged: 1 failure(s) in A, 1 in B: no figure worse beyond the threshold\n"
            "serve     unchanged: 3 run(s) compared, no latency or throughput changed beyond the "
            "threshold and the noise\n"
            "          A has runs with fewer than 3 repetitions (--repeat): no noise estimate for "
            "them, only the threshold judges\n"
            "          B has runs with fewer than 3 repetitions (--repeat): no noise estimate for "
            "them, only the threshold judges\n"
            "# context: topology, versions and settings are the same\n"
            "# no variable changed\n"
            "no-go: memory regressed (rank 1 leaks +1 MiB per step (95% CI +960 KiB to +1.1 MiB) "
            "in B, flat in A)\n");
  const std::string all = console(d, true);
  EXPECT_NE(all.find("## memory: the whole comparison\n"), std::string::npos) << all;
  EXPECT_NE(all.find("## comm: the whole comparison\n"), std::string::npos) << all;
  EXPECT_NE(all.find("checkpoint check: pass in A, pass in B: same\n"), std::string::npos) << all;
}

}  // namespace
}  // namespace plumb::baseline
