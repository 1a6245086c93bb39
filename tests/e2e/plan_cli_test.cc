// plumb plan end to end: the reports issue 4 names (a 1T dense model and DeepSeek-V3 on 16,384
// H100 and on 10,000 Ascend 910C), a layout that cannot fit, the JSON schema, search, scale,
// validate, and one clear line with exit 2 for each kind of bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "baseline/store.h"
#include "support/step_record.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = PLUMB_BIN;

test::Run plan(const std::string& args) { return run_command(kPlumb + " plan " + args); }

void expect_complete_report(const test::Run& r) {
  for (const char* part : {"# plumb plan · ", "layout   tp ", "step     ", " tokens/s · ", "MFU ",
                           "HFU ", "pipeline bubble", "exposed TP communication",
                           "exposed DP / ZeRO communication", "compute waits on communication",
                           "memory per device", "optimizer states", "activations", "total ",
                           "reliability  1.97e-05 failures per device-hour", "goodput "}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

TEST(PlanCli, DenseTrillionAndDeepSeekOnH100And910C) {
  const struct {
    std::string args;
  } cases[] = {
      {"--model megatron-1t --hardware h100-sxm --devices 16384 --tp 8 --pp 32 --vpp 2 --zero 1"},
      {"--model deepseek-v3-671b --hardware h100-sxm --devices 16384 --tp 2 --pp 8 --ep 32 --zero 1"},
      {"--model megatron-1t --hardware ascend-910c --devices 10000 --tp 4 --cp 2 --pp 10 --vpp 4 --zero 2"},
      {"--model deepseek-v3-671b --hardware ascend-910c --devices 10000 --tp 2 --pp 5 --vpp 4 --ep 4 --zero 2"},
  };
  for (const auto& c : cases) {
    const test::Run r = plan(c.args + " --tokens 1e12");
    EXPECT_EQ(r.exit_code, 0) << c.args << "\n" << r.out << r.err;
    expect_complete_report(r);
    EXPECT_NE(r.out.find(": fits ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cost  1e+12 tokens: "), std::string::npos) << r.out;
  }
}

TEST(PlanCli, ALayoutThatCannotFitSaysSoWithTheNumbers) {
  const test::Run r = plan("--model megatron-1t --hardware h100-sxm --devices 64 --tp 8 --pp 8 --zero 0");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find(" of 80.00: DOES NOT FIT ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" GB over)"), std::string::npos) << r.out;
}

TEST(PlanCli, JsonHasTheSchemaFields) {
  const test::Run r = plan("--model llama3-70b --hardware h100-sxm --devices 64 --tp 8 --pp 2 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.plan/1");
  for (const char* key : {"step_time_s", "tokens_per_s", "tflops_per_device", "mfu", "hfu", "fits"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"weights", "grads", "optimizer", "activations", "buffers", "total"}) {
    EXPECT_TRUE(j["memory_bytes"].contains(key)) << key;
  }
  for (const char* key : {"compute", "tp", "cp", "ep", "pp", "bubble", "dp", "optimizer"}) {
    EXPECT_TRUE(j["breakdown_s"].contains(key)) << key;
  }
  double sum = 0;
  for (const auto& [key, value] : j["breakdown_s"].items()) sum += value.get<double>();
  EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-9 * sum);
  EXPECT_EQ(j["layout"]["dp"], 4);
  EXPECT_EQ(j["context"]["devices"], 64);
}

TEST(PlanCli, BadInputIsOneLineAndExitTwo) {
  const std::string dir = temp_dir("plan-bad");
  write_file(dir + "/model.yaml", "name: broken\nlayers: 4\nhidden: [1\n");
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {"--model llama3-7b --hardware h100-sxm",
       "plumb: error: --model: unknown model 'llama3-7b' (did you mean 'llama3-70b'?); expected one of "},
      {"--model llama3-70b --hardware h100",
       "plumb: error: --hardware: unknown hardware 'h100' (did you mean 'h100-sxm'?); expected one of "},
      {"--model llama3-70b --hardware h100-sxm --devices 100 --tp 8 --pp 4",
       "plumb: error: layout for llama3-70b on 100 devices: tp 8 × cp 1 × pp 4 × dp 3 = 96 devices, not 100\n"},
      {"--model llama3-70b --hardware h100-sxm --devices 96 --tp 3",
       "plumb: error: layout for llama3-70b on 96 devices: 64 attention heads do not divide by tp 3\n"},
      {"--model-file " + dir + "/model.yaml --hardware h100-sxm",
       "plumb: error: " + dir + "/model.yaml:4: not valid YAML: end of sequence flow not found\n"},
      {"--hardware h100-sxm", "plumb: error: plumb plan needs --model NAME or --model-file PATH\n"},
      // Issue 15's options: what a schedule cannot run, MoE options on a dense model.
      {"--model llama3-8b --hardware h100-sxm --devices 8 --tp 2 --pp 2 --vpp 4 --schedule 1f1b",
       "plumb: error: --schedule 1f1b runs one chunk per stage: --vpp 4 needs --schedule "
       "interleaved\n"},
      {"--model llama3-8b --hardware h100-sxm --devices 8 --tp 2 --etp 1 --ep-overlap",
       "plumb: error: layout for llama3-8b on 8 devices: etp 1 needs a MoE model; --ep-overlap "
       "needs a MoE model\n"},
      {"--model deepseek-v3-671b --hardware h800 --pp 16 --ep 64 --dp 128 --gbs 384 "
       "--schedule dualpipe",
       "plumb: error: layout for deepseek-v3-671b on 2048 devices: DualPipe needs an even pp ≥ 2 "
       "and an even number of micro-batches (pp 16, 3 micro-batches)\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = plan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// DeepSeek-V3's published layout as plumb plan takes it: the JSON says what ran (schedule,
// overlap, dispatch precision, etp) and which stage the memory is of.
TEST(PlanCli, MoeLayoutOptionsReachTheJson) {
  const test::Run r = plan("--model deepseek-v3-671b --hardware h800 --pp 16 --ep 64 --dp 128 "
                           "--gbs 15360 --schedule dualpipe --ep-overlap --dispatch-precision fp8 "
                           "--precision fp8 --zero 1 --json -");
  ASSERT_NE(r.out, "") << r.err;
  // plumb keeps bf16 activations where the run kept FP8 ones (docs/plan.md section 10): it
  // predicts this layout over 80 GB, a failed check.
  EXPECT_EQ(r.exit_code, 1);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["layout"]["schedule"], "dualpipe");
  EXPECT_EQ(j["layout"]["ep_overlap"], true);
  EXPECT_EQ(j["layout"]["tp_overlap"], false);
  EXPECT_EQ(j["layout"]["dispatch_precision"], "fp8");
  EXPECT_EQ(j["layout"]["etp"], 1);
  EXPECT_EQ(j["layout"]["micro_batches"], 120);
  EXPECT_EQ(j["breakdown_s"]["ep"], 0.0);  // DualPipe's overlap hides the all-to-all here
  EXPECT_EQ(j["memory_stage"]["stage"], 1);
  const test::Run text = plan("--model deepseek-v3-671b --hardware h800 --pp 16 --ep 64 --dp 128 "
                              "--gbs 15360 --schedule dualpipe --ep-overlap --zero 1");
  EXPECT_NE(text.out.find("· dualpipe · ep-overlap"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("of the fullest stage"), std::string::npos) << text.out;
}

// --dispatcher deepep prices the all-to-all DeepEP sends (one copy per target node across the
// network): on DeepSeek-V3's EP 32 over 4 B200 nodes, 3 copies of a token cross where Megatron's
// alltoall dispatcher sends 6, so the EP time falls by more than a third. A dense model has no
// dispatcher to choose: one line, exit 2.
TEST(PlanCli, DeepEpDispatcherSendsATokenOncePerNode) {
  const std::string layout =
      "--model deepseek-v3-671b --hardware b200 --precision fp8 --devices 256 --pp 8 --vpp 2 "
      "--ep 32 --etp 1 --gbs 4096 --json - ";
  const test::Run plain = plan(layout);
  const test::Run deepep = plan(layout + "--dispatcher deepep");
  ASSERT_NE(plain.out, "") << plain.err;
  ASSERT_NE(deepep.out, "") << deepep.err;
  const double a2a = nlohmann::json::parse(plain.out)["breakdown_s"]["ep"].get<double>();
  const double once = nlohmann::json::parse(deepep.out)["breakdown_s"]["ep"].get<double>();
  EXPECT_GT(once, 0);
  EXPECT_LT(once, 0.6 * a2a);
  EXPECT_EQ(nlohmann::json::parse(deepep.out)["layout"]["dispatcher"], "deepep");
  EXPECT_EQ(nlohmann::json::parse(plain.out)["layout"]["dispatcher"], "alltoall");
  const test::Run dense = plan("--model llama3-8b --hardware h100-sxm --devices 8 --dispatcher deepep");
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_NE(dense.err.find("--dispatcher deepep needs a MoE model"), std::string::npos) << dense.err;
}

// --fsdp prices PyTorch FSDP's passes over the unsharded gradient (18 B a parameter under
// --fp32-grad-reduce): Llama 3 8B's 8.03e9 parameters at 0.9 × 3.35 TB/s of H100 HBM add 48 ms a
// micro-batch to the DP time of ZeRO-3 on 8 H100; the layout names it in JSON and on its line.
TEST(PlanCli, FsdpAddsTheGradientPassesAndIsNamed) {
  const std::string layout = "--model llama3-8b --hardware h100-sxm --devices 8 --zero 3 --mbs 2 "
                             "--gbs 16 --fp32-grad-reduce ";
  const test::Run plain = plan(layout + "--json -");
  const test::Run fsdp = plan(layout + "--fsdp --json -");
  ASSERT_NE(plain.out, "") << plain.err;
  ASSERT_NE(fsdp.out, "") << fsdp.err;
  const nlohmann::json a = nlohmann::json::parse(plain.out);
  const nlohmann::json b = nlohmann::json::parse(fsdp.out);
  const double added = b["breakdown_s"]["dp"].get<double>() - a["breakdown_s"]["dp"].get<double>();
  EXPECT_NEAR(added, 8.03e9 * 18 / (0.9 * 3.35e12), 0.001);
  EXPECT_EQ(a["layout"]["fsdp"], false);
  EXPECT_EQ(b["layout"]["fsdp"], true);
  const test::Run text = plan(layout + "--fsdp");
  EXPECT_NE(text.out.find("· PyTorch FSDP"), std::string::npos) << text.out;
  // FSDP's strategies plumb prices are ZeRO 2 and 3; --fsdp with plumb's default ZeRO 1 is refused.
  const test::Run one = plan("--model llama3-8b --hardware h100-sxm --devices 8 --fsdp");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("--fsdp prices PyTorch FSDP's SHARD_GRAD_OP (ZeRO 2) or FULL_SHARD (ZeRO "
                         "3); got ZeRO 1"),
            std::string::npos) << one.err;
}

// Issue 10: every number option refuses non-finite values, values out of its range and values of
// the wrong kind before anything runs, naming the option and the range it accepts.
TEST(PlanCli, NumberOptionsNameTheirRange) {
  const std::string model = "--model llama3-70b --hardware h100-sxm ";
  const std::string count = "must be a whole number from 1 to 16777216, got ";
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {model + "--batch-tokens 1e300", "--batch-tokens: must be a number from 1 to 1e+10, got '1e300'"},
      {model + "--devices 8 --tokens nan", "--tokens: must be a number from 1 to 1e+18, got 'nan'"},
      {model + "--devices 8 --tokens -5", "--tokens: must be a number from 1 to 1e+18, got '-5'"},
      {model + "--devices " + std::string(300, '9'), "--devices: " + count + "'999999999999999999999...'"},
      {model + "--devices 0", "--devices: " + count + "'0'"},
      {model + "--devices 2147483648", "--devices: " + count + "'2147483648'"},
      {model + "--tp 1.5", "--tp: " + count + "'1.5'"},
      {model + "--vpp 0", "--vpp: " + count + "'0'"},
      {model + "--mbs 1e7", "--mbs: must be a whole number from 1 to 1000000, got '1e7'"},
      {model + "--gbs 1e10", "--gbs: must be a whole number from 1 to 1000000000, got '1e10'"},
      {model + "--zero 4", "--zero: must be a whole number from 0 to 3, got '4'"},
      {model + "--mtbf inf", "--mtbf: must be a number from 1 to 1e+09, got 'inf'"},
      {model + "--failure-rate 2", "--failure-rate: must be a number from 1e-09 to 1, got '2'"},
      {model + "--storage-gbps 0", "--storage-gbps: must be a number from 0.001 to 1e+06, got '0'"},
      {model + "--restart-minutes nan", "--restart-minutes: must be a number from 0 to 10080, got 'nan'"},
      {model + "--pue nan", "--pue: must be a number from 1 to 3, got 'nan'"},
      {"search " + model + "--devices 0", "--devices: " + count + "'0'"},
      {"search " + model + "--devices 64 --top 0", "--top: must be a whole number from 1 to 1000, got '0'"},
      {"search " + model + "--devices 64 --max-tp 1e30", "--max-tp: " + count + "'1e30'"},
      {"scale " + model + "--devices 1000,inf", "--devices: " + count + "'inf'"},
      {"scale " + model + "--max-cp 0", "--max-cp: " + count + "'0'"},
  };
  for (const auto& c : cases) {
    const test::Run r = plan(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, "plumb: error: " + c.err + "; run 'plumb --help' for usage\n") << c.args;
    EXPECT_EQ(r.out, "");
  }
  // A count in exponent form is the count: 1e3 is 1000.
  const test::Run r = plan(model + "--devices 1e3 --tp 8 --pp 5 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"]["devices"], 1000);
}

// 2^31 devices made dp -2147483648: each size is at most 16,777,216 and so is their product.
TEST(PlanCli, DevicesBeyondTheMaximumAreRefused) {
  const test::Run r = plan("--model llama3-70b --hardware h100-sxm --tp 8 --dp 16777216");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "plumb: error: layout for llama3-70b: tp 8 × cp 1 × pp 1 × dp 16777216 = 1.342e+08 "
            "devices, more than the 16777216 plumb plans for\n");
}

// A directory or a missing file given as a file option: one line naming it, no library text.
TEST(PlanCli, ADirectoryAsAFileOptionIsOneLine) {
  const std::string dir = temp_dir("plan-dir");
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {"--model-file " + dir + " --hardware h100-sxm", dir + ": is a directory, not a model file"},
      {"--model llama3-70b --hardware-file " + dir, dir + ": is a directory, not a hardware file"},
      {"--model llama3-70b --hardware h100-sxm --cluster " + dir,
       dir + ": is a directory, not a cluster file"},
      {"--model-file " + dir + "/absent.yaml --hardware h100-sxm",
       dir + "/absent.yaml: cannot read the model file: No such file or directory"},
  };
  for (const auto& c : cases) {
    const test::Run r = plan(c.args + " --devices 8 --tp 8");
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, "plumb: error: " + c.err + "\n") << c.args;
  }
}

// A typo or a repeated key in a model file silently changed the plan: both are errors now.
TEST(PlanCli, DuplicateAndUnknownYamlKeysAreErrors) {
  const std::string dir = temp_dir("plan-keys");
  const std::string path = dir + "/m.yaml";
  write_file(path,
             "name: tiny\nlayers: 4\nhidden: 256\nheads: 8\nkv_heads: 8\nffn_hidden: 1024\n"
             "vocab: 1000\nseq_len: 512\nffn_type: gelu\nhidden: 4096\nlayer: 8\n");
  const test::Run r = plan("--model-file " + path + " --hardware h100-sxm --devices 8 --tp 8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + path + ":10: duplicate key 'hidden' (first at line 3)\n" +
                       path + ":11: unknown key 'layer' (did you mean 'layers'?); expected one of "
                       "name, layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len, "
                       "ffn_type, tied_embeddings, params_b, moe, head_dim, mla, mtp_layers\n");
}

// Failures that take all the wall time: the report said "failures 362.7%" and nothing else. Now
// a warning says the run would not progress and what would help, on stderr and in the notes.
TEST(PlanCli, FailuresBeyondTheWallTimeAreAWarning) {
  const test::Run r = plan("--model llama3-70b --hardware h100-sxm --devices 64 --tp 8 --pp 2 "
                           "--mtbf 1 --tokens 1e12 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string warning =
      "on 64 devices the job is interrupted every 56.2 s and each interruption costs a 600 s "
      "restart plus rework: failures take 1100% and checkpoints 27% of the wall time, so the run "
      "would not progress; a lower failure rate (--failure-rate, --mtbf), a faster restart "
      "(--restart-minutes), faster checkpoints (--storage-gbps) or fewer devices would help";
  EXPECT_EQ(r.err, "plumb: warning: " + warning + "\n");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["context"]["notes"].back(), warning);
  EXPECT_EQ(j["reliability"]["goodput"], 0);
  // Below the limit there is no warning.
  const test::Run fine = plan("--model llama3-70b --hardware h100-sxm --devices 64 --tp 8 --pp 2");
  EXPECT_EQ(fine.err, "");
}

// Without --gbs the batch is the multiple of dp × mbs nearest --batch-tokens; a layout whose
// smallest batch is far above it says so.
TEST(PlanCli, ABatchFarAboveTheTokensAskedForIsANote) {
  const test::Run r = plan("--model llama3-8b --hardware h100-sxm --devices 4096 --batch-tokens 8192");
  EXPECT_NE(r.out.find("# note: the smallest batch this layout runs is 4096 sequences (3.36e+07 "
                       "tokens), 4096× the 8.19e+03 tokens of --batch-tokens: fewer data-parallel "
                       "replicas (dp) or a smaller --mbs would keep the batch asked for\n"),
            std::string::npos) << r.out;
}

TEST(PlanCli, SearchListsTheTopLayouts) {
  const test::Run r = plan("search --model llama3-70b --hardware h100-sxm --devices 512 --top 3 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.plan-search/1");
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_GE(j["top"][0]["tokens_per_s"].get<double>(), j["top"][2]["tokens_per_s"].get<double>());
  EXPECT_GT(j["candidates"].get<int64_t>(), j["fitting"].get<int64_t>());
  const test::Run one_cp = plan("search --model llama3-70b --hardware h100-sxm --devices 512 --top 50 --max-cp 1 --json -");
  ASSERT_EQ(one_cp.exit_code, 0) << one_cp.err;
  for (const auto& p : nlohmann::json::parse(one_cp.out)["top"]) EXPECT_EQ(p["layout"]["cp"], 1);
  const test::Run table = plan("search --model llama3-70b --hardware h100-sxm --devices 512 --top 3");
  EXPECT_NE(table.out.find(" layouts enumerated, "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("  1 "), std::string::npos) << table.out;
}

// The line under `best:` is the plumb plan command of the best layout: run as printed, it predicts
// the same step time (every input and layout option is in it, the batch as --gbs). A dense model
// with its defaults; a MoE model with fp8 dispatch, a cluster file, outlook options and
// --no-dp-overlap.
TEST(PlanCli, SearchPrintsTheCommandOfItsBestLayout) {
  const std::string cluster = temp_dir("plan-best command") + "/roce 2to1.yaml";
  std::ofstream(cluster) << "devices_per_node: 8\nnodes_per_rack: 16\noversubscription: 2\n";
  const std::string cases[] = {
      "--model llama3-70b --hardware h100-sxm --devices 512",
      "--model mixtral-8x7b --hardware h100-sxm --devices 256 --dispatch-precision fp8 "
      "--no-dp-overlap --precision fp8 --tokens 1e12 --pue 1.3 --cluster '" + cluster + "'",
  };
  for (const std::string& args : cases) {
    const test::Run search = plan("search " + args + " --top 2 --json -");
    ASSERT_EQ(search.exit_code, 0) << args << "\n" << search.err;
    const nlohmann::json j = nlohmann::json::parse(search.out);
    const std::string command = j["command"].get<std::string>();
    ASSERT_EQ(command.rfind("plumb plan --model", 0), 0u) << command;
    const test::Run table = plan("search " + args + " --top 2");
    EXPECT_NE(table.out.find("; its whole report:\n  " + command + "\n"), std::string::npos)
        << table.out;
    const test::Run best = run_command(kPlumb + command.substr(5) + " --json -");
    ASSERT_EQ(best.exit_code, 0) << command << "\n" << best.err;
    const nlohmann::json b = nlohmann::json::parse(best.out);
    EXPECT_EQ(b["step_time_s"].get<double>(), j["top"][0]["step_time_s"].get<double>()) << command;
    EXPECT_EQ(b["layout"], j["top"][0]["layout"]) << command;
  }
}

// Thin or uneven pipeline stages (docs/plan.md section 8) are left out of a search and counted;
// --allow-unusual includes them. Llama 3 70B's 80 layers on 512 devices: pp 32 and 64 leave under
// two layers per stage, interleaved pp × vpp of 32 or more do not divide 80.
TEST(PlanCli, SearchLeavesOutUnusualLayoutsUnlessAllowed) {
  const std::string args = "search --model llama3-70b --hardware h100-sxm --devices 512 --top 1000";
  const test::Run usual = plan(args + " --json -");
  ASSERT_EQ(usual.exit_code, 0) << usual.err;
  const nlohmann::json u = nlohmann::json::parse(usual.out);
  EXPECT_GT(u["unusual"].get<int64_t>(), 0);
  for (const auto& p : u["top"]) {
    const int stages = p["layout"]["pp"].get<int>() * p["layout"]["vpp"].get<int>();
    EXPECT_EQ(80 % stages, 0) << p["layout"];
    EXPECT_LE(p["layout"]["pp"].get<int>(), 40) << p["layout"];
  }
  const test::Run table = plan(args);
  EXPECT_NE(table.out.find(fmt::format(" fit in memory · {} unusual left out; --allow-unusual to "
                                       "include them · ", u["unusual"].get<int64_t>())),
            std::string::npos) << table.out;
  const test::Run all = plan(args + " --allow-unusual --json -");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const nlohmann::json a = nlohmann::json::parse(all.out);
  EXPECT_EQ(a["unusual"], 0);
  EXPECT_EQ(a["valid"].get<int64_t>() + a["oversized"].get<int64_t>(),
            u["valid"].get<int64_t>() + u["oversized"].get<int64_t>() + u["unusual"].get<int64_t>());
  bool any_unusual = false;
  for (const auto& p : a["top"]) {
    any_unusual |= 80 % (p["layout"]["pp"].get<int>() * p["layout"]["vpp"].get<int>()) != 0;
  }
  EXPECT_TRUE(any_unusual);
  EXPECT_EQ(plan(args + " --allow-unusual").out.find("unusual left out"), std::string::npos);
}

// Asked for explicitly, an unusual layout is predicted, with a warning naming each rule it breaks.
TEST(PlanCli, AnExplicitUnusualLayoutRunsWithAWarning) {
  const std::string args = "--model llama3-70b --hardware h100-sxm --tp 8 --pp 50 --dp 2 --gbs 200";
  const test::Run r = plan(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string thin =
      "unusual layout (thin-stages): pp 50 leaves 1.6 of the 80 layers per stage, fewer than 2; "
      "published pipelines keep at least 2 per stage (a smaller --pp)";
  const std::string uneven =
      "unusual layout (uneven-stages): pp 50 stages do not divide the 80 layers; plumb would give "
      "the middle stages the extra layers, a split no framework documents: the documented uneven "
      "splits give the first and last stages fewer (Megatron-LM's "
      "--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers; Llama 3 405B's "
      "126 layers on 16 stages)";
  EXPECT_EQ(r.err, "plumb: warning: " + thin + "\nplumb: warning: " + uneven + "\n");
  EXPECT_NE(r.out.find("# note: " + thin + "\n# note: " + uneven + "\n"), std::string::npos) << r.out;
  const test::Run j = plan(args + " --json -");
  EXPECT_EQ(nlohmann::json::parse(j.out)["context"]["notes"],
            (nlohmann::json{thin, uneven}));
}

// A search that finds nothing is a failed check (exit 1) saying what was tried and what would help.
// 405B on 2 devices: shapes (tp, cp, pp) (1,1,1), (2,1,1), (1,2,1), (1,1,2), each with 4 mbs × 3
// recompute × 4 ZeRO = 48; tp 2 twice (TP overlap off and on); pp 2 five schedules (1F1B,
// interleaved vpp 2 and 4, zero-bubble, DualPipe): 48 + 96 + 48 + 240 = 432. Of those the
// interleaved ones are unusual: 4 and 8 stages do not divide the 126 layers (2 × 48 = 96).
TEST(PlanCli, SearchWithNothingThatFitsExitsOne) {
  const test::Run r = plan("search --model llama3-405b --hardware h100-sxm --devices 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "plumb: error: no layout of llama3-405b fits on 2 × NVIDIA H100 SXM: 432 layouts "
            "tried, 336 valid, none fits in its 80 GB of memory; more devices, a larger --max-tp "
            "or --max-cp, or a device with more memory would help; 96 unusual layouts were left "
            "out (fewer than two layers per pipeline stage, or pp × vpp not dividing the layers): "
            "--allow-unusual would include them\n");
  EXPECT_NE(r.out.find("# 432 layouts enumerated, 336 valid, 0 fit in memory · 96 unusual left "
                       "out; --allow-unusual to include them · "),
            std::string::npos) << r.out;
  const test::Run all = plan("search --model llama3-405b --hardware h100-sxm --devices 2 --allow-unusual");
  EXPECT_EQ(all.exit_code, 1);
  EXPECT_EQ(all.err,
            "plumb: error: no layout of llama3-405b fits on 2 × NVIDIA H100 SXM: 432 layouts "
            "tried, 432 valid, none fits in its 80 GB of memory; more devices, a larger --max-tp "
            "or --max-cp, or a device with more memory would help\n");
  const test::Run oversized =
      plan("search --model llama3-8b --hardware h100-sxm --devices 4096 --batch-tokens 1");
  EXPECT_EQ(oversized.exit_code, 1);
  EXPECT_EQ(oversized.err,
            "plumb: error: no layout of llama3-8b fits on 4096 × NVIDIA H100 SXM: 43680 layouts "
            "tried; the 33600 valid ones all need a batch more than 2× --batch-tokens; more "
            "tokens per step (--batch-tokens, --gbs) or fewer devices would help; 5040 unusual "
            "layouts were left out (fewer than two layers per pipeline stage, or pp × vpp not "
            "dividing the layers): --allow-unusual would include them\n");
}

// plan scale prints every row, warns where failures take all the wall time, and exits 1 naming
// each device count where nothing fits. On 1,000,000 devices only unusual layouts (pp 5 or 25 of
// the 126 layers) keep the batch near 16M tokens: --allow-unusual lets scale take them.
TEST(PlanCli, ScaleWithACountWhereNothingFitsExitsOne) {
  const test::Run r =
      plan("scale --model llama3-405b --hardware h100-sxm --devices 2,1000000 --allow-unusual");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("       2 no layout fits\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 1000000 tp "), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "plumb: warning: on 1000000 devices the job is interrupted every 182 s and each "
            "interruption costs a 600 s restart plus rework: failures take 374% and checkpoints "
            "34% of the wall time, so the run would not progress; a lower failure rate "
            "(--failure-rate, --mtbf), a faster restart (--restart-minutes), faster checkpoints "
            "(--storage-gbps) or fewer devices would help\n"
            "plumb: error: no layout of llama3-405b fits on 2 × NVIDIA H100 SXM: 432 layouts "
            "tried, 432 valid, none fits in its 80 GB of memory; more devices, a larger --max-tp "
            "or --max-cp, or a device with more memory would help\n");
  const test::Run usual = plan("scale --model llama3-405b --hardware h100-sxm --devices 1000000");
  EXPECT_EQ(usual.exit_code, 1);
  EXPECT_NE(usual.out.find(" 1000000 no layout fits\n"), std::string::npos) << usual.out;
  EXPECT_EQ(usual.err,
            "plumb: error: no layout of llama3-405b fits on 1000000 × NVIDIA H100 SXM: 117696 "
            "layouts tried; the 13248 valid ones all need a batch more than 2× --batch-tokens; "
            "more tokens per step (--batch-tokens, --gbs) or fewer devices would help; 49296 "
            "unusual layouts were left out (fewer than two layers per pipeline stage, or pp × vpp "
            "not dividing the layers): --allow-unusual would include them\n");
}

// On a terminal (script(1)'s pseudo-terminal) the search draws its progress line.
TEST(PlanCli, SearchProgressLineOnATerminal) {
  const test::Run r = run_command("script -qec '" + kPlumb +
                            " plan search --model megatron-1t --hardware h100-sxm --devices 4096 --top 1' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("4096 devices · layout shapes"), std::string::npos) << r.out;
}

TEST(PlanCli, ScaleFromOneThousandToOneHundredThousand) {
  const test::Run r = plan("scale --model llama3-405b --hardware h100-sxm --tokens 15e12 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 3u);
  double last_mtbf = 1e30;
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(row["found"].get<bool>()) << row;
    EXPECT_LT(row["job_mtbf_h"].get<double>(), last_mtbf);  // more devices, more interruptions
    last_mtbf = row["job_mtbf_h"].get<double>();
    EXPECT_GT(row["goodput"].get<double>(), 0);
    EXPECT_LT(row["goodput"].get<double>(), 1);
  }
  EXPECT_GT(j["rows"][0]["goodput"].get<double>(), j["rows"][2]["goodput"].get<double>());
  EXPECT_GT(j["rows"][0]["days"].get<double>(), j["rows"][2]["days"].get<double>());
}

// A stored baseline whose node layer measured allgather and reducescatter at 1–64 MiB.
std::string calibration_store(const std::string& dir, double busbw) {
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = "node-sweep";
  r.hosts = {"gpu-001"};
  r.source = "plumb baseline";
  for (const char* collective : {"allgather", "reducescatter"}) {
    for (uint64_t bytes = 1 << 20; bytes <= (1u << 26); bytes *= 4) {
      comm::Row row;
      row.layer = "node";
      row.group = "node";
      row.group_ranks = 8;
      row.collective = collective;
      row.dtype = "bfloat16";
      row.op = "sum";
      row.requested_bytes = row.bytes = bytes;
      row.busbw_gbps = busbw;
      row.algbw_gbps = busbw * 8 / 7;
      row.time_us = static_cast<double>(bytes) / (row.algbw_gbps * 1e3);
      r.rows.push_back(row);
    }
  }
  const std::string db = dir + "/plumb.db";
  baseline::Store(db).save(r);
  return db;
}

// --calibrate: the measured node curves price TP's allgather and reduce-scatter; the report says
// so, and a slower measurement makes a slower TP term.
TEST(PlanCli, CalibrationSaysWhatWasMeasured) {
  const std::string dir = temp_dir("plan-calibrate");
  const std::string db = calibration_store(dir, 50);
  const std::string layout = " --model llama3-70b --hardware h100-sxm --devices 64 --tp 8 --pp 2 ";
  const test::Run r = plan(layout + "--calibrate 1 --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# network  calibrated from baseline 1 · 2026-12-02T10:00:00Z · node-sweep"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#   measured: node allgather: 4 sizes 1 MiB–64 MiB, 8 ranks"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("measured curves priced: node allgather, node reducescatter; everything else analytic"),
            std::string::npos) << r.out;
  auto tp_seconds = [&](const std::string& args) {
    const nlohmann::json j = nlohmann::json::parse(plan(layout + args + " --json -").out);
    return j["breakdown_s"]["tp"].get<double>();
  };
  const double analytic = tp_seconds("");
  const double measured = tp_seconds("--calibrate 1 --db " + db);
  // Analytic node links give 351 GB/s per device; the measurement 50 GB/s: TP time grows by about
  // 351/50, less the latency part the measured curve already holds.
  EXPECT_GT(measured, 5 * analytic);
  EXPECT_LT(measured, 351.0 / 50 * analytic * 1.01);
}

TEST(PlanCli, CalibrationFromAnUnknownIdNamesIt) {
  const std::string dir = temp_dir("plan-calibrate-bad");
  const std::string db = calibration_store(dir, 50);
  const test::Run r = plan("--model llama3-8b --hardware h100-sxm --devices 8 --tp 8 --calibrate 7 --db " + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("7"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A step record (plumb step --save) saved without --plan does not say what layout it measured:
// one line, exit 2, naming what to run instead.
TEST(PlanCli, CalibrationFromAStepRecordWithoutAPlanIsRefused) {
  const std::string dir = temp_dir("plan-calibrate-step");
  const std::string db = calibration_store(dir, 50);
  EXPECT_EQ(baseline::Store(db).save(step_only_record()), 2);
  const test::Run r = plan("--model llama3-8b --hardware h100-sxm --devices 8 --tp 8 --calibrate "
                           "latest --db " + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --calibrate latest was not compared with a plan, so the layout "
                   "it measured is unknown: plumb plan ... --json PLAN.json, then plumb step TRACES "
                   "--plan PLAN.json --save (or --json), so that the layout it ran is known\n");
  EXPECT_EQ(r.out, "");
}

// The two built-in sets meet issue 4's targets; the run-set files of data/validation/ follow
// them (issue 15's model work decides whether they meet theirs, and so the exit status).
TEST(PlanCli, ValidateMeetsItsTargets) {
  const test::Run r = plan("validate --json -");
  ASSERT_NE(r.exit_code, 2) << r.err;  // every shipped file loads
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["sets"].size(), 2u);
  bool all = true;
  for (const auto& set : j["sets"]) {
    for (const char* key : {"name", "rows", "mape", "max_abs_error", "spearman"}) {
      EXPECT_TRUE(set.contains(key)) << key;
    }
    all = all && set["meets_target"].get<bool>();
  }
  EXPECT_EQ(j["sets"][0]["name"], "megatron-sc21");
  EXPECT_EQ(j["sets"][1]["name"], "vtrain");
  EXPECT_TRUE(j["sets"][0]["meets_target"].get<bool>());
  EXPECT_TRUE(j["sets"][1]["meets_target"].get<bool>());
  EXPECT_EQ(r.exit_code, all ? 0 : 1) << r.err;
  const test::Run table = plan("validate --rows");
  EXPECT_NE(table.out.find("megatron-sc21: meets its target"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1008B    tp 8 pp 64 dp 6"), std::string::npos) << table.out;
}

// Two comm baselines are two sets of links for one plan: refused, naming both.
TEST(PlanCli, CalibrationFromTwoCommBaselinesIsRefused) {
  const std::string dir = temp_dir("plan-calibrate-two");
  const std::string db = calibration_store(dir, 50);
  const test::Run r = plan("--model llama3-8b --hardware h100-sxm --devices 8 --tp 8 --calibrate 1 "
                           "--calibrate latest --db " + db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --calibrate 1 and --calibrate latest: both are comm "
                   "measurements; give one (the links of one cluster)\n");
}

// Every prediction prints its band; the JSON has it; search lists each layout's low end and
// --rank pessimistic ranks by it.
TEST(PlanCli, PredictionsCarryTheirBand) {
  const std::string layout = "--model llama3-8b --hardware h100-sxm --tp 2 --dp 4 --gbs 32";
  const test::Run console = plan(layout);
  ASSERT_EQ(console.exit_code, 0) << console.err;
  EXPECT_NE(console.out.find("\nband     80%: "), std::string::npos) << console.out;
  EXPECT_NE(console.out.find(" published runs: dense on nvidia devices"), std::string::npos)
      << console.out;
  const nlohmann::json j = nlohmann::json::parse(plan(layout + " --json -").out);
  const nlohmann::json& band = j["band"];
  EXPECT_EQ(band["level"], 0.8);
  EXPECT_FALSE(band["calibrated"].get<bool>());
  EXPECT_LT(band["step_time_s"][0].get<double>(), band["step_time_s"][1].get<double>());
  EXPECT_LT(band["tokens_per_s"][0].get<double>(), band["tokens_per_s"][1].get<double>());
  // The tokens/s band is the step band inverted: tokens/s = tokens per step / step time.
  EXPECT_NEAR(band["tokens_per_s"][0].get<double>() * band["step_time_s"][1].get<double>(),
              j["tokens_per_s"].get<double>() * j["step_time_s"].get<double>(), 1e-6 * 32 * 8192);
  const test::Run search = plan("search --model llama3-8b --hardware h100-sxm --devices 64 --top 3");
  ASSERT_EQ(search.exit_code, 0) << search.err;
  EXPECT_NE(search.out.find("# low tok/s: the 80% band's low end, from "), std::string::npos)
      << search.out;
  EXPECT_NE(search.out.find("ranked by tokens/s (--rank pessimistic: by the band's low end)"),
            std::string::npos) << search.out;
  const nlohmann::json pessimistic = nlohmann::json::parse(
      plan("search --model llama3-8b --hardware h100-sxm --devices 64 --top 5 --rank pessimistic "
           "--json -").out);
  EXPECT_EQ(pessimistic["ranked_by"], "pessimistic");
  const auto& top = pessimistic["top"];
  ASSERT_EQ(top.size(), 5u);
  for (size_t i = 1; i < top.size(); ++i) {
    EXPECT_GE(top[i - 1]["band"]["tokens_per_s"][0].get<double>(),
              top[i]["band"]["tokens_per_s"][0].get<double>());
  }
}

// --calibrated: each run set again after leave-one-out calibration, and the pairs at two scales.
TEST(PlanCli, ValidateCalibratedLeaveOneOut) {
  // One run (the fits take seconds): the console and the JSON, written beside it.
  const std::string json = test::temp_dir("plan-validate-calibrated") + "/validate.json";
  const test::Run r = plan("validate --calibrated --json " + json);
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("# after calibration, leave-one-out: each row predicted with the efficiencies "
                       "fitted to the other runs of its group on its device"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("moe-ascend · calibrated: 20 rows · MAPE "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# two scales: calibrated on one run alone"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npairs at 8× or more: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npairs at 8× or more (across sources too): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (across sources)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bands: the 80% band of each run, drawn from the other runs, holds its "
                       "measured speed for "),
            std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(plan("validate --json -").out);
  EXPECT_EQ(j["band_coverage"]["level"], 0.8);
  EXPECT_GT(j["band_coverage"]["rows"].get<int>(), 100);
  EXPECT_FALSE(j.contains("scale_pairs"));
  // --calibrated --json: the pairs and their summaries, the console's numbers.
  const nlohmann::json c = nlohmann::json::parse(test::read_file(json));
  ASSERT_TRUE(c.contains("scale_pairs")) << c.dump();
  const nlohmann::json& first = c["scale_pairs"]["summaries"][0];
  EXPECT_EQ(first["scope"], "same_source");
  EXPECT_EQ(first["split"], "all");
  EXPECT_NE(r.out.find(fmt::format("\npairs at 8× or more: {} · within 10% after calibration {} ",
                                   first["pairs"].get<int>(), first["within_after"].get<int>())),
            std::string::npos) << r.out;
  size_t across = 0;
  for (const nlohmann::json& p : c["scale_pairs"]["pairs"]) across += p["same_source"] ? 0 : 1;
  EXPECT_GT(across, 0u);
}

// A run set of one dense GPT run in a fresh folder; `measured` is its measured: line.
std::string write_run_set(const std::string& name, const std::string& measured) {
  const std::string dir = test::temp_dir(name);
  test::write_file(dir + "/gpt.yaml",
                   "name: gpt-e2e\nlayers: 8\nhidden: 1024\nheads: 16\nkv_heads: 16\n"
                   "ffn_hidden: 4096\nvocab: 51200\nseq_len: 2048\nffn_type: gelu\n"
                   "tied_embeddings: true\n");
  test::write_file(dir + "/set.yaml",
                   "set: e2e\nruns:\n  - name: gpt\n    model_file: gpt.yaml\n"
                   "    hardware: h100-sxm\n    devices: 16\n    layout: {tp: 2, pp: 2, gbs: 64}\n"
                   "    measured: {" + measured + "}\n"
                   "    published: [model_file, hardware, devices, tp, pp, gbs, "
                   "tokens_per_s_per_device]\n");
  return dir + "/set.yaml";
}

// --set checks the file alone: exit 0 when its row is the prediction itself, 1 when the published
// figure is twice it (error −50%, beyond issue 15's 25%), 2 for a file with a mistake.
TEST(PlanCli, ValidateRunSetExitStatus) {
  const test::Run probe =
      plan("validate --set " + write_run_set("e2e_set_probe", "tokens_per_s_per_device: 1") +
           " --json -");
  ASSERT_NE(probe.exit_code, 2) << probe.err;
  const nlohmann::json j = nlohmann::json::parse(probe.out);
  ASSERT_EQ(j["sets"].size(), 1u);  // the file alone, no built-in set
  const nlohmann::json& row = j["sets"][0]["rows"][0];
  EXPECT_EQ(row["name"], "gpt");
  EXPECT_EQ(row["quantity"], "tokens/s per device");
  EXPECT_EQ(j["sets"][0]["target"]["max_mape"], 0.12);
  const double predicted = row["predicted"].get<double>();

  const test::Run same = plan("validate --set " +
                              write_run_set("e2e_set_same", fmt::format("tokens_per_s_per_device: "
                                                                        "{:.17g}", predicted)) +
                              " --json -");
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_TRUE(nlohmann::json::parse(same.out)["sets"][0]["meets_target"].get<bool>());

  const std::string twice = write_run_set(
      "e2e_set_twice", fmt::format("tokens_per_s_per_device: {:.17g}", 2 * predicted));
  const test::Run missed = plan("validate --set " + twice + " --json -");
  EXPECT_EQ(missed.exit_code, 1) << missed.out << missed.err;
  EXPECT_NEAR(nlohmann::json::parse(missed.out)["sets"][0]["rows"][0]["error"].get<double>(), -0.5,
              1e-12);
  const test::Run rows = plan("validate --rows --set " + twice);
  EXPECT_EQ(rows.exit_code, 1);
  EXPECT_NE(rows.out.find("e2e: MISSES its target"), std::string::npos) << rows.out;
  EXPECT_NE(rows.out.find("    layout tp 2 pp 2 dp 4 mbs 1 gbs 64"), std::string::npos) << rows.out;

  const std::string bad = write_run_set("e2e_set_bad", "tokens_per_s_per_devic: 1");
  const test::Run refused = plan("validate --set " + bad + " --json -");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(bad + ":8: unknown key 'tokens_per_s_per_devic' in measured (did "
                              "you mean 'tokens_per_s_per_device'?)"),
            std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;
}

// plan compare on a data folder of its own ($PLUMB_DATA_DIR): two chips whose prices the test wrote, so
// that the money is checked exactly and nothing depends on the catalog's figures.
std::string compare_data() {
  const std::string dir = temp_dir("plan-compare-data");
  std::filesystem::create_directories(dir + "/models");
  std::filesystem::create_directories(dir + "/hardware");
  write_file(dir + "/models/small.yaml",
             "name: small\nlayers: 32\nhidden: 4096\nheads: 32\nkv_heads: 8\nffn_hidden: 14336\n"
             "vocab: 128256\nseq_len: 8192\nffn_type: swiglu\ntied_embeddings: false\n");
  const std::string links = "devices_per_node: 8\nscaleup_gbps_per_device: 450\n"
                            "scaleout_gbps_per_device: 50\n";
  write_file(dir + "/hardware/fast.yaml",
             "name: Fast\npeak_tflops: {bf16: 989, fp8: 1979}\nhbm_gb: 80\nhbm_tbps: 3.35\n" +
                 links + "tdp_w: 700\nprice_usd: 30000\nprice_date: 2025-01\nrent_usd_per_hour: 4\n"
                 "rent_date: 2025-06-01\nefficiency: 0.8\n");
  write_file(dir + "/hardware/slow.yaml",
             "name: Slow\npeak_tflops: {bf16: 400}\nhbm_gb: 64\nhbm_tbps: 1.6\n" + links +
                 "tdp_w: 350\nefficiency: 0.8\n");
  return dir;
}

test::Run run_compare(const std::string& data, const std::string& args) {
  return run_command("PLUMB_DATA_DIR=" + data + " " + kPlumb + " plan compare " + args);
}

// $2M buys 8 nodes of 8 × $30,000 (64 devices), half of it 4 nodes, a quarter 2: three rows of
// "fast"; "slow" has no price and gets a note instead.
TEST(PlanCli, CompareWithABudgetConsoleTable) {
  const std::string data = compare_data();
  const test::Run r =
      run_compare(data, "--model small --hardware fast,slow --budget 2e6 --tokens 1e11");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# plumb plan compare · small · 1e+11 tokens · budget $2M to buy each "
                        "chip's cluster (whole nodes: all of it, ½ and ¼) · PUE 1.2\n", 0), 0u)
      << r.out;
  for (const char* part : {"chip          prec  devices budget  best layout", " device-h ",
                           "\nfast          bf16       64   100%  tp",
                           "\nfast          bf16       32    50%  tp",
                           "\nfast          bf16       16    25%  tp", " $1.92M ",
                           "# prices fast: buy $30k (2025-01) · rent $4/h (2025-06-01) · " ,
                           "#        slow: no price_usd · no rent_usd_per_hour · ",
                           "# note: slow has no price_usd: a budget cannot size its cluster"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("\nslow "), std::string::npos) << r.out;
}

TEST(PlanCli, CompareJsonAtTheSameCounts) {
  const std::string data = compare_data();
  const test::Run r =
      run_compare(data, "--model small --hardware fast,slow --devices 32,64 --tokens 1e11 "
                        "--json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "plumb.plan-compare/1");
  EXPECT_EQ(j["devices"], nlohmann::json({32, 64}));
  EXPECT_TRUE(j["budget_usd"].is_null());
  ASSERT_EQ(j["chips"].size(), 2u);
  for (const auto& chip : j["chips"]) {
    ASSERT_EQ(chip["rows"].size(), 2u);
    for (const auto& row : chip["rows"]) {
      ASSERT_TRUE(row["found"].get<bool>()) << row;
      const double devices = row["devices"].get<double>();
      const double hours = row["days"].get<double>() * 24;
      EXPECT_NEAR(row["device_hours"].get<double>(), devices * hours, 1e-9 * devices * hours);
      const double tdp = chip["tdp_w"].get<double>();
      EXPECT_NEAR(row["energy_mwh"].get<double>(), devices * tdp * hours * 1.2 / 1e6,
                  1e-9 * devices * tdp * hours);
      EXPECT_NEAR(row["site_mw"].get<double>(), devices * tdp * 1.2 / 1e6, 1e-12);
      EXPECT_EQ(row["best"]["layout"]["tp"].get<int>() * row["best"]["layout"]["cp"].get<int>() *
                    row["best"]["layout"]["pp"].get<int>() * row["best"]["layout"]["dp"].get<int>(),
                devices);
    }
  }
  const auto& fast = j["chips"][0];
  EXPECT_EQ(fast["label"], "fast");
  EXPECT_EQ(fast["price_date"], "2025-01");
  EXPECT_EQ(fast["rows"][1]["buy_usd"], 64 * 30000.0);
  EXPECT_NEAR(fast["rows"][1]["rent_usd"].get<double>(),
              4 * fast["rows"][1]["device_hours"].get<double>(), 1e-6);
  EXPECT_NEAR(fast["rows"][1]["break_even_days"].get<double>(), 30000.0 / (4 * 24), 1e-9);
  const auto& slow = j["chips"][1];
  EXPECT_TRUE(slow["rows"][0]["buy_usd"].is_null());
  EXPECT_TRUE(slow["rows"][0]["rent_usd"].is_null());
  EXPECT_LT(fast["rows"][1]["days"].get<double>(), slow["rows"][1]["days"].get<double>());
}

// The catalog's chips, by name: structure only (the predictor and the prices change).
TEST(PlanCli, CompareCatalogChips) {
  const test::Run r = plan("compare --model llama3-8b --hardware h100-sxm,mi300x --devices 64 "
                           "--tokens 1e11 --precision fp8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nh100-sxm      fp8        64  tp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmi300x        fp8        64  tp"), std::string::npos) << r.out;
}

// A buyer's own quote in a file beside the catalog's chips: labelled by its file name.
TEST(PlanCli, CompareACatalogChipAndAFile) {
  const std::string file = compare_data() + "/hardware/fast.yaml";
  const test::Run r = plan("compare --model llama3-8b --hardware h100-sxm --hardware-file " + file +
                           " --devices 64 --tokens 1e11 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["chips"].size(), 2u);
  EXPECT_EQ(j["chips"][0]["label"], "h100-sxm");
  EXPECT_EQ(j["chips"][1]["label"], "fast");
  EXPECT_EQ(j["chips"][1]["source"], file);
  EXPECT_EQ(j["chips"][1]["rows"][0]["buy_usd"], 64 * 30000.0);
}

// Nothing fits on any chip at any count: the table, then a failed check (exit 1).
TEST(PlanCli, CompareWhereNothingFitsExitsOne) {
  const test::Run r =
      plan("compare --model llama3-405b --hardware h100-sxm --devices 2 --tokens 1e12");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("\nh100-sxm      bf16        2  no layout fits in 80 GB ("),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "plumb: error: no chip has a layout of llama3-405b that fits at any of its "
                   "device counts\n");
}

TEST(PlanCli, CompareBadInputIsOneLineAndExitTwo) {
  const std::string run = "--model llama3-8b --tokens 1e11 ";
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {run + "--hardware h100,b200 --devices 8",
       "plumb: error: --hardware: unknown hardware 'h100' (did you mean 'h100-sxm'?); expected "
       "one of "},
      {run + "--hardware h100-sxm --budget 1e8 --devices 8",
       "plumb: error: plumb plan compare: --budget and --devices: give one (--budget sizes each "
       "chip's cluster by its price; --devices compares every chip at the same counts)\n"},
      {"--model llama3-8b --hardware h100-sxm --devices 8",
       "plumb: error: plumb plan compare: needs --tokens (the tokens to train)\n"},
      {"--model llama3-8b --hardware h100-sxm",
       "plumb: error: plumb plan compare: needs --tokens (the tokens to train); needs --budget USD "
       "or --devices N,M,...\n"},
      {run + "--hardware h100-sxm,h100-sxm --devices 8",
       "plumb: error: --hardware: h100-sxm is named twice\n"},
      {run + "--hardware h100-sxm --budget 0",
       "plumb: error: --budget: must be a number from 1 to 1e+13, got '0'; run 'plumb --help' "
       "for usage\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = plan("compare " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << c.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace plumb::test
