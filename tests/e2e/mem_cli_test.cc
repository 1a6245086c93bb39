// plumb mem analyze end to end: the console and plumb.mem/1 for a leak and a fragmented OOM, and
// one line with exit 2 for a file that is not a trace.
#include <gtest/gtest.h>
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
      {kMem + "healthy.pickle --step-regex '('", "plumb: error: --step-regex '(': not a valid regex"},
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

}  // namespace
}  // namespace plumb::test
