// plumb diff as a gate: a copy of a run with every busbw ÷2 (and every time ×2) fails it whatever
// the noise; a change within the noise is "too noisy to judge" (exit 3); a run that measured
// nothing, or shares nothing with the other, is bad input (exit 2).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "baseline/record_json.h"
#include "baseline/record_kind.h"
#include "baseline/recovery_store.h"
#include "baseline/store.h"
#include "comm/result.h"
#include "common/json.h"
#include "report/baseline_reporter.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

// Every rate ÷factor and every time ×factor, as a slower run would have them.
nlohmann::json slower(nlohmann::json doc, double factor) {
  for (auto& row : doc["results"]) {
    for (const char* bw : {"busbw_gbps", "algbw_gbps"}) row[bw] = row[bw].get<double>() / factor;
    for (const char* t : {"time_us", "p50_us", "p99_us", "max_us"}) {
      row[t] = row[t].get<double>() * factor;
    }
  }
  return doc;
}

// A plumb.comm/1 document of allreduce and allgather at 1 KiB..16 MiB (×4), each row with the
// given iteration percentiles and rounds' spread (null: one round).
nlohmann::json comm_doc(double p50, double p99, nlohmann::json spread) {
  nlohmann::json results = nlohmann::json::array();
  for (const char* collective : {"allreduce", "allgather"}) {
    for (uint64_t bytes = 1024; bytes <= (16u << 20); bytes *= 4) {
      comm::Row r;
      r.layer = "world";
      r.group = "world";
      r.group_ranks = 2;
      r.collective = collective;
      r.dtype = "float32";
      r.op = "sum";
      r.requested_bytes = r.bytes = bytes;
      r.count = bytes / 4;
      r.time_us = 100 + static_cast<double>(bytes) / 1000;
      r.algbw_gbps = static_cast<double>(bytes) / 1e3 / r.time_us;
      r.busbw_gbps = r.algbw_gbps;
      r.p50_us = p50 * r.time_us;
      r.p99_us = p99 * r.time_us;
      r.max_us = r.p99_us;
      nlohmann::json j = r;
      j["busbw_spread"] = spread;
      results.push_back(j);
    }
  }
  return {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 2},
          {"settings", {{"iters", 20}, {"rounds", spread.is_null() ? 1 : 3}}}, {"results", results}};
}

test::Run diff(const std::string& dir, const nlohmann::json& a, const nlohmann::json& b,
               const std::string& extra = "") {
  write_file(dir + "/a.json", a.dump());
  write_file(dir + "/b.json", b.dump());
  return run_command(kPlumb + " diff " + dir + "/a.json " + dir + "/b.json" + extra);
}

// A real one-round run (its noise is whatever the machine gives) against itself halved, and
// against itself ÷10 as in the issue.
TEST(DiffCli, ARealRunAgainstItsHalvedCopyIsARegression) {
  const std::string dir = temp_dir("diff-halved-real");
  const test::Run run = run_command(mpirun(2) + " " + kPlumb + " comm -q -b 1K -e 4M -f 4 -n 5 -w 1 " +
                                    "--collectives allreduce,allgather --json " + dir + "/run.json");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const nlohmann::json a = nlohmann::json::parse(read_file(dir + "/run.json"));
  for (double factor : {2.0, 10.0}) {
    const test::Run r = diff(dir, a, slower(a, factor));
    EXPECT_EQ(r.exit_code, 1) << factor << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("REGRESSION: 2 regression(s) of B against A"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(factor == 2 ? "-50.0%" : "-90.0%"), std::string::npos) << r.out;
  }
}

// Noise far beyond any change: one round with p50/p99 = 0.3 (σ 70%, noise 346% per size), and
// 3 rounds with a MAD of 100% (noise 495%). A halving still fails the gate.
TEST(DiffCli, AHalvedCopyIsARegressionWhateverTheNoise) {
  const std::string dir = temp_dir("diff-halved");
  for (const nlohmann::json& a : {comm_doc(0.3, 1, nullptr), comm_doc(1, 1.1, 1.0)}) {
    const test::Run r = diff(dir, a, slower(a, 2));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("world   allreduce      float32   3 size(s) ≥ 1 MiB      -50.0% noise"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("REGRESSION: 2 regression(s) of B against A beyond the threshold and the "
                         "noise (16 single size(s) beyond their noise;"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
}

// −30% within a noise of 346%: not judged, exit 3, and the way to judge it.
TEST(DiffCli, AChangeWithinTheNoiseIsTooNoisyToJudge) {
  const std::string dir = temp_dir("diff-noisy");
  const nlohmann::json a = comm_doc(0.3, 1, nullptr);
  const test::Run r = diff(dir, a, slower(a, 1 / 0.7), " --json " + dir + "/d.json");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("TOO NOISY TO JUDGE: 2 collective(s) changed by more than 10% but within "
                       "the noise of the runs, none by 2× or more; to judge them, measure A and B "
                       "in rounds (plumb baseline --rounds 5, plumb comm --rounds 5)"),
            std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir + "/d.json"));
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["groups"][0]["verdict"], "too noisy to judge");
}

TEST(DiffCli, AnEmptyRunIsBadInput) {
  const std::string dir = temp_dir("diff-empty");
  nlohmann::json empty = comm_doc(1, 1.1, nullptr);
  empty["results"] = nlohmann::json::array();
  const test::Run r = diff(dir, comm_doc(1, 1.1, nullptr), empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "plumb: error: B (file " + dir + "/b.json) measured nothing: its results list "
                   "is empty; expected the rows of a plumb comm or plumb baseline run to compare\n");
}

TEST(DiffCli, RunsThatShareNothingAreBadInput) {
  const std::string dir = temp_dir("diff-disjoint");
  nlohmann::json b = comm_doc(1, 1.1, nullptr);
  for (auto& row : b["results"]) row["dtype"] = "float16";
  const test::Run r = diff(dir, comm_doc(1, 1.1, nullptr), b);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: A (file " + dir + "/a.json) and B (file " + dir + "/b.json) "
                   "share no measurement: A has allgather@world float32 1 KiB..16 MiB, "
                   "allreduce@world float32 1 KiB..16 MiB; B has allgather@world float16 "
                   "1 KiB..16 MiB, allreduce@world float16 1 KiB..16 MiB; expected the same "
                   "(layer, collective, dtype, size) in both\n");
}

// A plumb.step/1 record of 2 ranks × 5 steps: rank 1 the slowest, its step times `t` (µs), its
// exposed communication 5 ms, compute 80 ms; allreduce instances at `busbw`; the whole-trace
// straggler `straggler`. What plumb step --save stores (the command is not needed to test diff).
nlohmann::json step_doc(const std::vector<double>& t, const std::vector<double>& busbw,
                        int straggler) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int rank = 0; rank < 2; ++rank) {
    nlohmann::json steps = nlohmann::json::array();
    for (size_t i = 0; i < t.size(); ++i) {
      const double time = rank == 1 ? t[i] : t[i] - 1000;
      steps.push_back({{"step", i + 1}, {"step_time_us", time}, {"compute_us", 80000.0},
                       {"communication_us", 9000.0}, {"exposed_communication_us", 5000.0},
                       {"overlapped_us", 4000.0}, {"memory_us", 0.0},
                       {"idle_us", time - 85000.0}});
    }
    ranks.push_back({{"rank", rank}, {"steps", steps}});
  }
  nlohmann::json collectives = nlohmann::json::array();
  for (double bw : busbw) {
    collectives.push_back({{"step", 1}, {"kind", "allreduce"}, {"group", "0"},
                           {"group_ranks", {0, 1}}, {"bytes", 1 << 26}, {"last_rank", straggler},
                           {"start_skew_us", 10.0}, {"duration_us", 500.0}, {"busbw_gbps", bw},
                           {"baseline_busbw_gbps", nullptr}});
  }
  return {{"schema", "plumb.step/1"}, {"world_size", 2}, {"ranks", ranks},
          {"collectives", collectives},
          {"stragglers", {{{"step", -1}, {"rank", straggler}, {"waited_on_us", 250.0}}}}};
}

// plumb diff of the recovery records 1 and 2 below.
const std::string kRecoveryDiffText =
    "# A: baseline 1 · before · 2026-12-03T10:00:00Z\n"
    "# B: baseline 2 · after · 2026-12-03T10:00:00Z\n"
    "# recovery records: A 2 failure(s) in 3 attempt(s), finished; B 2 failure(s) in 3 "
    "attempt(s), finished\n"
    "# regression: a figure worse by more than 10% (too few failures for a noise "
    "estimate: the threshold alone judges)\n"
    "figure                             A         B    change  verdict\n"
    "failures                           2         2     +0.0%  same (shown, not judged)\n"
    "detect s, median                2.00      2.00     +0.0%  same\n"
    "detect s, max                   3.00      3.00     +0.0%  same\n"
    "recovery s, median             22.00     32.00    +45.5%  regression\n"
    "recovery s, max                22.00     32.00    +45.5%  regression\n"
    "downtime s, median             90.00    100.00    +11.1%  regression\n"
    "steps lost                        80        80     +0.0%  same\n"
    "resumed after checkpoint        100%      100%     +0.0%  same\n"
    "# each recovery step, median seconds over the failures\n"
    "clear-cache                     2.00      2.00     +0.0%  same (shown, not judged)\n"
    "reset-device                   20.00     30.00    +50.0%  regression (shown, not "
    "judged)\n"
    "REGRESSION: 3 regression(s) of B against A beyond the threshold: recovery s, "
    "median; recovery s, max; downtime s, median\n";

baseline::Record step_record(const std::string& label, nlohmann::json doc) {
  baseline::Record r;
  r.created = "2026-12-03T10:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = "plumb step traces/";
  r.step = std::move(doc);
  return r;
}

// A store with step records 1 (before) and 2 (after: every step 20% longer, allreduce 25% slower,
// the straggler moved from rank 1 to rank 0), 3 (as 1) and a comm record 4.
std::string step_store(const std::string& dir) {
  const std::string db = dir + "/plumb.db";
  baseline::Store store(db);
  const std::vector<double> t = {100000, 102000, 98000, 101000, 99000};
  std::vector<double> slower;
  for (double x : t) slower.push_back(x * 1.2);
  store.save(step_record("before", step_doc(t, {80, 82, 78}, 1)));
  store.save(step_record("after", step_doc(slower, {60, 62, 58}, 0)));
  store.save(step_record("again", step_doc(t, {80, 82, 78}, 1)));
  store.save(baseline::record_from_json(comm_doc(1, 1.1, nullptr), "comm.json"));
  return db;
}

// Worked numbers (tests/baseline/step_diff_test.cc has the rules): the median step of the slowest
// rank 100 → 120 ms (MAD 1 and 1.2 ms), noise 3.5 × (1.8581 / √5) × √(1%² + 1.2%²) = 4.5%: a
// regression, exit 1.
TEST(DiffCli, TwoStepRecordsStepTimeRegression) {
  const std::string dir = temp_dir("diff-step");
  const std::string db = step_store(dir);
  const test::Run r = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "# A: baseline 1 · before · 2026-12-03T10:00:00Z\n"
            "# B: baseline 2 · after · 2026-12-03T10:00:00Z\n"
            "# step records: A 2 rank(s) × 5 step(s), B 2 rank(s) × 5 step(s); each figure is the "
            "median over the steps of the slowest rank's value\n"
            "# regression: step time or exposed communication longer by more than 10% and by more "
            "than the noise (3.5 standard deviations of the change, from the steps' own spread), or "
            "by 2× or more whatever the noise\n"
            "figure                         A us         B us    change  noise  verdict\n"
            "step time                  100000.0     120000.0    +20.0%     5%  regression\n"
            "exposed communication        5000.0       5000.0     +0.0%     0%  same\n"
            "compute                     80000.0      80000.0     +0.0%     0%  same (shown, not "
            "judged)\n"
            "# busbw per collective kind, median over its instances (shown, not judged)\n"
            "kind                n A    n B   busbw A   busbw B   change  noise  verdict\n"
            "allreduce             3      3     80.00     60.00   -25.0%    12%  regression\n"
            "# straggler over the trace: A rank 1 (the others waited 250.0 us on it); B rank 0 (the "
            "others waited 250.0 us on it); it moved from rank 1 to rank 0 (reported, not judged)\n"
            "# context: no topology recorded in A or B: only the hosts and rank counts are "
            "compared; no versions recorded in A or B; no settings recorded in A or B\n"
            "REGRESSION: 1 regression(s) of B against A beyond the threshold and the noise: step "
            "time\n");
  const test::Run same = run_command(kPlumb + " diff 1 3 --db " + db);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("\nno regression beyond the threshold and the noise\n"),
            std::string::npos) << same.out;
  // A 25% threshold lets the +20% pass.
  EXPECT_EQ(run_command(kPlumb + " diff 1 2 -t 25 --db " + db).exit_code, 0);
}

TEST(DiffCli, TwoStepRecordsAsJson) {
  const std::string dir = temp_dir("diff-step-json");
  const std::string db = step_store(dir);
  const test::Run r = run_command(kPlumb + " diff 1 2 --json - --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.step-diff/1");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["regressions"], 1);
  EXPECT_EQ(j["a"]["id"], 1);
  EXPECT_EQ(j["figures"][0]["field"], "step_time_us");
  EXPECT_EQ(j["figures"][0]["a_us"], 100000.0);
  EXPECT_EQ(j["figures"][0]["b_us"], 120000.0);
  EXPECT_EQ(j["figures"][0]["verdict"], "regression");
  EXPECT_EQ(j["figures"][1]["verdict"], "same");
  EXPECT_EQ(j["collectives"][0]["busbw_change"], -0.25);
  EXPECT_EQ(j["straggler"]["moved"], true);
  EXPECT_EQ(j["straggler"]["a"]["rank"], 1);
  EXPECT_EQ(j["steps"]["a"], 5);
}

// Steps that scatter (MAD 15% of the median): +15% is too noisy to judge, exit 3, with the steps
// that would judge it.
TEST(DiffCli, TwoStepRecordsTooNoisyToJudge) {
  const std::string dir = temp_dir("diff-step-noisy");
  const std::string db = dir + "/plumb.db";
  {
    baseline::Store store(db);
    const std::vector<double> t = {100000, 120000, 80000, 115000, 85000};
    std::vector<double> b;
    for (double x : t) b.push_back(x * 1.15);
    store.save(step_record("a", step_doc(t, {}, 1)));
    store.save(step_record("b", step_doc(b, {}, 1)));
  }
  const test::Run r = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("\nTOO NOISY TO JUDGE: 1 figure(s) changed by more than 10% but within the "
                       "noise of the steps, none by 2× or more; to judge them, profile more steps: "
                       "the noise falls about as 1/√steps, so about 99 steps in each trace"),
            std::string::npos) << r.out;
}

// The same records through plumb export files: the step record travels in the export.
TEST(DiffCli, TwoExportedStepRecords) {
  const std::string dir = temp_dir("diff-step-export");
  const std::string db = step_store(dir);
  for (const char* id : {"1", "2"}) {
    ASSERT_EQ(run_command(kPlumb + " export " + id + " -o " + dir + "/" + id + ".json --db " + db)
                  .exit_code, 0);
  }
  const test::Run r = run_command(kPlumb + " diff " + dir + "/1.json " + dir + "/2.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json bad = nlohmann::json::parse(read_file(dir + "/2.json"));
  bad["step"] = 5;
  write_file(dir + "/bad.json", bad.dump());
  const test::Run wrong = run_command(kPlumb + " diff " + dir + "/1.json " + dir + "/bad.json");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.err, "plumb: error: " + dir + "/bad.json: step: expected an object, got 5\n");
  EXPECT_NE(r.out.find("step time                  100000.0     120000.0    +20.0%     5%  "
                       "regression\n"), std::string::npos) << r.out;
}

TEST(DiffCli, AStepRecordAgainstACommRecordIsBadInput) {
  const std::string dir = temp_dir("diff-step-kinds");
  const std::string db = step_store(dir);
  const test::Run r = run_command(kPlumb + " diff 4 2 --db " + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "plumb: error: baseline 2 holds a step record, baseline 4 none: plumb diff "
                   "compares records of the same kind\n");
  nlohmann::json bad = step_doc({1000, 1000, 1000}, {}, 0);
  bad["ranks"][0]["steps"][1]["exposed_communication_us"] = "slow";
  { baseline::Store(db).save(step_record("bad", bad)); }
  const test::Run field = run_command(kPlumb + " diff 1 5 --db " + db);
  EXPECT_EQ(field.exit_code, 2);
  EXPECT_EQ(field.err, "plumb: error: baseline 5: step.ranks[0].steps[1].exposed_communication_us: "
                       "expected a number, got \"slow\"\n");
}

// A drill of two SIGKILLs whose reset-device took `reset` s (clear-cache 2 s): detected in 1 and
// 3 s, down 60 + reset and 80 + reset s, 40 steps lost each. What plumb run --save stores (the
// run command is not needed to test diff).
baseline::Record recovery_record(const std::string& label, double reset) {
  supervise::RecoveryBaseline b;
  b.command = {"torchrun", "train.py"};
  b.host = "gpu-001";
  b.attempts = 3;
  b.result = "finished";
  b.failures_by_kind = {{"signal", 2}};
  for (int i = 0; i < 2; ++i) {
    supervise::Recovery r;
    r.attempt = i + 1;
    r.kind = "signal";
    r.detail = "SIGKILL";
    r.detect_seconds = i == 0 ? 1 : 3;
    r.steps = {{"clear-cache", 2, true, ""}, {"reset-device", reset, true, ""}};
    r.downtime_seconds = (i == 0 ? 60 : 80) + reset;
    r.steps_lost = 40;
    r.resumed_after_checkpoint = true;
    b.recoveries.push_back(r);
  }
  baseline::Record record = baseline::recovery_record(b, label);
  record.created = "2026-12-03T10:00:00Z";
  return record;
}

// Recovery records 1 (reset 20 s), 2 (reset 30 s), 3 (as 1), a comm record 4, a step record 5.
std::string recovery_store(const std::string& dir) {
  const std::string db = dir + "/plumb.db";
  baseline::Store store(db);
  store.save(recovery_record("before", 20));
  store.save(recovery_record("after", 30));
  store.save(recovery_record("again", 20));
  store.save(baseline::record_from_json(comm_doc(1, 1.1, nullptr), "comm.json"));
  store.save(step_record("step", step_doc({1000, 1000, 1000}, {}, 0)));
  return db;
}

// Worked numbers (tests/baseline/recovery_diff_test.cc): recovery 22 → 32 s (+45.5%), downtime
// median 90 → 100 s (+11.1%): beyond 10%, exit 1.
TEST(DiffCli, TwoRecoveryRecordsSlowerReset) {
  const std::string dir = temp_dir("diff-recovery");
  const std::string db = recovery_store(dir);
  const test::Run r = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, kRecoveryDiffText);
  const test::Run same = run_command(kPlumb + " diff 1 3 --db " + db);
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("\nno regression beyond the threshold\n"), std::string::npos) << same.out;
  EXPECT_EQ(run_command(kPlumb + " diff 1 2 -t 50 --db " + db).exit_code, 0);
  const test::Run json = run_command(kPlumb + " diff 1 2 --json - --db " + db);
  EXPECT_EQ(json.exit_code, 1);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["schema"], "plumb.recovery-diff/1");
  EXPECT_EQ(j["regressions"], 3);
  EXPECT_EQ(j["figures"][3]["field"], "recovery_seconds_median");
  EXPECT_EQ(j["figures"][3]["a"], 22.0);
  EXPECT_EQ(j["figures"][3]["b"], 32.0);
  EXPECT_EQ(j["steps"][1]["step"], "reset-device");
  EXPECT_EQ(j["steps"][1]["b"], 30.0);
}

// Through plumb export files: the recovery record travels in the export.
TEST(DiffCli, TwoExportedRecoveryRecords) {
  const std::string dir = temp_dir("diff-recovery-export");
  const std::string db = recovery_store(dir);
  for (const char* id : {"1", "2"}) {
    ASSERT_EQ(run_command(kPlumb + " export " + id + " -o " + dir + "/" + id + ".json --db " + db)
                  .exit_code, 0);
  }
  const test::Run r = run_command(kPlumb + " diff " + dir + "/1.json " + dir + "/2.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\nrecovery s, median             22.00     32.00    +45.5%  regression\n"),
            std::string::npos) << r.out;
  nlohmann::json bad = nlohmann::json::parse(read_file(dir + "/2.json"));
  bad["recovery"]["recoveries"][0]["detect_seconds"] = "soon";
  write_file(dir + "/bad.json", bad.dump());
  const test::Run wrong = run_command(kPlumb + " diff " + dir + "/1.json " + dir + "/bad.json");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.out, "");
  EXPECT_EQ(wrong.err, "plumb: error: file " + dir + "/bad.json: recoveries[0].detect_seconds: "
                       "expected a number, got \"soon\"\n");
}

TEST(DiffCli, ARecoveryRecordAgainstAnotherKindIsBadInput) {
  const std::string dir = temp_dir("diff-recovery-kinds");
  const std::string db = recovery_store(dir);
  const test::Run comm = run_command(kPlumb + " diff 4 2 --db " + db);
  EXPECT_EQ(comm.exit_code, 2);
  EXPECT_EQ(comm.out, "");
  EXPECT_EQ(comm.err, "plumb: error: baseline 2 holds a recovery record, baseline 4 none: plumb "
                      "diff compares records of the same kind\n");
  const test::Run step = run_command(kPlumb + " diff 1 5 --db " + db);
  EXPECT_EQ(step.exit_code, 2);
  EXPECT_EQ(step.err, "plumb: error: baseline 1 holds a recovery record, baseline 5 a step record: "
                      "plumb diff compares records of the same kind\n");
}

TEST(DiffCli, HelpNamesEveryExitStatus) {
  const test::Run r = run_command(kPlumb + " diff --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Exit status: 0 no regression; 1 a regression"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 too noisy to judge"), std::string::npos) << r.out;
}

// Issue 28: the gate never passes a broken run. Real logs, and damaged copies of them, imported
// into a store and compared.
std::string fixture(const std::string& name) {
  return read_file(std::string(PLUMB_TEST_FIXTURES) + "/" + name);
}

// `text` with line `number` (from 1) replaced by what `edit` makes of it; "" drops it.
std::string edit_line(const std::string& text, int number,
                      const std::function<std::string(const std::string&)>& edit) {
  std::string out;
  size_t start = 0;
  for (int n = 1; start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const std::string changed = n == number ? edit(line) : line;
    if (n != number || !changed.empty()) out += changed + "\n";
    start = end + 1;
  }
  return out;
}

// The 8xH100 all_reduce log with #wrong 3 in both halves of every row (lines 20-29) and its
// "Out of bounds values" line saying so.
std::string wrong_log() {
  std::string log = fixture("nccl-tests/all_reduce_8xH100_v2.17.8.log");
  for (int n = 20; n <= 29; ++n) {
    log = edit_line(log, n, [](const std::string& l) {
      std::string row = l;
      for (const size_t at : {row.find("       0  "), row.rfind("       0")}) row[at + 7] = '3';
      return row;
    });
  }
  return edit_line(log, 30, [](const std::string&) { return "# Out of bounds values : 20 FAILED"; });
}

// The same log cut after its third row (the run died).
std::string cut_log() {
  const std::string log = fixture("nccl-tests/all_reduce_8xH100_v2.17.8.log");
  size_t at = 0;
  for (int n = 0; n < 22; ++n) at = log.find('\n', at) + 1;
  return log.substr(0, at);
}

test::Run import_log(const std::string& db, const std::string& path, const std::string& text,
               const std::string& extra = "") {
  write_file(path, text);
  return run_command(kPlumb + " import " + path + " --db " + db + extra);
}

std::string last_line(const std::string& out) {
  const size_t end = out.find_last_not_of('\n');
  return out.substr(out.rfind('\n', end) + 1, end - out.rfind('\n', end));
}

TEST(DiffCli, ImportedWrongResultsOrACutSweepNeverPass) {
  const std::string dir = temp_dir("diff-validity");
  const std::string db = dir + "/plumb.db";
  ASSERT_EQ(import_log(db, dir + "/clean.log", fixture("nccl-tests/all_reduce_8xH100_v2.17.8.log"))
                .exit_code, 0);
  ASSERT_EQ(import_log(db, dir + "/wrong.log", wrong_log()).exit_code, 0);
  ASSERT_EQ(import_log(db, dir + "/cut.log", cut_log()).exit_code, 0);

  const test::Run wrong = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  EXPECT_EQ(wrong.out.substr(0, wrong.out.find("# A:")),
            "WRONG RESULTS in B (baseline 2)\n"
            "  " + dir + "/wrong.log:20: wrong results: 10 of 10 rows have wrong elements in the "
            "out-of-place half, the first at 32 MiB (#wrong 3; 30 in all)\n"
            "  " + dir + "/wrong.log:20: wrong results: 10 of 10 rows have wrong elements in the "
            "in-place half, the first at 32 MiB (#wrong 3; 30 in all)\n"
            "  " + dir + "/wrong.log:30: wrong results: nccl-tests says '# Out of bounds values : "
            "20 FAILED'\n");
  EXPECT_EQ(last_line(wrong.out), "FAILED: B has wrong results: a collective that returns wrong "
                                  "data is broken whatever its bandwidth");

  const test::Run cut = run_command(kPlumb + " diff 1 3 --db " + db + " --json " + dir + "/d.json");
  EXPECT_EQ(cut.exit_code, 2) << cut.out << cut.err;
  EXPECT_EQ(cut.out.substr(0, cut.out.find("# A:")),
            "INCOMPLETE: sweep ended at 128 MiB of 16 GiB in B (baseline 3)\n"
            "  " + dir + "/cut.log:22: incomplete: the test ends without nccl-tests' '# Avg bus "
            "bandwidth' line (the run stopped before its summary): the sweep ended at 128 MiB of "
            "16 GiB; missing 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB, 16 GiB (7 sizes)\n");
  EXPECT_EQ(last_line(cut.out),
            "INCOMPLETE: B's sweep ended early: the sizes a sweep did not reach cannot be judged; "
            "rerun it to the end");
  const nlohmann::json j = parse_json(read_file(dir + "/d.json"), "d.json");
  EXPECT_EQ(j["outcome"], "incomplete");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["b"]["validity"]["marks"][0], "INCOMPLETE: sweep ended at 128 MiB of 16 GiB");

  EXPECT_EQ(run_command(kPlumb + " diff 3 1 --db " + db).exit_code, 2);  // A cut short
  const test::Run reference = run_command(kPlumb + " diff 2 1 --db " + db);
  EXPECT_EQ(reference.exit_code, 2);
  EXPECT_EQ(last_line(reference.out),
            "NO REFERENCE: A is not valid (WRONG RESULTS): compare B against a run without wrong "
            "results or failed checks");
  EXPECT_EQ(run_command(kPlumb + " diff 1 1 --db " + db).exit_code, 0);
}

TEST(DiffCli, HcclCheckFailedAndNcclJsonNwrongFail) {
  const std::string dir = temp_dir("diff-validity-tools");
  const std::string db = dir + "/plumb.db";
  const std::string hccl = fixture("hccl_test/all_reduce_doc_example.log");
  const std::string failed = edit_line(hccl, 5, [](const std::string& l) {
    return l.substr(0, l.find("success")) + "failed";
  });
  const std::string options = " --collective allreduce --ranks 8";
  ASSERT_EQ(import_log(db, dir + "/ok.log", hccl, options).exit_code, 0);
  const test::Run imported = import_log(db, dir + "/failed.log", failed, options);
  ASSERT_EQ(imported.exit_code, 0);
  EXPECT_EQ(imported.err,
            "plumb: warning: " + dir + "/failed.log:5: wrong results: 1 of 14 rows failed their "
            "check, the first at 32 KiB (check_result failed)\n"
            "plumb: imported allreduce (14 rows, 8 ranks) from " + dir + "/failed.log:2 as "
            "baseline 2, marked WRONG RESULTS\n");
  EXPECT_EQ(run_command(kPlumb + " diff 1 2 --db " + db).exit_code, 1);

  const std::string clean = fixture("nccl-tests/all_reduce_8ranks_2hosts_v2.json");
  nlohmann::json doc = parse_json(clean, "a.json");
  doc["results"][2]["out_of_place"]["nwrong"] = 4.0;
  ASSERT_EQ(import_log(db, dir + "/a.json", clean).exit_code, 0);
  ASSERT_EQ(import_log(db, dir + "/b.json", doc.dump()).exit_code, 0);
  const test::Run r = run_command(kPlumb + " diff 3 4 --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "WRONG RESULTS in B (baseline 4)");
}

// Issue 28: -t 100 does not switch the "halved is a regression" rule off.
TEST(DiffCli, AHalvingFailsEvenWithAThresholdOfAHundredPercent) {
  const std::string dir = temp_dir("diff-t100");
  const nlohmann::json a = comm_doc(1, 1.1, 0.02);
  const test::Run r = diff(dir, a, slower(a, 2), " -t 100");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION: 2 regression(s)"), std::string::npos) << r.out;
  EXPECT_EQ(diff(dir, a, slower(a, 1.5), " -t 100").exit_code, 0);  // −33% is within 100%
}

// Issue 28: a spread of −5 or 1e300 is refused naming the field, never turned into advice.
TEST(DiffCli, AbsurdSpreadsAreBadInput) {
  const std::string dir = temp_dir("diff-spread");
  const nlohmann::json a = comm_doc(1, 1.1, 0.02);
  for (const double spread : {-5.0, 1e300}) {
    nlohmann::json b = slower(a, 1.3);
    b["results"][3]["busbw_spread"] = spread;
    const test::Run r = diff(dir, a, b);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, fmt::format("plumb: error: {}/b.json: results[3].busbw_spread: expected a "
                                 "relative spread from 0 to 1000 (the rounds' median absolute "
                                 "deviation over their median; none when measured once), got {}\n",
                                 dir, spread));
  }
}

// Issue 29, item 5: plumb diff of two baseline sets written as plumb export writes them (all six
// parts, "missing"): the memory part of each is what plumb mem creep reports of a train-events
// file, built here by hand (two ranks at 1 GiB, rank 1 leaking 1 MiB per step when `leak`).
nlohmann::json memory_part(bool leak) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const char* rank : {"0", "1"}) {
    const bool leaks = leak && std::string(rank) == "1";
    const double slope = leaks ? 1048576 : 100;
    ranks.push_back({{"rank", rank}, {"steps", 40}, {"warmup_steps", 8}, {"fitted_steps", 32},
                     {"settled_bytes", 1073741824.0}, {"settled_reserved_bytes", nullptr},
                     {"peak_bytes", 1.1e9}, {"creep_bytes_per_step", slope},
                     {"creep_ci95_bytes_per_step", {slope - 65536, slope + 65536}},
                     {"verdict", leaks ? "leak" : "flat"}});
  }
  const nlohmann::json check = {{"rank", "0"}, {"save_step", 20}, {"load_step", 21},
                                {"before_save_bytes", 1073741824.0},
                                {"after_save_bytes", 1073741824.0},
                                {"after_load_bytes", 1073741824.0},
                                {"tolerance_bytes", 16777216.0}, {"verdict", "pass"},
                                {"reason", nullptr}};
  for (auto& r : ranks) r["checkpoint"] = check;
  return {{"source", "events.jsonl"}, {"warmup", "detected"}, {"lines", 80},
          {"lines_without_memory", 0}, {"ranks", ranks}, {"worst", ranks[leak ? 1 : 0]},
          {"checkpoint", check}};
}

// A whole set as plumb export writes it: comm from comm_doc, a two-rank step record, the memory
// part, a one-failure recovery record, versions and settings.
nlohmann::json set_doc(bool leak = false) {
  const nlohmann::json comm = comm_doc(1, 1.05, 0.01);
  baseline::Record r = baseline::record_from_json(comm, "comm.json");
  r.source = baseline::kSetSource;
  r.hosts = {"node1"};
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"cann", "8.0.RC2"}}},
           {"env", {{"HCCL_ALGO", "ring"}, {"NCCL_ALGO", "ring"}}}};
  nlohmann::json ranks = nlohmann::json::array();
  for (int rank = 0; rank < 2; ++rank) {
    nlohmann::json steps = nlohmann::json::array();
    for (int s = 1; s <= 5; ++s) {
      steps.push_back({{"step", s}, {"step_time_us", 100000 + 100 * s}, {"compute_us", 80000},
                       {"communication_us", 5000}, {"exposed_communication_us", 5000},
                       {"overlapped_us", 0}, {"memory_us", 0}, {"idle_us", 15000}});
    }
    ranks.push_back({{"rank", rank}, {"steps", steps}});
  }
  r.step = {{"schema", "plumb.step/1"}, {"world_size", 2}, {"ranks", ranks},
            {"collectives", nlohmann::json::array()}, {"stragglers", nlohmann::json::array()}};
  r.memory = memory_part(leak);
  r.recovery = recovery_record("set", 20).recovery;
  return report::baseline_json(r);
}

test::Run set_diff(const std::string& dir, const nlohmann::json& a, const nlohmann::json& b,
                   const std::string& extra = "") {
  write_file(dir + "/set-a.json", a.dump(2));
  write_file(dir + "/set-b.json", b.dump(2));
  return run_command(kPlumb + " diff " + dir + "/set-a.json " + dir + "/set-b.json" + extra);
}

TEST(DiffCli, TwoBaselineSetsWithOneVariableChangedAreAGo) {
  const std::string dir = temp_dir("diff-sets-one");
  nlohmann::json b = set_doc();
  b["env"]["env"]["NCCL_ALGO"] = "tree";
  const test::Run r = set_diff(dir, set_doc(), b, " --json " + dir + "/d.json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(last_line(r.out), "go: no part regressed (comm, model, memory, recovery unchanged; "
                              "serve in neither; one variable changed)");
  EXPECT_NE(r.out.find("# one variable changed: setting NCCL_ALGO ring → tree\n"), std::string::npos)
      << r.out;
  const nlohmann::json j = parse_json(read_file(dir + "/d.json"), "d.json");
  EXPECT_EQ(j["schema"], "plumb.set-diff/1");
  EXPECT_EQ(j["outcome"], "go");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["variables_line"], "one variable changed: setting NCCL_ALGO ring → tree");
  for (const char* part : {"comm", "model", "memory", "recovery"}) {
    EXPECT_EQ(j["parts"][part]["verdict"], "unchanged") << part;
  }
  EXPECT_EQ(j["parts"]["memory"]["diff"]["schema"], "plumb.memory-diff/1");
}

TEST(DiffCli, TwoBaselineSetsWithTwoVariablesChangedWarn) {
  const std::string dir = temp_dir("diff-sets-two");
  nlohmann::json b = set_doc();
  b["env"]["versions"]["cann"] = "8.0.RC3";
  b["env"]["env"]["HCCL_ALGO"] = "tree";
  const test::Run r = set_diff(dir, set_doc(), b);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("# warning: one variable at a time: version cann 8.0.RC2 → 8.0.RC3 and "
                       "setting HCCL_ALGO ring → tree both changed; their effects cannot be told "
                       "apart\n"),
            std::string::npos) << r.out;
}

TEST(DiffCli, ACleanSetAgainstALeakingOneIsANoGoNamingMemory) {
  const std::string dir = temp_dir("diff-sets-leak");
  const test::Run r = set_diff(dir, set_doc(), set_doc(true), " --json -");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const nlohmann::json j = parse_json(r.out, "stdout");
  EXPECT_EQ(j["go"], "no-go: memory regressed (rank 1 leaks +1 MiB per step (95% CI +960 KiB to "
                     "+1.1 MiB) in B, flat in A)");
  EXPECT_EQ(j["parts"]["memory"]["verdict"], "regression");
  const test::Run console = set_diff(dir, set_doc(), set_doc(true));
  EXPECT_EQ(console.exit_code, 1);
  EXPECT_EQ(last_line(console.out), j["go"].get<std::string>());
}

// Sets stored (schema 6: the memory part and "missing" in the record) are compared by id.
TEST(DiffCli, StoredBaselineSetsAreComparedById) {
  const std::string dir = temp_dir("diff-sets-stored");
  const std::string db = dir + "/plumb.db";
  {
    baseline::Store store(db);
    store.save(baseline::record_from_json(set_doc(), "clean.json"));
    store.save(baseline::record_from_json(set_doc(true), "leak.json"));
  }
  const test::Run r = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "# baseline sets · A: baseline 1");
  EXPECT_EQ(last_line(r.out), "no-go: memory regressed (rank 1 leaks +1 MiB per step (95% CI +960 "
                              "KiB to +1.1 MiB) in B, flat in A)");
  EXPECT_EQ(run_command(kPlumb + " diff 2 1 --db " + db).exit_code, 0);  // the leak fixed
}

TEST(DiffCli, ASetPartOnlyInOneIsNamedAndASetAgainstAnotherKindIsRefused) {
  const std::string dir = temp_dir("diff-sets-missing");
  nlohmann::json b = set_doc();
  b["recovery"] = nullptr;
  b["missing"] = {{"recovery", "skipped (--skip recovery)"}};
  const test::Run r = set_diff(dir, set_doc(), b);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("recovery  only in A (B: skipped (--skip recovery))\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(last_line(r.out), "go: no part regressed (comm, model, memory unchanged; recovery only "
                              "in A; serve in neither; no variable changed)");
  write_file(dir + "/comm.json", comm_doc(1, 1.05, 0.01).dump());
  const test::Run mixed = run_command(kPlumb + " diff " + dir + "/set-a.json " + dir + "/comm.json");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(mixed.err, "plumb: error: file " + dir + "/set-a.json holds a baseline set, file " +
                           dir + "/comm.json none: plumb diff compares records of the same kind\n");
}

}  // namespace
}  // namespace plumb::test
