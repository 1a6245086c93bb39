// The step reporters on a hand-made StepResult whose figures are known by construction: JSON
// plumb.step/1 (field names, NaN as null, a round trip, errors naming the field), the console
// summary and the msprof-analyze CSV against golden files, the HTML page's bars, lanes, tables
// and escaping.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/step_console_reporter.h"
#include "report/step_csv_reporter.h"
#include "report/step_html.h"
#include "report/step_json_reporter.h"
#include "step/analysis.h"
#include "step/classify.h"
#include "step/readers.h"
#include "support/subprocess.h"

namespace plumb::report {
namespace {

using nlohmann::json;
using step::Activity;
using step::CollectiveKind;

constexpr uint64_t kMiB = 1 << 20;

// Every breakdown satisfies compute + exposed + memory + idle == step time.
step::StepBreakdown breakdown(int64_t step, double time, double compute, double comm,
                              double exposed, double memory) {
  step::StepBreakdown s;
  s.step = step;
  s.step_time_us = time;
  s.compute_us = compute;
  s.communication_us = comm;
  s.exposed_communication_us = exposed;
  s.overlapped_us = comm - exposed;
  s.memory_us = memory;
  s.idle_us = time - compute - exposed - memory;
  // msprof's columns as if the step's first and last tasks were at its start and end.
  s.free_us = s.idle_us + memory;
  s.stage_us = time;
  return s;
}

step::CollectiveInstance collective(int64_t step, CollectiveKind kind, std::string group,
                                    std::vector<int> ranks, uint64_t bytes, double exposed,
                                    double busbw, double baseline) {
  step::CollectiveInstance c;
  c.step = step;
  c.kind = kind;
  c.group = std::move(group);
  c.group_ranks = std::move(ranks);
  c.ranks_seen = 3;
  c.bytes = bytes;
  c.first_rank = 0;
  c.last_rank = 1;
  c.start_skew_us = 4000;
  c.waited_us = 6500;
  c.duration_us = 2000;
  c.busbw_gbps = busbw;
  c.baseline_busbw_gbps = baseline;
  c.baseline_layer = std::isnan(baseline) ? "" : c.group;
  c.exposed_us = exposed;
  c.name = "ncclDevKernel_" + std::string(step::kind_name(kind));
  return c;
}

// Ranks 0–2 of a world of 4, steps 5 and 6. Step 5: rank 1 is the slowest (120 ms); six
// collectives with exposed time, the reducescatter at 35% of its baseline.
step::StepResult sample() {
  step::StepResult r;
  r.world_size = 4;
  r.ranks = {
      {0,
       "traces/rank0.json.gz",
       "kineto",
       {breakdown(5, 100000, 60000, 30000, 20000, 5000),
        breakdown(6, 90000, 60000, 20000, 10000, 5000)}},
      {1,
       "traces/rank1.json.gz",
       "kineto",
       {breakdown(5, 120000, 60000, 45000, 40000, 2500),
        breakdown(6, 95000, 60000, 30000, 25000, 0)}},
      {2,
       "traces/rank2.json.gz",
       "kineto",
       {breakdown(5, 110000.5, 61000.25, 30000, 25000, 0),
        breakdown(6, 105000, 60000, 40000, 30000, 5000)}},
  };
  const std::vector<int> dp = {0, 1, 2, 3};
  const std::vector<int> ep = {0, 1, 2, 3, 4, 5, 6, 7};
  r.collectives = {
      collective(5, CollectiveKind::kReduceScatter, "dp", dp, 64 * kMiB, 12000, 45.255, 129.3),
      collective(5, CollectiveKind::kAllGather, "dp", dp, 64 * kMiB, 8000, 100, step::kNaN),
      collective(5, CollectiveKind::kUnknown, "", {}, 0, 3000, step::kNaN, step::kNaN),
      collective(5, CollectiveKind::kSendRecv, "pp", {0, 1}, 2 * kMiB, 1000, 12.5, step::kNaN),
      collective(5, CollectiveKind::kBroadcast, "dp", dp, 4096, 500, 0.5, step::kNaN),
      collective(5, CollectiveKind::kReduce, "dp", dp, 4096, 250, 0.25, step::kNaN),
      collective(6, CollectiveKind::kAllToAll, "ep", ep, 16 * kMiB, 9000, 20, 40),
  };
  r.stragglers = {{5, 1, 6500}, {5, 2, 1000}, {6, 2, 4000}, {-1, 1, 6500}, {-1, 2, 5000}};
  r.plan = {{"compute", 60000, 50000}, {"exposed dp", 20000, step::kNaN}, {"step", 120000, 100000}};
  r.plan_source = "plan.json";
  r.baseline = "#3 comm 2026-12-01 (h0, h1)";
  r.matching = {8, 6, 1, 1, 1, 0, 8};
  r.notes = {"the set holds ranks 0, 1, 2 of a world of 4: cross-rank figures cover only them"};
  r.ranks[1].steps[0].start_us = 201000;  // the swimlane's clock starts at rank 0's 200 ms
  r.ranks[0].steps[0].start_us = 200000;
  r.ranks[2].steps[0].start_us = 200500;
  r.swimlane_step = 5;
  r.swimlane = {
      {0,
       {{0, 60000, Activity::kCompute},
        {50000, 80000, Activity::kCommunication},
        {80000, 85000, Activity::kMemory}}},
      {1, {{1000, 61000, Activity::kCompute}, {55000, 100000, Activity::kCommunication}}},
      {2,
       {{500, 30000, Activity::kCompute},
        {30000.25, 61500.25, Activity::kCompute},
        {60000, 90000, Activity::kCommunication}}},
  };
  return r;
}

// Compares with tests/fixtures/golden/<name>. After an intended change of format, rerun with
// PLUMB_UPDATE_GOLDEN=1 to rewrite the file, and review its diff.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(PLUMB_TEST_FIXTURES) + "/golden/" + name;
  if (std::getenv("PLUMB_UPDATE_GOLDEN")) test::write_file(path, actual);
  EXPECT_EQ(actual, test::read_file(path)) << "golden file " << path;
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t columns(const std::string& line) {  // code points: UTF-8 continuation bytes do not count
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

// ---- JSON plumb.step/1 -------------------------------------------------------------------------

TEST(StepJson, FieldNamesAsTheIssueNamesThem) {
  const json doc = step_to_json(sample());
  EXPECT_EQ(keys(doc),
            (std::set<std::string>{"schema", "world_size", "ranks", "collectives", "matching",
                                   "stragglers", "plan", "notes", "baseline", "plan_source", "plan_run",
                                   "swimlane"}));
  EXPECT_EQ(doc["schema"], "plumb.step/1");
  EXPECT_EQ(doc["world_size"], 4);
  EXPECT_EQ(keys(doc["ranks"][0]), (std::set<std::string>{"rank", "source", "format", "steps"}));
  EXPECT_EQ(
      keys(doc["ranks"][0]["steps"][0]),
      (std::set<std::string>{"step", "step_time_us", "compute_us", "communication_us",
                             "exposed_communication_us", "overlapped_us", "memory_us", "idle_us",
                             "preparing_us", "free_us", "stage_us", "bubble_us"}));
  EXPECT_EQ(keys(doc["matching"]),
            (std::set<std::string>{"instances", "matched", "partial", "unaligned", "resyncs",
                                   "by_sequence_number", "by_call_order"}));
  EXPECT_EQ(doc["matching"]["instances"], 8);
  EXPECT_EQ(doc["matching"]["unaligned"], 1);
  EXPECT_EQ(keys(doc["collectives"][0]),
            (std::set<std::string>{"step", "kind", "group", "group_ranks", "ranks_seen", "bytes",
                                   "first_rank", "last_rank", "start_skew_us", "waited_us",
                                   "duration_us", "busbw_gbps", "baseline_busbw_gbps",
                                   "baseline_layer", "exposed_us", "name"}));
  EXPECT_EQ(keys(doc["stragglers"][0]), (std::set<std::string>{"step", "rank", "waited_on_us"}));
  EXPECT_EQ(keys(doc["plan"][0]),
            (std::set<std::string>{"component", "measured_us", "predicted_us", "ratio"}));
  EXPECT_EQ(keys(doc["swimlane"]), (std::set<std::string>{"step", "lanes"}));
  EXPECT_EQ(keys(doc["swimlane"]["lanes"][0]["intervals"][0]),
            (std::set<std::string>{"start_us", "end_us", "activity"}));
}

TEST(StepJson, ValuesAndNaNAsNull) {
  const json doc = step_to_json(sample());
  const json& s = doc["ranks"][1]["steps"][0];
  EXPECT_EQ(s["step"], 5);
  EXPECT_EQ(s["step_time_us"], 120000.0);
  EXPECT_EQ(s["exposed_communication_us"], 40000.0);
  EXPECT_EQ(s["overlapped_us"], 5000.0);
  EXPECT_EQ(s["idle_us"], 17500.0);
  const json& rs = doc["collectives"][0];
  EXPECT_EQ(rs["kind"], "reducescatter");
  EXPECT_EQ(rs["group_ranks"], json({0, 1, 2, 3}));
  EXPECT_EQ(rs["bytes"], 64 * kMiB);
  EXPECT_EQ(rs["last_rank"], 1);
  EXPECT_TRUE(doc["collectives"][1]["baseline_busbw_gbps"].is_null());
  EXPECT_TRUE(doc["collectives"][2]["busbw_gbps"].is_null());
  EXPECT_EQ(doc["collectives"][2]["kind"], "unknown");
  EXPECT_EQ(doc["stragglers"][3], json({{"step", -1}, {"rank", 1}, {"waited_on_us", 6500.0}}));
  EXPECT_DOUBLE_EQ(doc["plan"][0]["ratio"].get<double>(), 1.2);
  EXPECT_TRUE(doc["plan"][1]["predicted_us"].is_null());
  EXPECT_TRUE(doc["plan"][1]["ratio"].is_null());
  EXPECT_EQ(doc["swimlane"]["step"], 5);
  EXPECT_EQ(doc["swimlane"]["lanes"][0]["intervals"][1]["activity"], "communication");
  // The text has no NaN: a strict JSON reader takes it.
  std::ostringstream out;
  StepJsonReporter().report(sample(), out);
  EXPECT_FALSE(has(out.str(), "NaN"));
  EXPECT_EQ(json::parse(out.str()), doc);
}

TEST(StepJson, RoundTripThroughText) {
  const step::StepResult r = sample();
  std::ostringstream out;
  StepJsonReporter().report(r, out);
  const step::StepResult back = step_from_json(json::parse(out.str()), "run.json");
  EXPECT_EQ(step_to_json(back), step_to_json(r));
  ASSERT_EQ(back.ranks.size(), 3u);
  EXPECT_EQ(back.ranks[2].source, "traces/rank2.json.gz");
  EXPECT_EQ(back.ranks[2].steps[0].compute_us, 61000.25);
  EXPECT_EQ(back.collectives[0].kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(back.collectives[6].kind, CollectiveKind::kAllToAll);
  EXPECT_TRUE(std::isnan(back.collectives[1].baseline_busbw_gbps));
  EXPECT_EQ(back.collectives[3].group_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(back.stragglers[3].step, -1);
  EXPECT_TRUE(std::isnan(back.plan[1].predicted_us));
  EXPECT_EQ(back.swimlane[2].intervals[1].start_us, 30000.25);
  EXPECT_EQ(back.swimlane[2].intervals[2].activity, Activity::kCommunication);
  EXPECT_EQ(back.notes, r.notes);
  EXPECT_EQ(back.baseline, r.baseline);
  EXPECT_EQ(back.plan_source, "plan.json");
  // Not written: the swimlane already placed them.
  EXPECT_EQ(back.ranks[0].steps[0].start_us, 0);
  EXPECT_EQ(back.collectives[0].last_start_ns, 0);
}

TEST(StepJson, EmptyResultRoundTrips) {
  const step::StepResult empty;
  const json doc = step_to_json(empty);
  EXPECT_EQ(doc["world_size"], -1);
  EXPECT_EQ(doc["swimlane"], json({{"step", -1}, {"lanes", json::array()}}));
  EXPECT_EQ(step_to_json(step_from_json(doc, "x.json")), doc);
}

std::string error_for(const json& doc) {
  return test::error_message([&] { step_from_json(doc, "run.json"); });
}

TEST(StepJson, ErrorsNameTheField) {
  json doc = step_to_json(sample());
  json bad = doc;
  bad["ranks"][2]["steps"][0]["step_time_us"] = "x";
  EXPECT_EQ(error_for(bad),
            "run.json: ranks[2].steps[0].step_time_us: expected a number, got \"x\"");
  bad = doc;
  bad["collectives"][0].erase("kind");
  EXPECT_EQ(error_for(bad), "run.json: collectives[0].kind: missing");
  bad = doc;
  bad["collectives"][1]["kind"] = "allsum";
  EXPECT_EQ(error_for(bad),
            "run.json: collectives[1].kind: expected one of unknown, allreduce, reducescatter, "
            "allgather, alltoall, sendrecv, broadcast, reduce, barrier, got \"allsum\"");
  bad = doc;
  bad["collectives"][0]["group_ranks"][1] = -3;
  EXPECT_EQ(error_for(bad),
            "run.json: collectives[0].group_ranks[1]: expected a whole number "
            "from 0 to 2147483647, got -3");
  bad = doc;
  bad["collectives"][0]["bytes"] = 1.5;
  EXPECT_EQ(error_for(bad),
            "run.json: collectives[0].bytes: expected a whole number from 0 to "
            "9223372036854775807, got 1.5");
  bad = doc;
  bad["swimlane"]["lanes"][1]["intervals"][0]["activity"] = "sleep";
  EXPECT_EQ(error_for(bad),
            "run.json: swimlane.lanes[1].intervals[0].activity: expected one of "
            "compute, communication, memory, got \"sleep\"");
  bad = doc;
  bad["stragglers"][0] = 7;
  EXPECT_EQ(error_for(bad), "run.json: stragglers[0]: expected an object, got 7");
  bad = doc;
  bad["notes"][0] = nullptr;
  EXPECT_EQ(error_for(bad), "run.json: notes[0]: expected a string, got null");
  bad = doc;
  bad.erase("swimlane");
  EXPECT_EQ(error_for(bad), "run.json: swimlane: missing");
  bad = doc;
  bad["world_size"] = "four";
  EXPECT_EQ(error_for(bad),
            "run.json: world_size: expected a whole number from -1 to 2147483647, got \"four\"");
}

TEST(StepJson, EveryProblemInOnePass) {
  json bad = step_to_json(sample());
  bad["ranks"][0]["steps"][1]["idle_us"] = true;
  bad["ranks"][2]["rank"] = -2;
  bad["collectives"][3]["name"] = 1;
  bad["plan_source"] = nullptr;
  EXPECT_EQ(error_for(bad),
            "run.json: ranks[0].steps[1].idle_us: expected a number, got true\n"
            "run.json: ranks[2].rank: expected a whole number from -1 to 2147483647, got -2\n"
            "run.json: collectives[3].name: expected a string, got 1\n"
            "run.json: plan_source: expected a string, got null");
}

TEST(StepJson, OtherSchemaRefused) {
  json doc = step_to_json(sample());
  doc["schema"] = "plumb.comm/1";
  EXPECT_EQ(error_for(doc),
            "run.json: schema 'plumb.comm/1' is not a step record; expected "
            "plumb.step/1 (plumb step --json)");
  EXPECT_EQ(error_for(json::array()),
            "run.json: schema '' is not a step record; expected "
            "plumb.step/1 (plumb step --json)");
}

// ---- Console summary ---------------------------------------------------------------------------

TEST(StepConsoleReporter, Golden) {
  std::ostringstream out;
  StepConsoleReporter().report(sample(), out);
  expect_golden("step_console.txt", out.str());
}

TEST(StepConsoleReporter, FitsIn100Columns) {
  std::ostringstream out;
  StepConsoleReporter().report(sample(), out);
  for (const std::string& line : lines_of(out.str())) EXPECT_LE(columns(line), 100u) << line;
}

TEST(StepConsoleReporter, SlowestRankTopFiveAndTheBaselineSentence) {
  std::ostringstream out;
  StepConsoleReporter().report(sample(), out);
  const std::string text = out.str();
  EXPECT_TRUE(has(text, "step 5 · slowest rank 1: 120.000 ms\n"));
  EXPECT_TRUE(has(text, "step 6 · slowest rank 2: 105.000 ms\n"));
  // 40 ms of 120 ms exposed.
  EXPECT_TRUE(has(text, "    exposed communication       40.000 ms   33.3%\n"));
  // Step 5 has six exposed collectives: the five largest are listed, the reduce (0.25 ms) not.
  EXPECT_EQ(count(text, "    broadcast "), 1u);
  EXPECT_EQ(count(text, "    reduce "), 0u);
  EXPECT_TRUE(has(text,
                  "  reducescatter 64 MiB on group dp(0,1,2,3) ran at 35% of its baseline\n"
                  "    (45.26 of 129.30 GB/s on layer dp)\n"));
  EXPECT_TRUE(has(text, "  straggler: rank 1 — the others waited 6.500 ms for it\n"));
  EXPECT_TRUE(
      has(text, "whole trace: the others waited 6.500 ms for rank 1, 5.000 ms for rank 2\n"));
  EXPECT_TRUE(has(text, "    compute                   60.000 ms    50.000 ms    1.20x\n"));
}

TEST(StepConsoleReporter, NoStragglerNoCollective) {
  step::StepResult r = sample();
  r.collectives.clear();
  r.stragglers.clear();
  r.plan.clear();
  r.notes.clear();
  std::ostringstream out;
  StepConsoleReporter().report(r, out);
  EXPECT_EQ(count(out.str(), "  no exposed collective in this step\n"), 2u);
  EXPECT_EQ(count(out.str(), "  straggler: none found (no collective matched across ranks)\n"), 2u);
  EXPECT_FALSE(has(out.str(), "whole trace"));
  EXPECT_FALSE(has(out.str(), "against the plan"));
  EXPECT_FALSE(has(out.str(), "notes:"));
}

TEST(StepConsoleReporter, GroupLabels) {
  EXPECT_EQ(group_label("dp", {0, 1, 2, 3}), "dp(0,1,2,3)");
  EXPECT_EQ(group_label("dp", {0, 8, 16, 24, 32}), "dp(0,8,..,32)");
  EXPECT_EQ(group_label("", {4, 5}), "ranks(4,5)");
  EXPECT_EQ(group_label("hccl_world", {}), "hccl_world");
  EXPECT_EQ(group_label("", {}), "all ranks");
  // Ids a profiler made up name no role: the group is named by its ranks, or "world".
  EXPECT_EQ(group_label("17522688603477080586", {0, 1, 2, 3, 4, 5, 6, 7}), "ranks(0,1,..,7)");
  EXPECT_EQ(group_label("17522688603477080586", {0, 1, 2, 3, 4, 5, 6, 7}, 8), "world(0,1,..,7)");
  EXPECT_EQ(group_label("3", {0, 2}, 4), "ranks(0,2)");
  EXPECT_EQ(group_label("10.0.0.1%eth0_60000_0_1712345678", {1, 0}, 2), "world(1,0)");
  EXPECT_EQ(group_label("a94a8fe5ccb19ba61c4c0873d391e987982fbbd3", {}), "all ranks");
  EXPECT_EQ(group_label("default_pg", {0, 1}, 2), "default_pg(0,1)");
  EXPECT_EQ(group_label("dp", {0, 1}, 2), "dp(0,1)");
  EXPECT_EQ(step_ms(1234.5), "1.234 ms");  // round half to even at the microsecond
  EXPECT_EQ(step_ms(step::kNaN), "?");
}

// ---- CSV ---------------------------------------------------------------------------------------

TEST(StepCsvReporter, Golden) {
  std::ostringstream out;
  StepCsvReporter().report(sample(), out);
  expect_golden("step.csv", out.str());
}

// The header is msprof-analyze's cluster_step_trace_time.csv header, with Preparing (its
// per-rank step_trace_time.csv's last column) after it.
TEST(StepCsvReporter, HeaderIsMsprofAnalyzes) {
  const std::string cluster = lines_of(test::read_file(
      PLUMB_TEST_FIXTURES
      "/traces/ascend/msprof-analyze-resources/cluster_step_trace_time_8rank.csv"))[0];
  EXPECT_EQ(std::string(kStepCsvHeader), cluster + ",Preparing");
  std::ostringstream out;
  StepCsvReporter().report(sample(), out);
  EXPECT_EQ(lines_of(out.str())[0], kStepCsvHeader);
}

// One row per rank and step, no stage row: msprof-analyze writes stage rows only for runs with
// pipeline-parallel groups (none on the two Ascend fixtures, run from source at commit 8399c1cd).
TEST(StepCsvReporter, RowsOfTheWorkedExample) {
  std::ostringstream out;
  step::StepResult r = sample();
  step::StepBreakdown& s = r.ranks[1].steps[0];
  s.preparing_us = 1500;
  s.free_us = 16000;
  s.bubble_us = 2500;
  s.stage_us = 60000 + 40000 + 16000 - 2500;
  StepCsvReporter().report(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 1u + 2 * 3);
  // Rank 1, step 5: Stage = Computing 60000 + Comm(Not Overlapped) 40000 + Free 16000 − Bubble
  // 2500; Comm(Not Overlapped and Exclude Receive) = 40000 − Bubble.
  EXPECT_EQ(lines[2],
            "5,rank,1,60000.0,40000.0,5000.0,45000.0,16000.0,113500.0,2500.0,37500.0,1500.0");
  EXPECT_EQ(lines[4], "6,rank,0,60000.0,10000.0,10000.0,20000.0,20000.0,90000.0,,10000.0,");
}

TEST(StepCsvReporter, UnknownFiguresAreEmptyCells) {
  step::StepResult r = sample();
  r.ranks[2].steps[0].compute_us = step::kNaN;
  for (step::RankSteps& rank : r.ranks) rank.steps[0].overlapped_us = step::kNaN;
  std::ostringstream out;
  StepCsvReporter().report(r, out);
  const std::vector<std::string> lines = lines_of(out.str());
  EXPECT_EQ(lines[3], "5,rank,2,,25000.0,,30000.0,24000.25,110000.5,,25000.0,");
}

// ---- CSV against msprof-analyze on the real Ascend fixtures ------------------------------------
//
// msprof-analyze run from source (github.com/Ascend/msprof-analyze, commit 8399c1cd:
// `python3 -m msprof_analyze.cluster_analyse.cluster_analysis -d <copy of the fixture> -o <out>`,
// Debian's python3-pandas 1.5.3 and numpy 1.24.2; bench/step_peers.py reruns it) on
// tests/fixtures/traces/ascend/pt-level1-2rank-{text,db}. Its per-rank rows are torch_npu's
// step_trace_time, copied: text from cluster_step_trace_time.csv, db from the
// ClusterStepTraceTime table of cluster_analysis.db. Columns Computing to Preparing.
struct MsprofRow {
  int rank;
  std::vector<double> columns;
};

const MsprofRow kMsprofText[] = {
    {0, {8873.756000000001, 101963.203, 4028.6750000000175, 105991.87800000001, 25744.050000000003,
         136581.0, 0.0, 101963.203, 17902.5}},
    {1, {8878.295000000006, 96359.047, 4016.2390000000014, 100375.28600000001, 26675.27399999998,
         131912.5, 0.0, 96359.047, 20433.25}},
};
const MsprofRow kMsprofDb[] = {
    {0, {8903.431, 98071.947, 4036.153, 102108.1, 25258.144, 132233.522, 0, 98071.947, 18055.693}},
    {1, {8915.634, 94556.05, 4034.14, 98590.19, 25840.499, 129312.183, 0, 94556.05, 17512.827}},
};

// plumb's CSV rows of one fixture: per rank, the numbers after Step,Type,Index.
std::vector<std::vector<double>> plumb_rows(const std::string& fixture, bool db) {
  std::vector<step::RankTrace> traces;
  for (int rank : {0, 1}) {
    const std::string dir = std::string(PLUMB_TEST_FIXTURES) + "/traces/ascend/" + fixture +
                            "/rank" + std::to_string(rank) + "_ascend_pt";
    traces.push_back(db ? step::read_ascend_db(dir, {}) : step::read_ascend_text(dir, {}));
  }
  std::ostringstream out;
  StepCsvReporter().report(step::analyze(std::move(traces), {}), out);
  std::vector<std::vector<double>> rows;
  const std::vector<std::string> lines = lines_of(out.str());
  for (size_t i = 1; i < lines.size(); ++i) {
    std::istringstream cells(lines[i]);
    std::vector<double> numbers;
    int cell = 0;
    for (std::string text; std::getline(cells, text, ','); ++cell) {
      if (cell >= 3) numbers.push_back(std::stod(text));
    }
    rows.push_back(numbers);
  }
  return rows;
}

// The SQLite export holds integer ns, and both tools divide the same sums by 1000: equal doubles.
TEST(StepCsvAgreesWithMsprofAnalyze, DbExportExactly) {
  const std::vector<std::vector<double>> rows = plumb_rows("pt-level1-2rank-db", true);
  ASSERT_EQ(rows.size(), 2u);
  for (const MsprofRow& expected : kMsprofDb) {
    SCOPED_TRACE(expected.rank);
    ASSERT_EQ(rows[expected.rank].size(), expected.columns.size());
    for (size_t c = 0; c < expected.columns.size(); ++c) {
      EXPECT_DOUBLE_EQ(rows[expected.rank][c], expected.columns[c]) << "column " << c;
    }
  }
}

// The text export's times are epoch µs that torch_npu holds as doubles: near 1.7e15 µs (between
// 2^50 and 2^51) a double steps by 2^-2 = 0.25 µs, so a span between two of them (Stage,
// Preparing) is off by up to 0.25 µs; plumb reads the decimal text exactly.
TEST(StepCsvAgreesWithMsprofAnalyze, TextExportWithinItsRounding) {
  constexpr double kTextRoundingUs = 0.25;
  const std::vector<std::vector<double>> rows = plumb_rows("pt-level1-2rank-text", false);
  ASSERT_EQ(rows.size(), 2u);
  for (const MsprofRow& expected : kMsprofText) {
    SCOPED_TRACE(expected.rank);
    ASSERT_EQ(rows[expected.rank].size(), expected.columns.size());
    for (size_t c = 0; c < expected.columns.size(); ++c) {
      EXPECT_NEAR(rows[expected.rank][c], expected.columns[c], kTextRoundingUs) << "column " << c;
    }
  }
}

TEST(StepCsvReporter, NumbersAsPythonWritesThem) {
  EXPECT_EQ(python_float(136581.0), "136581.0");
  EXPECT_EQ(python_float(8873.756000000001), "8873.756000000001");
  EXPECT_EQ(python_float(0.1), "0.1");
  EXPECT_EQ(python_float(0), "0.0");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(step::kNaN), "");
}

// ---- HTML --------------------------------------------------------------------------------------

std::string render(const step::StepResult& r) {
  std::ostringstream out;
  write_step_html(r, out);
  return out.str();
}

TEST(StepHtml, BarsLanesAndTables) {
  const std::string html = render(sample());
  EXPECT_EQ(count(html, "<g class=\"bar\">"), 6u);   // 3 ranks × 2 steps
  EXPECT_EQ(count(html, "<g class=\"lane\">"), 3u);  // the swimlane step's ranks
  EXPECT_EQ(count(html, "<svg class=\"bars\""), 1u);
  EXPECT_EQ(count(html, "<svg class=\"lanes\""), 1u);
  EXPECT_TRUE(has(html, "<h2>Swimlane of step 5</h2>"));
  EXPECT_TRUE(has(html,
                  "waited in all, over the 6 of 8 collective instances matched across the ranks "
                  "(1 did not line up: left out, see the notes).</p>"));
  // Rank 2's two compute intervals 0.25 µs apart are one piece.
  EXPECT_TRUE(has(html, "<title>rank 2 · compute 0.500–61.500 ms (2 intervals)</title>"));
  // Each rank's own step behind its tracks, on the swimlane's clock.
  EXPECT_TRUE(has(html, "<title>rank 0 · step 0.000–100.000 ms</title>"));
  EXPECT_TRUE(has(html, "<title>rank 1 · step 1.000–121.000 ms</title>"));
  EXPECT_TRUE(has(html, "<title>rank 2 · step 0.500–110.501 ms</title>"));
  EXPECT_TRUE(has(html,
                  "<title>step 5 · rank 1: 120.000 ms\ncompute 60.000 ms (overlapped with "
                  "communication 5.000 ms)\nexposed communication 40.000 ms\nmemory "
                  "2.500 ms\nidle 17.500 ms</title>"));
  EXPECT_EQ(count(html, "<table class=\"rows stragglers\">"), 1u);
  EXPECT_TRUE(has(html,
                  "<tr><td>whole trace</td><td class=\"num\">1</td><td class=\"num\">6.500 "
                  "ms</td></tr>"));
  // Slow collectives: two have a baseline, the lowest share first.
  EXPECT_TRUE(
      has(html, "2 of 7 collective instances: the lowest busbw against the baseline first"));
  EXPECT_LT(html.find("<td>reducescatter</td>"), html.find("<td>alltoall</td>"));
  EXPECT_TRUE(has(html, "<td class=\"num\">35%</td>"));
  EXPECT_TRUE(has(html,
                  "<tr><td>compute</td><td class=\"num\">60.000 ms</td><td class=\"num\">"
                  "50.000 ms</td><td class=\"num\">1.20</td></tr>"));
  EXPECT_TRUE(has(html, "<li>the set holds ranks 0, 1, 2 of a world of 4"));
}

TEST(StepHtml, WithoutBaselineTheMostExposedCollectives) {
  step::StepResult r = sample();
  for (step::CollectiveInstance& c : r.collectives) c.baseline_busbw_gbps = step::kNaN;
  const std::string html = render(r);
  EXPECT_TRUE(has(html, "7 of 7 collective instances: the most exposed first"));
  EXPECT_LT(html.find("<td>reducescatter</td>"), html.find("<td>alltoall</td>"));
  EXPECT_LT(html.find("<td>alltoall</td>"), html.find("<td>allgather</td>"));
}

// "ranks seen" is the group's ranks the set holds, of all of them: never "2/0" when the trace
// names no ranks for the group.
TEST(StepHtml, RanksSeenOfTheGroupOrTheWorld) {
  step::StepResult r = sample();
  r.world_size = 4;
  r.collectives[0].group = "17522688603477080586";
  r.collectives[0].group_ranks = {0, 1, 2, 3};
  r.collectives[0].ranks_seen = 3;
  EXPECT_TRUE(has(render(r),
                  "title=\"process group 17522688603477080586 · 4 ranks: 0,1,2,3\">world(0,1,2,3)"
                  "<br><span class=\"pg\">pg 17522688603477080586</span></td><td class=\"num\">"
                  "3 of 4</td>"));
  r.collectives[0].group.clear();
  r.collectives[0].group_ranks.clear();
  EXPECT_TRUE(has(render(r), ">all ranks</td><td class=\"num\">3 of 4</td>"));
  r.world_size = -1;
  const std::string html = render(r);
  EXPECT_TRUE(has(html, ">all ranks</td><td class=\"num\">3 (group size unknown)</td>"));
  EXPECT_FALSE(has(html, "/0</td>"));
}

TEST(StepHtml, EveryTraceStringEscaped) {
  step::StepResult r = sample();
  r.ranks[0].source = "<script>alert(1)</script>.json";
  r.ranks[0].format = "k&ineto";
  r.collectives[0].group = "dp\"><b>";
  r.collectives[0].name = "<img src=x>";
  r.collectives[0].baseline_layer = "<i>";
  r.notes = {"<note>"};
  r.baseline = "#1 <b>";
  r.plan_source = "<plan>.json";
  r.plan[0].component = "<c>";
  const std::string html = render(r);
  EXPECT_FALSE(has(html, "<script>"));
  EXPECT_FALSE(has(html, "<img"));
  EXPECT_FALSE(has(html, "<b>\""));
  EXPECT_FALSE(has(html, "<note>"));
  EXPECT_FALSE(has(html, "<plan>"));
  EXPECT_FALSE(has(html, "<i>"));
  EXPECT_FALSE(has(html, "<c>"));
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;.json"));
  EXPECT_TRUE(has(html, "k&amp;ineto"));
  EXPECT_TRUE(has(html, "dp&quot;&gt;&lt;b&gt;(0,1,2,3)"));
}

TEST(StepHtml, SelfContainedAndDeterministic) {
  const std::string html = render(sample());
  EXPECT_EQ(html, render(sample()));
  EXPECT_FALSE(has(html, "http://"));
  EXPECT_FALSE(has(html, "https://"));
  EXPECT_FALSE(has(html, "<script"));
  EXPECT_TRUE(has(html, "</html>\n"));
}

TEST(StepHtml, EmptyResult) {
  const std::string html = render(step::StepResult{});
  EXPECT_EQ(count(html, "<g class=\"bar\">"), 0u);
  EXPECT_TRUE(has(html, "No step was found in the traces."));
  EXPECT_TRUE(has(html, "No swimlane: no step was drawn."));
  EXPECT_TRUE(has(html, "No straggler: no collective was matched across ranks."));
  EXPECT_TRUE(has(html, "</html>\n"));
}

TEST(StepHtml, AtMostMaxBars) {
  step::StepResult r;
  for (int rank = 0; rank < 100; ++rank) {
    step::RankSteps steps{rank, "r.json", "kineto", {}};
    for (int s = 0; s < 8; ++s) steps.steps.push_back(breakdown(s, 1000, 500, 200, 100, 0));
    r.ranks.push_back(steps);
  }
  const std::string html = render(r);
  EXPECT_EQ(count(html, "<g class=\"bar\">"), 500u);  // 5 whole steps of 100 ranks ≤ 512
  EXPECT_TRUE(has(html, "3 more steps are not drawn (at most 512 bars)"));
}

}  // namespace
}  // namespace plumb::report
