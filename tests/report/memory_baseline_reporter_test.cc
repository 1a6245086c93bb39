// The memory baseline's console table and JSON (the `memory` part of a baseline set, issue 29
// item 4): exact output for two ranks, one leaking, with a checkpoint saved and loaded; every
// figure that could not be taken is null.
#include "report/memory_baseline_reporter.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/error.h"
#include "common/units.h"
#include "mem/train_memory.h"

namespace plumb::report {
namespace {

constexpr double kLevel = 4.0 * kGiB;

std::string line(int64_t step, const std::string& rank, double allocated, const std::string& extra) {
  return fmt::format(R"({{"schema":"plumb.train-events/1","step":{},"step_seconds":1,"rank":{},)"
                     R"("memory":{{"allocated_bytes":{:.0f},"reserved_bytes":{:.0f}}}{}}})",
                     step, rank, allocated, allocated + kGiB, extra) + "\n";
}

// Rank 0 flat at 4 GiB, rank 1 leaking 8 MiB per step from 4 GiB; a save finished before step 5
// and a load before step 6. No warm-up (--warmup 0), so every figure is hand-checked: rank 1's
// median of 4 GiB + {8..64} MiB is 4 GiB + 36 MiB.
mem::MemoryBaseline example() {
  std::string text;
  for (int step = 1; step <= 8; ++step) {
    const std::string mark = step == 5 ? R"(,"checkpoint":"saved")"
                             : step == 6 ? R"(,"checkpoint":"loaded")" : "";
    text += line(step, "0", kLevel, mark);
    text += line(step, "1", kLevel + step * 8 * kMiB, mark);
  }
  return mem::memory_baseline(mem::parse_memory_series(text, "run.jsonl"), 0);
}

TEST(MemoryBaselineReporter, ConsoleTable) {
  std::ostringstream out;
  print_memory_baseline(example(), out);
  EXPECT_EQ(out.str(),
            "# plumb mem creep · run.jsonl · 2 rank(s) · 16 line(s), 0 without memory · warm-up from --warmup\n"
            "rank      steps  warm-up     settled    reserved        peak  creep per step (95% CI)            verdict\n"
            "0             8        0       4 GiB       5 GiB       4 GiB  +0 B (+0 B to +0 B)                flat\n"
            "1             8        0     4.0 GiB     5.0 GiB     4.1 GiB  +8 MiB (+8 MiB to +8 MiB)          LEAK\n"
            "worst      rank 1: +8 MiB per step (95% CI +8 MiB to +8 MiB) over 8 steps: LEAK\n"
            "checkpoint rank 1: 4.0 GiB before the save · 4.0 GiB after it (step 5) · 4.0 GiB after the load (step 6) · tolerance 41.3 MiB: pass\n");
}

TEST(MemoryBaselineReporter, JsonHasTheIssuesShape) {
  const nlohmann::json j = memory_baseline_json(example());
  ASSERT_EQ(j["ranks"].size(), 2u);
  const nlohmann::json& leak = j["ranks"][1];
  EXPECT_EQ(leak["rank"], "1");
  EXPECT_EQ(leak["settled_bytes"], kLevel + 36 * kMiB);
  EXPECT_EQ(leak["settled_reserved_bytes"], kLevel + kGiB + 36 * kMiB);
  EXPECT_EQ(leak["peak_bytes"], kLevel + 64 * kMiB);
  EXPECT_EQ(leak["creep_bytes_per_step"], 8.0 * kMiB);
  EXPECT_EQ(leak["creep_ci95_bytes_per_step"], nlohmann::json::array({8.0 * kMiB, 8.0 * kMiB}));
  EXPECT_EQ(leak["verdict"], "leak");
  EXPECT_EQ(leak["checkpoint"]["verdict"], "pass");
  EXPECT_EQ(j["worst"]["rank"], "1");
  EXPECT_FALSE(j["worst"].contains("checkpoint"));
  const nlohmann::json& c = j["checkpoint"];
  EXPECT_EQ(c["rank"], "1");
  EXPECT_EQ(c["before_save_bytes"], kLevel + 32 * kMiB);
  EXPECT_EQ(c["after_save_bytes"], kLevel + 40 * kMiB);
  EXPECT_EQ(c["after_load_bytes"], kLevel + 48 * kMiB);
  EXPECT_EQ(c["save_step"], 5);
  EXPECT_EQ(c["load_step"], 6);
  EXPECT_EQ(c["verdict"], "pass");
  EXPECT_TRUE(c["reason"].is_null());
  EXPECT_EQ(j["warmup"], "option");
}

// Too few steps: the creep and its interval are null with the verdict saying so, never 0.
TEST(MemoryBaselineReporter, WhatCannotBeJudgedIsNull) {
  const std::string text = line(1, "0", kLevel, "") + line(2, "0", kLevel, "");
  const nlohmann::json j =
      memory_baseline_json(mem::memory_baseline(mem::parse_memory_series(text, "run.jsonl"), 0));
  EXPECT_EQ(j["ranks"][0]["verdict"], "too few steps");
  EXPECT_TRUE(j["ranks"][0]["creep_bytes_per_step"].is_null());
  EXPECT_TRUE(j["ranks"][0]["creep_ci95_bytes_per_step"].is_null());
  EXPECT_TRUE(j["worst"].is_null());
  EXPECT_EQ(j["checkpoint"]["verdict"], "missing");
  EXPECT_TRUE(j["checkpoint"]["before_save_bytes"].is_null());
  EXPECT_TRUE(j["checkpoint"]["tolerance_bytes"].is_null());
  std::ostringstream out;
  print_memory_baseline(mem::memory_baseline(mem::parse_memory_series(text, "run.jsonl"), 0), out);
  EXPECT_NE(out.str().find("too few steps to judge (2 after the warm-up, 4 distinct needed)"),
            std::string::npos) << out.str();
  EXPECT_NE(out.str().find("worst      none: no rank has 4 steps after its warm-up\n"),
            std::string::npos) << out.str();
  EXPECT_NE(out.str().find("checkpoint rank 0: missing (no line marks a checkpoint save or load "
                           "(\"checkpoint\": \"saved\" or \"loaded\"))\n"),
            std::string::npos) << out.str();
}

// One rank decides the check; a rank it could not be taken on is named under it.
TEST(MemoryBaselineReporter, RanksNotCheckedAreNamed) {
  std::string text;
  for (int step = 1; step <= 6; ++step) {
    text += line(step, "0", kLevel, step == 4 ? R"(,"checkpoint":"saved")"
                                    : step == 5 ? R"(,"checkpoint":"loaded")" : "");
    text += line(step, "1", kLevel, "");
  }
  std::ostringstream out;
  print_memory_baseline(mem::memory_baseline(mem::parse_memory_series(text, "run.jsonl"), 0), out);
  EXPECT_NE(out.str().find(": pass\nnote       checkpoint not checked on rank(s) 1: no line marks a "
                           "checkpoint save or load (\"checkpoint\": \"saved\" or \"loaded\")\n"),
            std::string::npos) << out.str();
}

// The part read back prints and writes as the baseline it was made from (a stored set is shown
// and compared from its JSON); the per-step minima are not kept.
TEST(MemoryBaselineReporter, ThePartReadsBackAsItWasWritten) {
  const mem::MemoryBaseline b = example();
  const nlohmann::json j = memory_baseline_json(b);
  const mem::MemoryBaseline back = memory_baseline_from_json(j, "baseline 4");
  EXPECT_EQ(memory_baseline_json(back), j);
  std::ostringstream a, c;
  print_memory_baseline(b, a);
  print_memory_baseline(back, c);
  EXPECT_EQ(c.str(), a.str());
  ASSERT_TRUE(back.worst.has_value());
  EXPECT_EQ(back.ranks[*back.worst].rank, "1");
  EXPECT_DOUBLE_EQ(back.checkpoint.departure_bytes, b.checkpoint.departure_bytes);
  EXPECT_TRUE(back.leaks());
}

TEST(MemoryBaselineReporter, ABadPartNamesItsPath) {
  const auto error = [](const nlohmann::json& j) {
    try {
      memory_baseline_from_json(j, "baseline 4");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  nlohmann::json j = memory_baseline_json(example());
  j["ranks"][1]["settled_bytes"] = "x";
  EXPECT_EQ(error(j), "baseline 4: memory.ranks[1].settled_bytes: expected a number, got \"x\"");
  j = memory_baseline_json(example());
  j["ranks"][0]["verdict"] = "leaky";
  EXPECT_EQ(error(j), "baseline 4: memory.ranks[0].verdict: expected one of flat, leak, too few "
                      "steps, got \"leaky\"");
  j = memory_baseline_json(example());
  j["worst"]["rank"] = "7";
  EXPECT_EQ(error(j), "baseline 4: memory.worst.rank: names rank \"7\", which ranks[] does not hold");
  j = memory_baseline_json(example());
  j["checkpoint"]["verdict"] = nullptr;
  EXPECT_EQ(error(j), "baseline 4: memory.checkpoint.verdict: expected a string, got null");
  EXPECT_EQ(error(nlohmann::json::array()), "baseline 4: memory: expected an object, got []");
}

}  // namespace
}  // namespace plumb::report
