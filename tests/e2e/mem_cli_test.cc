// plumb mem analyze end to end: the console and plumb.mem/1 for a leak and a fragmented OOM, and
// for periodic memory_stats() dumps; one line with exit 2 for a file that is not a trace or whose
// dumps are bad.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;
const std::string kMem = std::string(PLUMB_TEST_FIXTURES) + "/mem/";

TEST(MemCli, LeakVerdictOnTheConsole) {
  const test::Run r = run_command(kPlumb + " mem analyze " + kMem + "leak.pickle");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# steps: 40 step(s) detected from the repeating allocations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("creep      +3 MiB per step (95% CI +3 MiB to +3 MiB) over 39 steps of the per-step minimum: LEAK"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("grew       +3 MiB per step, 39 live allocations at the last step: training_log "
                       "(megatron/training/training.py:1275) < train (megatron/training/training.py:1540)\n"),
            std::string::npos) << r.out;
  const test::Run j = run_command(kPlumb + " mem analyze " + kMem + "leak.pickle --json -");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json sites = nlohmann::json::parse(j.out)["creep_sites"];
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0]["bytes_per_step"], 3145728.0);
  EXPECT_EQ(sites[0]["allocations_live"], 39);
}

TEST(MemCli, FragmentedOomInJson) {
  const test::Run r = run_command(kPlumb + " mem analyze " + kMem + "fragmented_oom.pickle --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.mem/1");
  EXPECT_EQ(j["oom"]["cause"], "fragmentation");
  EXPECT_EQ(j["oom"]["requested_bytes"], 536870912);
  EXPECT_EQ(j["oom"]["free_bytes"], 2359197696);
  EXPECT_EQ(j["oom"]["largest_free_block_bytes"], 33554432);
  for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "fragmentation",
                          "creep_bytes_per_step", "creep_verdict", "categories"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["peak_allocated_bytes"], 83751960576);
}

TEST(MemCli, StepRegexAndBadInput) {
  const test::Run steps = run_command(kPlumb + " mem analyze " + kMem + "healthy.pickle --step-regex get_batch");
  ASSERT_EQ(steps.exit_code, 0) << steps.err;
  EXPECT_NE(steps.out.find("# steps: 40 step(s) from --step-regex 'get_batch'"), std::string::npos) << steps.out;
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {kMem + "answers.json", "plumb: error: " + kMem + "answers.json: not a memory snapshot: expected a dict with "
                              "'segments' and 'device_traces' (torch.cuda.memory._snapshot())\n"},
      {std::string(PLUMB_TEST_FIXTURES) + "/pickle/set_p4.pickle",
       "plumb: error: " + std::string(PLUMB_TEST_FIXTURES) + "/pickle/set_p4.pickle: byte 22: opcode EMPTY_SET"},
      {kMem + "healthy.pickle --step-regex '('",
       "plumb: error: --step-regex '(': not a valid regular expression (missing ): ()\n"},
      // A lookahead std::regex took and RE2 does not: refused at start with RE2's reason.
      {kMem + "healthy.pickle --step-regex '(?=forward)'",
       "plumb: error: --step-regex '(?=forward)': not a valid regular expression (invalid perl "
       "operator: (?=)\n"},
      {kMem + "healthy.pickle --device 3",
       "plumb: error: " + kMem + "healthy.pickle: no trace for device 3 (1 device(s) in the snapshot)\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = run_command(kPlumb + " mem analyze " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(MemCli, MemoryStatsDumpsInJsonAndOnTheConsole) {
  const test::Run r = run_command(kPlumb + " mem analyze " + kMem + "memory_stats.jsonl --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.mem/1");
  EXPECT_EQ(j["input"], "memory_stats");
  EXPECT_EQ(j["dumps"], 100);
  EXPECT_EQ(j["peak_allocated_bytes"], 7084179456);
  EXPECT_EQ(j["peak_reserved_bytes"], 7084179456);
  EXPECT_EQ(j["fragmentation"], 0.0);
  EXPECT_NEAR(j["creep_bytes_per_step"].get<double>(), 1048576.0, 1.0);
  EXPECT_EQ(j["creep_verdict"], "leak");
  EXPECT_EQ(j["num_alloc_retries"], 0);
  EXPECT_EQ(j["num_ooms"], 0);
  ASSERT_EQ(j["timeline"].size(), 100u);
  EXPECT_EQ(j["timeline"][0]["allocated_bytes"], 6443499520);
  EXPECT_EQ(j["timeline"][0]["allocated_peak_bytes"], 6980370432);
  EXPECT_EQ(j["timeline"][0]["reserved_bytes"], 6981419008);
  EXPECT_EQ(j["timeline"][99]["step"], 100);
  EXPECT_EQ(j["timeline"][99]["allocated_bytes"], 6547308544);

  const test::Run console = run_command(kPlumb + " mem analyze " + kMem + "memory_stats.jsonl");
  ASSERT_EQ(console.exit_code, 0) << console.err;
  for (const char* line : {
           " (memory_stats() dumps) · 100 dumps, steps 1 to 100\n",
           "\ncreep      +1 MiB per step (95% CI +1 MiB to +1 MiB) over 100 dumps of "
           "allocated_bytes.all.current: LEAK\n",
           "\nretries    none (num_alloc_retries never rose)\n",
           "\noom        none (num_ooms never rose)\n",
           "\ntimeline   10 of 100 dumps, evenly spaced (--json has every one)\n",
       }) {
    EXPECT_NE(console.out.find(line), std::string::npos) << line << "\n" << console.out;
  }
}

TEST(MemCli, MemoryStatsBadInputExitsTwo) {
  const std::string dir = temp_dir("mem_stats_bad");
  write_file(dir + "/bad.jsonl",
             "{\"allocated_bytes.all.current\": 1, \"allocated_bytes.all.peak\": 1, "
             "\"active_bytes.all.current\": 1, \"active_bytes.all.peak\": 1, "
             "\"reserved_bytes.all.current\": -2, \"reserved_bytes.all.peak\": 2, "
             "\"inactive_split_bytes.all.current\": 0, \"segment.all.current\": 1, "
             "\"num_alloc_retries\": 0, \"num_ooms\": 0}\n");
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {dir + "/bad.jsonl",
       "plumb: error: " + dir +
           "/bad.jsonl:1: 'reserved_bytes.all.current' must be a non-negative integer, got -2\n"},
      {kMem + "memory_stats.jsonl --step-regex get_batch",
       "plumb: error: --step-regex: " + kMem + "memory_stats.jsonl holds memory_stats() dumps (each dump is one "
       "step, no frames); it applies to allocator traces\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = run_command(kPlumb + " mem analyze " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
}

// plumb mem replay: the recorded policy reproduces the trace, expandable segments would have
// served the fragmented OOM, and --capacity gates.
TEST(MemCli, ReplayComparesPoliciesOnTheFragmentedOom) {
  const test::Run r = run_command(kPlumb + " mem replay " + kMem + "fragmented_oom.pickle");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {
           "capacity   78.2 GiB (from the trace's oom: reserved + device_free)\n",
           "check      'as recorded' reproduces the recorded reserved bytes at all 266 allocations and frees\n",
           "verdict    at 78.2 GiB the recorded policy runs out; these would have run: expandable, "
           "max-split-128, best-fit\n",
       }) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  const test::Run j = run_command(kPlumb + " mem replay " + kMem +
                                  "fragmented_oom.pickle --policies expandable,pytorch --json -");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["schema"], "plumb.mem-replay/1");
  EXPECT_EQ(doc["capacity_bytes"], 83963674624);
  EXPECT_EQ(doc["check"]["mismatches"], 0);
  ASSERT_EQ(doc["policies"].size(), 3u);
  EXPECT_EQ(doc["policies"][0]["name"], "as recorded");
  EXPECT_EQ(doc["policies"][0]["ran_out"], true);
  EXPECT_EQ(doc["policies"][0]["first_failure_event"], 335);
  EXPECT_EQ(doc["policies"][0]["peak_reserved_bytes"], 83753959424);
  EXPECT_EQ(doc["policies"][1]["name"], "expandable");
  EXPECT_EQ(doc["policies"][1]["served_recorded_oom"], true);
  EXPECT_EQ(doc["policies"][2]["ran_out"], true);
}

TEST(MemCli, ReplayCapacityGatesAndBadInput) {
  // leak.pickle peaks at 702 MiB reserved: it fits in 1G, not in 600M.
  EXPECT_EQ(run_command(kPlumb + " mem replay " + kMem + "leak.pickle --policies pytorch --capacity 1G").exit_code, 0);
  const test::Run tight = run_command(kPlumb + " mem replay " + kMem + "leak.pickle --policies best-fit --capacity 600M");
  EXPECT_EQ(tight.exit_code, 1) << tight.out << tight.err;
  EXPECT_NE(tight.out.find("verdict    at 600 MiB every policy runs out"), std::string::npos) << tight.out;
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {kMem + "leak.pickle --policies pytorh",
       "plumb: error: --policies: unknown policy 'pytorh' (did you mean 'pytorch'?); expected one of "
       "pytorch, expandable, max-split-128, roundup-4, torch_npu, best-fit, bucketed\n"},
      {kMem + "leak.pickle --capacity lots", "plumb: error: --capacity"},
      {kMem + "leak.pickle --capacity 0",
       "plumb: error: --capacity 0: give the bytes the allocator may reserve, e.g. 94G\n"},
      {kMem + "memory_stats.jsonl",
       "plumb: error: " + kMem + "memory_stats.jsonl: memory_stats() dumps hold totals, not the "
       "allocation sequence that plumb mem replay needs: give an allocator trace (a snapshot or "
       "plumb.mem-events/1 lines)\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = run_command(kPlumb + " mem replay " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// plumb mem report: one page with the analysis and the policy table; its output checked first.
TEST(MemCli, ReportWritesOnePageWithThePolicies) {
  const std::string dir = temp_dir("mem_report");
  const test::Run r = run_command("cd " + dir + " && " + kPlumb + " mem report " + kMem + "leak.pickle");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "report: plumb-mem-report.html\n");
  const std::string page = read_file(dir + "/plumb-mem-report.html");
  for (const char* text : {"<section id=\"policies\">", "as recorded", "expandable", "best-fit", "LEAK"}) {
    EXPECT_NE(page.find(text), std::string::npos) << text;
  }
  const test::Run bad = run_command(kPlumb + " mem report " + kMem + "leak.pickle -o /nonexistent/dir/x.html");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.substr(0, 43), "plumb: error: -o /nonexistent/dir/x.html: c");
  EXPECT_EQ(bad.out, "");
}

// --timeline: one CSV row per event, the numbers of the timeline (fixtures/mem/README.md).
TEST(MemCli, TimelineCsvHasEveryEvent) {
  const std::string dir = temp_dir("mem_timeline");
  const test::Run r = run_command(kPlumb + " mem analyze " + kMem + "healthy.pickle --timeline " + dir + "/t.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_file(dir + "/t.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "event,action,time_us,step,allocated,active,reserved");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 867);  // a header and 866 events
  // The peak allocated, first at index 38 in step 1; reserved already at its peak.
  EXPECT_NE(csv.find("\n38,alloc,1717171717182000,1,537026560,"), std::string::npos);
  EXPECT_NE(csv.find(",580911104\n865,"), std::string::npos);
}

// The output of `plumb mem analyze ARGS` with the input's name replaced by FILE: the same trace
// read from a file, a FIFO or a pipe must give the same report.
std::string analyzed(const std::string& shell, const std::string& name) {
  const test::Run r = run_command(shell);
  EXPECT_EQ(r.exit_code, 0) << shell << "\n" << r.err;
  std::string out = r.out;
  for (size_t at; (at = out.find(name)) != std::string::npos;) out.replace(at, name.size(), "FILE");
  return out;
}

// A FIFO is read once (it was read to detect the format, then opened again: a hang); the writer
// is a child of the shell; a timeout turns a hang into a failure (exit 124).
TEST(MemCli, AnalyzeReadsAFifoAndAPipeOnce) {
  const std::string dir = temp_dir("mem_fifo");
  write_file(dir + "/events.jsonl",
             "{\"action\": \"alloc\", \"addr\": 4096, \"size\": 1024, \"time_us\": 1}\n"
             "{\"action\": \"free_requested\", \"addr\": 4096, \"size\": 1024, \"time_us\": 2}\n"
             "{\"action\": \"free_completed\", \"addr\": 4096, \"size\": 1024, \"time_us\": 3}\n");
  for (const std::string& file : {kMem + "healthy.pickle", kMem + "healthy.json", dir + "/events.jsonl"}) {
    SCOPED_TRACE(file);
    const std::string direct = analyzed(kPlumb + " mem analyze " + file + " --json -", file);
    const std::string fifo = dir + "/trace.fifo";
    const std::string from_fifo = analyzed(
        "{ rm -f " + fifo + " && mkfifo " + fifo + " && (cat " + file + " > " + fifo + " &) && timeout 30 " +
            kPlumb + " mem analyze " + fifo + " --json -; }",
        fifo);
    EXPECT_EQ(from_fifo, direct);
    const std::string from_stdin =
        analyzed("{ cat " + file + " | timeout 30 " + kPlumb + " mem analyze /dev/stdin --json -; }", "/dev/stdin");
    EXPECT_EQ(from_stdin, direct);
  }
}

TEST(MemCli, ADirectoryOrAnImpossibleTraceExitsTwo) {
  const std::string dir = temp_dir("mem_impossible");
  const test::Run d = run_command(kPlumb + " mem analyze " + dir);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_EQ(d.err, "plumb: error: " + dir + ": is a directory, not a file\n");
  // Endless inputs end in a message at once (they used to be read until memory ran out).
  const test::Run zero = run_command("timeout 30 " + kPlumb + " mem analyze /dev/zero");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "plumb: error: /dev/zero: starts with NUL bytes: not a snapshot, event "
                      "lines or memory_stats() dumps\n");
  const test::Run rules = run_command("timeout 30 " + kPlumb + " mem analyze " +
                                      std::string(PLUMB_TEST_FIXTURES) +
                                      "/mem/leak.pickle --category-rules /dev/zero");
  EXPECT_EQ(rules.exit_code, 2);
  EXPECT_EQ(rules.err, "plumb: error: /dev/zero: starts with NUL bytes; expected a category rules "
                       "file\n");
  // One 1 KiB block freed twice more after its free: once a peak of 3 KiB, now refused.
  write_file(dir + "/twice.jsonl",
             "{\"action\": \"alloc\", \"addr\": 4096, \"size\": 1024}\n"
             "{\"action\": \"free_requested\", \"addr\": 4096, \"size\": 1024}\n"
             "{\"action\": \"free_requested\", \"addr\": 4096, \"size\": 1024}\n"
             "{\"action\": \"free_requested\", \"addr\": 4096, \"size\": 1024}\n");
  for (const char* command : {"analyze", "replay", "report -o -"}) {
    const test::Run r = run_command(kPlumb + " mem " + command + " " + dir + "/twice.jsonl");
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, "plumb: error: " + dir + "/twice.jsonl:3: event 2: free_requested of 0x1000 (1024 bytes): "
                     "event 1 (line 2) freed it already and nothing allocated it since: a block is freed once "
                     "per allocation\n") << command;
    EXPECT_EQ(r.out, "") << command;
  }
}

}  // namespace
}  // namespace plumb::test

namespace plumb::test {
namespace {

TEST(MemCli, MemoryStatsThroughAPipe) {
  const std::string file = std::string(PLUMB_TEST_FIXTURES) + "/mem/memory_stats.jsonl";
  const std::string direct = analyzed(std::string(PLUMB_BIN) + " mem analyze " + file + " --json -", file);
  EXPECT_EQ(analyzed("{ cat " + file + " | timeout 30 " + PLUMB_BIN +
                         " mem analyze /dev/stdin --json -; }",
                     "/dev/stdin"),
            direct);
}

}  // namespace
}  // namespace plumb::test
