// plumb step end to end: the real binary on the real Kineto and Ascend traces in
// tests/fixtures/traces and on synthetic traces whose breakdown and straggler are known by
// construction; one clear line and exit 2 for a bad set.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kTraces = std::string(PLUMB_TEST_FIXTURES) + "/traces/";

// One Kineto event (µs, relative to baseTimeNanoseconds).
nlohmann::json event(const std::string& cat, const std::string& name, double ts, double dur,
                     nlohmann::json args = nlohmann::json::object(), int tid = 7) {
  return {{"ph", "X"}, {"cat", cat},   {"name", name}, {"pid", cat == "kernel" ? 0 : 100},
          {"tid", tid}, {"ts", ts},    {"dur", dur},   {"args", std::move(args)}};
}

// Rank r of 2: one step [0, 1000) µs; compute [100, 500) on stream 7; an allreduce of 64 MiB
// (16 Mi floats) on stream 20 that rank 1 starts 50 µs after rank 0, both ending at 900:
// rank 0's runs [300, 900), rank 1's [350, 900). Compute 400, communication 600 / 550,
// overlapped 200 / 150, exposed 400 / 400, idle 200 / 200 (memcpy [950, 960) adds 10 memory).
nlohmann::json synthetic_rank(int rank) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(event("user_annotation", "ProfilerStep#3", 0, 1000, {}, 1));
  events.push_back(event("kernel", "sm90_gemm", 100, 400, {{"stream", 7}, {"correlation", 1}}));
  nlohmann::json coll = {{"stream", 20},
                         {"correlation", 2},
                         {"Collective name", "allreduce"},
                         {"In msg nelems", 16777216},
                         {"Out msg nelems", 16777216},
                         {"Group size", 2},
                         {"dtype", "Float"},
                         {"Process Group Name", "0"},
                         {"Process Group Ranks", "[0, 1]"}};
  double start = rank == 0 ? 300 : 350;
  events.push_back(event("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", start,
                         900 - start, coll, 20));
  events.push_back(event("gpu_memcpy", "Memcpy DtoH", 950, 10, {{"stream", 7}}));
  return {{"schemaVersion", 1},
          {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", 2}}},
          {"baseTimeNanoseconds", 1711964646000000000},
          {"traceEvents", events}};
}

std::string write_synthetic_set(const std::string& name) {
  const std::string dir = temp_dir(name);
  for (int r = 0; r < 2; ++r) {
    write_file(dir + "/rank-" + std::to_string(r) + ".json", synthetic_rank(r).dump());
  }
  return dir;
}

nlohmann::json step_json(const std::string& args) {
  const test::Run r = run_command(kPlumb + " step " + args + " --json -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(StepCli, SyntheticSetBreakdownAndStraggler) {
  const nlohmann::json j = step_json(write_synthetic_set("step-synthetic"));
  EXPECT_EQ(j["schema"], "plumb.step/1");
  EXPECT_EQ(j["world_size"], 2);
  ASSERT_EQ(j["ranks"].size(), 2u);
  const nlohmann::json& s0 = j["ranks"][0]["steps"][0];
  EXPECT_EQ(s0["step"], 3);
  EXPECT_DOUBLE_EQ(s0["step_time_us"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(s0["compute_us"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(s0["communication_us"].get<double>(), 600);
  EXPECT_DOUBLE_EQ(s0["overlapped_us"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(s0["exposed_communication_us"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(s0["memory_us"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(s0["idle_us"].get<double>(), 190);
  const nlohmann::json& s1 = j["ranks"][1]["steps"][0];
  EXPECT_DOUBLE_EQ(s1["overlapped_us"].get<double>(), 150);
  ASSERT_EQ(j["collectives"].size(), 1u);
  const nlohmann::json& c = j["collectives"][0];
  EXPECT_EQ(c["kind"], "allreduce");
  EXPECT_EQ(c["bytes"], 67108864);
  EXPECT_EQ(c["last_rank"], 1);
  EXPECT_DOUBLE_EQ(c["start_skew_us"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(c["duration_us"].get<double>(), 550);
  // 64 MiB in 550 µs = 122.0 GB/s algbw; allreduce over 2 ranks: busbw factor 1.
  EXPECT_NEAR(c["busbw_gbps"].get<double>(), 67108864 / 550e-6 / 1e9, 1e-6);
  ASSERT_FALSE(j["stragglers"].empty());
  EXPECT_EQ(j["stragglers"][0]["rank"], 1);
  EXPECT_DOUBLE_EQ(j["stragglers"][0]["waited_on_us"].get<double>(), 50);
}

// PyTorch ≥ 2.4 writes the group's sequence number (`Seq`) on NCCL kernels: rank 0 recorded
// allreduces seq 7 [100, 300) and seq 8 [1000, 1200) µs, rank 1 only seq 8 [1050, 1200) (its
// profile window opened later). Seq 8 meets seq 8, seq 7 is rank 0's alone.
nlohmann::json seq_rank(int rank) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(event("user_annotation", "ProfilerStep#3", 0, 2000, {}, 1));
  const auto allreduce = [&](int seq, double start, double end) {
    nlohmann::json args = {{"stream", 20},          {"Collective name", "allreduce"},
                           {"In msg nelems", 1024}, {"Out msg nelems", 1024},
                           {"Group size", 2},       {"dtype", "Float"},
                           {"Process Group Name", "0"}, {"Process Group Ranks", "[0, 1]"},
                           {"Seq", seq}};
    events.push_back(event("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", start,
                           end - start, args, 20));
  };
  if (rank == 0) allreduce(7, 100, 300);
  allreduce(8, rank == 0 ? 1000 : 1050, 1200);
  return {{"schemaVersion", 1},
          {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", 2}}},
          {"baseTimeNanoseconds", 1711964646000000000},
          {"traceEvents", events}};
}

TEST(StepCli, SequenceNumbersMatchTheInstances) {
  const std::string dir = temp_dir("step-seq");
  for (int r = 0; r < 2; ++r) {
    write_file(dir + "/rank-" + std::to_string(r) + ".json", seq_rank(r).dump());
  }
  const test::Run r = run_command(kPlumb + " step " + dir + " --json " + dir + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\ncollectives: 1 of 2 instances matched across the ranks (by sequence "
                       "number)\n  1 recorded by only some ranks (profile windows)\n"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir + "/s.json"));
  EXPECT_EQ(j["matching"],
            nlohmann::json({{"instances", 2}, {"matched", 1}, {"partial", 1}, {"unaligned", 0},
                            {"resyncs", 0}, {"by_sequence_number", 2}, {"by_call_order", 0}}));
  ASSERT_EQ(j["collectives"].size(), 2u);
  EXPECT_EQ(j["collectives"][0]["ranks_seen"], 1);
  EXPECT_EQ(j["collectives"][1]["ranks_seen"], 2);
  EXPECT_DOUBLE_EQ(j["collectives"][1]["start_skew_us"].get<double>(), 50);
}

TEST(StepCli, GzipReadsTheSame) {
  const std::string dir = write_synthetic_set("step-gzip");
  ASSERT_EQ(run_command("gzip " + dir + "/rank-0.json " + dir + "/rank-1.json").exit_code, 0);
  const nlohmann::json j = step_json(dir + "/rank-0.json.gz " + dir + "/rank-1.json.gz");
  EXPECT_DOUBLE_EQ(j["ranks"][1]["steps"][0]["overlapped_us"].get<double>(), 150);
  EXPECT_EQ(j["stragglers"][0]["rank"], 1);
}

TEST(StepCli, PartialRankSetOfTheRealTrace) {
  const nlohmann::json j = step_json(kTraces + "kineto-2ranks-of-128");
  EXPECT_EQ(j["world_size"], 128);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["steps"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["steps"][0]["step"], 551);
  bool partial_note = false;
  for (const auto& note : j["notes"]) {
    partial_note |= note.get<std::string>().starts_with("2 of 128 ranks");
  }
  EXPECT_TRUE(partial_note) << j["notes"];
  std::set<std::string> kinds;
  for (const auto& c : j["collectives"]) kinds.insert(c["kind"].get<std::string>());
  EXPECT_EQ(kinds, (std::set<std::string>{"allgather", "allreduce", "alltoall"}));
  // Two ranks sampled from 128, groups unnamed, 4 alltoalls, 4 allreduces and 2 allgathers on
  // each: 11 instances; 5 line up across both, rank 0's first alltoall and rank 1's last are one
  // rank's alone, and in 4 the two ranks' calls do not overlap (docs/step.md, "The fixtures").
  EXPECT_EQ(j["matching"],
            nlohmann::json({{"instances", 11}, {"matched", 5}, {"partial", 2}, {"unaligned", 4},
                            {"resyncs", 0}, {"by_sequence_number", 0}, {"by_call_order", 11}}));
}

TEST(StepCli, AscendTextExportOfTwoRanks) {
  const nlohmann::json j = step_json(kTraces + "ascend/pt-level1-2rank-text");
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["format"], "ascend-text");
  EXPECT_EQ(j["ranks"][0]["steps"][0]["step"], 50);
  EXPECT_FALSE(j["collectives"].empty());
  // msprof-analyze's own step_trace_time.csv for rank 0 says Preparing 17902.5 µs (its text
  // export rounds to 0.25 µs) and Computing 8873.756.
  const test::Run csv = run_command(kPlumb + " step " + kTraces +
                                    "ascend/pt-level1-2rank-text --csv -");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("\n50,rank,0,8873.737,101963.207,4028.671,105991.878,"), std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",17902.502\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.err.find("plumb step · 2 ranks"), std::string::npos) << csv.err;
}

TEST(StepCli, CsvHtmlAndConsole) {
  const std::string dir = write_synthetic_set("step-outputs");
  const std::string out = temp_dir("step-outputs-out");
  const test::Run r = run_command(kPlumb + " step " + dir + " --csv " + out + "/s.csv --html " + out +
                            "/s.html");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("straggler"), std::string::npos) << r.out;
  const std::string csv = read_file(out + "/s.csv");
  EXPECT_NE(csv.find("Computing,Communication(Not Overlapped),Overlapped,Communication,Free"),
            std::string::npos)
      << csv;
  EXPECT_NE(read_file(out + "/s.html").find("<svg"), std::string::npos);
}

TEST(StepCli, BadSetsAreOneLineWithExitTwo) {
  const std::string dir = write_synthetic_set("step-bad");
  auto expect_error = [](const std::string& args, const std::string& message) {
    const test::Run r = run_command(kPlumb + " step " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.err, "plumb: error: " + message + "\n") << args;
  };
  expect_error(dir + "/rank-0.json " + dir + "/rank-0.json",
               "rank 0 appears twice: " + dir + "/rank-0.json and " + dir + "/rank-0.json");
  nlohmann::json other = synthetic_rank(1);
  other["distributedInfo"]["world_size"] = 4;
  write_file(dir + "/other.json", other.dump());
  expect_error(dir + "/rank-0.json " + dir + "/other.json",
               "world size disagrees: " + dir + "/rank-0.json says 2, " + dir +
                   "/other.json says 4: traces of different runs");
  expect_error(dir + "/rank-0.json --step-regex 'Step(?=#)'",
               "--step-regex 'Step(?=#)': not a valid regular expression (invalid perl operator: "
               "(?=)");
  expect_error(dir + "/rank-0.json --step-regex 'Step'",
               "--step-regex 'Step': needs a capture group for the step number, e.g. "
               "'ProfilerStep#(\\d+)'");
  expect_error(dir + "/none.json", dir + "/none.json: no such file or directory");
  const std::string empty = temp_dir("step-empty");
  expect_error(empty, empty + ": no traces found: expected *.json or *.json.gz files (one per "
                              "rank, from torch.profiler) or *_ascend_pt directories "
                              "(torch_npu.profiler)");
  expect_error(dir + "/rank-0.json --step-regex 'Nothing#(\\d+)'",
               dir + "/rank-0.json: no steps found: no host annotation's name matches "
                     "'Nothing#(\\d+)' (profile with torch.profiler.schedule and call "
                     "prof.step(), or name the steps with --step-regex)");
  const std::string text = synthetic_rank(0).dump();
  write_file(dir + "/cut.json", text.substr(0, text.size() / 2));
  const test::Run cut = run_command(kPlumb + " step " + dir + "/cut.json");
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_NE(cut.err.find(dir + "/cut.json: byte "), std::string::npos) << cut.err;
  EXPECT_EQ(std::count(cut.err.begin(), cut.err.end(), '\n'), 1) << cut.err;
}

// A comm baseline measured here (2 ranks, allreduce up to 64 MiB on the world layer): the
// synthetic 64 MiB allreduce over 2 ranks is compared with the world layer's 64 MiB row.
TEST(StepCli, CollectivesBesideAMeasuredCommBaseline) {
  const std::string dir = write_synthetic_set("step-baseline");
  const std::string comm = temp_dir("step-baseline-comm") + "/comm.json";
  const test::Run measured = run_command(mpirun(2) + " " + kPlumb +
                                   " comm -b 1M -e 64M -f 4 -n 2 -w 1 --collectives allreduce "
                                   "--json " + comm);
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  double row_busbw = -1;
  const nlohmann::json record = nlohmann::json::parse(read_file(comm));
  for (const auto& row : record["results"]) {
    if (row["layer"] == "world" && row["bytes"] == 67108864) row_busbw = row["busbw_gbps"];
  }
  ASSERT_GT(row_busbw, 0);
  const nlohmann::json j = step_json(dir + " --baseline " + comm);
  const nlohmann::json& c = j["collectives"][0];
  EXPECT_EQ(c["baseline_layer"], "world");
  EXPECT_DOUBLE_EQ(c["baseline_busbw_gbps"].get<double>(), row_busbw);
  const test::Run console = run_command(kPlumb + " step " + dir + " --baseline " + comm);
  // PyTorch's group "0" (its counter) holds the whole world of 2: named by that role.
  EXPECT_NE(console.out.find("allreduce 64 MiB on group world(0,1) ran at "), std::string::npos)
      << console.out;
}

TEST(StepCli, MeasuredBesideThePlan) {
  const std::string dir = write_synthetic_set("step-plan");
  const std::string plan = temp_dir("step-plan-json") + "/plan.json";
  const test::Run planned = run_command(kPlumb + " plan --model llama3-70b --hardware h100-sxm "
                                  "--devices 64 --tp 8 --pp 2 --json " + plan);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const double predicted_s = nlohmann::json::parse(read_file(plan))["step_time_s"];
  const nlohmann::json j = step_json(dir + " --plan " + plan);
  bool step_row = false;
  for (const auto& row : j["plan"]) {
    if (row["component"] != "step") continue;
    step_row = true;
    EXPECT_DOUBLE_EQ(row["measured_us"].get<double>(), 1000);
    EXPECT_DOUBLE_EQ(row["predicted_us"].get<double>(), predicted_s * 1e6);
  }
  EXPECT_TRUE(step_row) << j["plan"];
  const test::Run bad = run_command(kPlumb + " step " + dir + " --plan " + dir + "/rank-0.json");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "plumb: error: " + dir +
                         "/rank-0.json: not a plumb.plan/1 file (write one with plumb plan ... "
                         "--json FILE)\n");
}

// plumb plan --calibrate STEP: a step measured beside its plan (plumb step --plan), whose compute
// took 25% longer than predicted, calibrates the plan of the same layout: the fitted model gives
// the measured compute and step (within 1%), says what it changed, and its band is centred on it.
// The same from a stored step record; a step record without a plan is refused with what to do.
TEST(StepCli, CalibratesThePlanFromAMeasuredStep) {
  const std::string dir = write_synthetic_set("step-calibrate");
  const std::string out = temp_dir("step-calibrate-out");
  const std::string layout = " plan --model megatron-1.7b --hardware h100-sxm --tp 1 --dp 2 --gbs 2";
  ASSERT_EQ(run_command(kPlumb + layout + " --json " + out + "/plan.json").exit_code, 0);
  nlohmann::json step = step_json(dir + " --plan " + out + "/plan.json");
  ASSERT_TRUE(step["plan_run"].is_object()) << step;
  double compute = 0, predicted_step = 0;
  for (auto& row : step["plan"]) {
    if (row["component"] == "compute") compute = row["predicted_us"].get<double>() * 1.25;
    if (row["component"] == "step") predicted_step = row["predicted_us"];
  }
  const double measured_step = predicted_step + compute / 1.25 * 0.25;
  for (auto& row : step["plan"]) {
    row["measured_us"] = row["component"] == "compute" ? nlohmann::json(compute)
                         : row["component"] == "step" ? nlohmann::json(measured_step)
                                                      : nlohmann::json();
  }
  write_file(out + "/step.json", step.dump());
  const test::Run calibrated = run_command(kPlumb + layout + " --calibrate " + out +
                                           "/step.json --json " + out + "/calibrated.json");
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(out + "/calibrated.json"));
  EXPECT_NEAR(j["breakdown_s"]["compute"].get<double>() * 1e6, compute, 0.01 * compute);
  EXPECT_NEAR(j["step_time_s"].get<double>() * 1e6, measured_step, 0.01 * measured_step);
  const nlohmann::json& gemm = j["context"]["efficiencies"]["parameters"][0];
  EXPECT_EQ(gemm["name"], "GEMM efficiency, dense");
  EXPECT_TRUE(gemm["measured"].get<bool>());
  EXPECT_LT(gemm["after"].get<double>(), 0.9);
  EXPECT_TRUE(j["band"]["calibrated"].get<bool>());
  const test::Run console =
      run_command(kPlumb + layout + " --calibrate " + out + "/step.json");
  EXPECT_NE(console.out.find("# calibrated from 1 measured step (--calibrate " + out +
                             "/step.json):\n#   GEMM efficiency, dense"),
            std::string::npos)
      << console.out;
  EXPECT_NE(console.out.find("#   EP bandwidth                       1  kept: no step measures it "
                             "(exposed ep)\n"),
            std::string::npos)
      << console.out;
  EXPECT_NE(console.out.find("\nband     80%: "), std::string::npos) << console.out;

  // A damaged plan_run names the field; a model file kept in it that does not read names the file.
  nlohmann::json damaged = step;
  damaged["plan_run"].erase("inputs");
  write_file(out + "/damaged.json", damaged.dump());
  const test::Run no_inputs = run_command(kPlumb + layout + " --calibrate " + out + "/damaged.json");
  EXPECT_EQ(no_inputs.exit_code, 2);
  EXPECT_EQ(no_inputs.err, "plumb: error: --calibrate " + out + "/damaged.json: plan_run.inputs: missing\n");
  damaged = step;
  damaged["plan_run"]["inputs"]["model"]["yaml"] = "layers: [";
  write_file(out + "/damaged.json", damaged.dump());
  const test::Run bad_model = run_command(kPlumb + layout + " --calibrate " + out + "/damaged.json");
  EXPECT_EQ(bad_model.exit_code, 2);
  EXPECT_NE(bad_model.err.find("(the model file kept in --calibrate " + out + "/damaged.json)"),
            std::string::npos) << bad_model.err;

  // A layout size of 0 (it would divide by zero) or beyond plumb's devices is refused by name.
  damaged = step;
  damaged["plan_run"]["layout"]["tp"] = 0;
  write_file(out + "/damaged.json", damaged.dump());
  const test::Run zero_tp = run_command(kPlumb + layout + " --calibrate " + out + "/damaged.json");
  EXPECT_EQ(zero_tp.exit_code, 2);
  EXPECT_EQ(zero_tp.err, "plumb: error: --calibrate " + out + "/damaged.json: plan_run.layout.tp: "
                         "expected a whole number from 1 to 16777216, got 0\n");

  // Stored: the record of plumb step --plan --save calibrates; one without --plan is refused.
  const std::string db = out + "/store.db";
  ASSERT_EQ(run_command(kPlumb + " step " + dir + " --plan " + out + "/plan.json --save --db " + db)
                .exit_code, 0);
  ASSERT_EQ(run_command(kPlumb + " step " + dir + " --save --db " + db).exit_code, 0);
  const test::Run stored = run_command(kPlumb + layout + " --calibrate 1 --db " + db);
  EXPECT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_NE(stored.out.find("# calibrated from 1 measured step (--calibrate 1):"),
            std::string::npos)
      << stored.out;
  const test::Run refused = run_command(kPlumb + layout + " --calibrate 2 --db " + db);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err,
            "plumb: error: --calibrate 2 was not compared with a plan, so the layout it measured "
            "is unknown: plumb plan ... --json PLAN.json, then plumb step TRACES --plan PLAN.json "
            "--save (or --json), so that the layout it ran is known\n");
}

// Two step baselines in the store: the second run's step takes twice as long, which plumb diff
// calls a regression (exit 1) whatever the noise.
TEST(StepCli, SavedStepRecordsCompareWithDiff) {
  const std::string dir = write_synthetic_set("step-save");
  const std::string db = temp_dir("step-save-db") + "/store.db";
  const test::Run first = run_command(kPlumb + " step " + dir + " --save --label before --db " + db);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("saved as baseline 1\n"), std::string::npos) << first.out;
  for (int r = 0; r < 2; ++r) {
    nlohmann::json slow = synthetic_rank(r);
    slow["traceEvents"][0]["dur"] = 2000;
    write_file(dir + "/rank-" + std::to_string(r) + ".json", slow.dump());
  }
  ASSERT_EQ(run_command(kPlumb + " step " + dir + " --save --label after --db " + db).exit_code,
            0);
  const test::Run diff = run_command(kPlumb + " diff 1 2 --db " + db);
  EXPECT_EQ(diff.exit_code, 1) << diff.out << diff.err;
  const test::Run list = run_command(kPlumb + " list --db " + db);
  EXPECT_NE(list.out.find("step 2 ranks × 1 step"), std::string::npos) << list.out;
  const test::Run wrong = run_command(kPlumb + " step " + dir + " --baseline 1 --db " + db);
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.err,
            "plumb: error: baseline 1 holds a step record (plumb step), not comm measurements: "
            "plumb step --baseline compares collectives with comm measurements (plumb baseline, "
            "plumb comm --json, plumb import)\n");
}

// An inference trace without ProfilerStep: refused with a hint, read with --step-regex; NCCL
// 2.27's ncclDevKernel_AllGather is communication with its size from the collective arguments.
TEST(StepCli, StepRegexOnATraceWithoutProfilerSteps) {
  const std::string trace = kTraces + "kineto-b200-rank0-of8-nccl2.27";
  const test::Run none = run_command(kPlumb + " step " + trace);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("eager_trace.json.gz: no steps found"), std::string::npos) << none.err;
  const nlohmann::json j = step_json(trace + " --step-regex 'execute_context_(\\d+).*'");
  ASSERT_EQ(j["ranks"][0]["steps"].size(), 1u);
  EXPECT_EQ(j["ranks"][0]["steps"][0]["step"], 1);
  ASSERT_EQ(j["collectives"].size(), 1u);
  EXPECT_EQ(j["collectives"][0]["kind"], "allgather");
  EXPECT_EQ(j["collectives"][0]["bytes"], 402176);
  EXPECT_EQ(j["collectives"][0]["group_ranks"].size(), 8u);
}


// Debian 12's PyTorch 1.13 on CPU (gloo, legacy profiler): 2 DDP ranks, rank 1 slowed on purpose
// (tests/fixtures/traces/gloo-cpu-2ranks; figures from the JSON files, cpu_trace_test.cc).
TEST(StepCli, PyTorch113GlooCpuTracesOfTwoRanks) {
  const std::string dir = kTraces + "gloo-cpu-2ranks";
  const nlohmann::json j = step_json(dir);
  EXPECT_EQ(j["world_size"], -1);  // no trace says it
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][0]["format"], "pytorch-cpu");
  const nlohmann::json& s0 = j["ranks"][0]["steps"][0];
  EXPECT_EQ(s0["step"], 1);
  EXPECT_DOUBLE_EQ(s0["step_time_us"].get<double>(), 358170);
  EXPECT_DOUBLE_EQ(s0["compute_us"].get<double>(), 125981);
  EXPECT_DOUBLE_EQ(s0["communication_us"].get<double>(), 237352);
  EXPECT_DOUBLE_EQ(s0["exposed_communication_us"].get<double>(), 230921);
  const nlohmann::json& s1 = j["ranks"][1]["steps"][2];
  EXPECT_EQ(s1["step"], 3);
  EXPECT_DOUBLE_EQ(s1["compute_us"].get<double>(), 276818);
  EXPECT_DOUBLE_EQ(s1["exposed_communication_us"].get<double>(), 1551);
  ASSERT_EQ(j["collectives"].size(), 6u);
  EXPECT_EQ(j["collectives"][0]["kind"], "allreduce");
  EXPECT_EQ(j["collectives"][0]["last_rank"], 1);
  EXPECT_EQ(j["matching"]["matched"], 6);
  ASSERT_FALSE(j["stragglers"].empty());
  EXPECT_EQ(j["stragglers"].back()["step"], -1);
  EXPECT_EQ(j["stragglers"].back()["rank"], 1);
  EXPECT_DOUBLE_EQ(j["stragglers"].back()["waited_on_us"].get<double>(), 1074301);
  const test::Run console = run_command(kPlumb + " step " + dir);
  EXPECT_EQ(console.exit_code, 0) << console.err;
  EXPECT_NE(console.out.find("plumb step · 2 ranks · 3 steps · pytorch-cpu traces\n"),
            std::string::npos)
      << console.out;
  EXPECT_NE(console.out.find("collectives: 6 of 6 instances matched across the ranks"),
            std::string::npos)
      << console.out;
  EXPECT_NE(console.out.find("put on rank 0's clock by the median gap between their 6 "
                             "collectives' ends (-5505.000 µs)"),
            std::string::npos)
      << console.out;
  // tensorboard_trace_handler's default name says no rank.
  const std::string unnamed = temp_dir("step-gloo-unnamed") + "/host_1234.1700000000.pt.trace.json";
  write_file(unnamed, read_file(dir + "/rank-0.json"));
  const test::Run r = run_command(kPlumb + " step " + unnamed);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + unnamed +
                       ": no rank: the file is the legacy profiler's array of events (PyTorch "
                       "without Kineto), which never names its rank, and the file name does not "
                       "say (name it rank-N.json: export_chrome_trace(f\"rank-{rank}.json\"))\n");
}

}  // namespace
}  // namespace plumb::test
