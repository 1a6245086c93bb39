// Run-set files (docs/plan.md section 10): a dense GPT row predicted exactly as the Predictor
// predicts it, the FLOP-based figures turned into tokens/s with the source's FLOPs per token, and
// each rule of the format refused with one exact message naming file:line and the field.
#include "plan/validation_set.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "plan/catalog.h"
#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/model.h"
#include "plan/network.h"
#include "plan/step.h"
#include "support/subprocess.h"

namespace plumb::plan {
namespace {

// A 16-head GPT in Megatron-LM's shape (Narayanan et al. 2021): GELU, FFN 4h, tied embeddings.
constexpr const char* kGpt =
    "name: gpt-test\nlayers: 8\nhidden: 1024\nheads: 16\nkv_heads: 16\nffn_hidden: 4096\n"
    "vocab: 51200\nseq_len: 2048\nffn_type: gelu\ntied_embeddings: true\n";

// One run on 16 H100s: tp 2 × pp 2 → dp 16 / 4 = 4 by default. Line numbers are the file's.
constexpr const char* kSet = R"(set: test-set
title: A dense GPT row
runs:
  - name: gpt on 16
    group: gpt
    source: "worked by hand"
    model_file: gpt.yaml
    hardware: h100-sxm
    devices: 16
    layout:
      tp: 2
      pp: 2
      mbs: 1
      gbs: 64
    measured:
      tokens_per_s_per_device: 3000
    published: [devices, tp, pp, gbs, tokens_per_s_per_device]
    assumed:
      model_file: "the paper's shape"
      hardware: "the catalog's H100"
      mbs: "Megatron's default"
)";

struct SetFiles {
  std::string dir;
  std::string path;
};

// The set `text` in a fresh folder beside gpt.yaml.
SetFiles write_set(const std::string& name, const std::string& text) {
  const std::string dir = test::temp_dir(name);
  test::write_file(dir + "/gpt.yaml", kGpt);
  test::write_file(dir + "/set.yaml", text);
  return {dir, dir + "/set.yaml"};
}

// kSet with `from` replaced by `to` (once).
std::string edited(const std::string& from, const std::string& to) {
  std::string text = kSet;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string load_error(const std::string& path) {
  try {
    load_run_set(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// What the Predictor itself says of the layout kSet describes, with plumb plan's defaults
// (ZeRO 1, selective recomputation, FlashAttention, 1F1B) and the catalog H100's cluster.
Prediction direct_prediction(const std::string& dir, const std::string& precision = "bf16") {
  const ModelSpec m = load_model(dir + "/gpt.yaml");
  const HardwareSpec hw = load_hardware(preset_path("hardware", "h100-sxm"));
  const Network net(default_cluster(hw), Algorithm::kAuto);
  Layout p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 4;
  p.zero = 1;
  p.micro_batch = 1;
  p.global_batch = 64;
  p.recompute = Recompute::kSelective;
  return Predictor(m, hw, net, precision, compute_model(hw))(p);
}

TEST(ValidationSet, DenseGptRowIsThePredictorsTokensPerDevice) {
  const SetFiles f = write_set("run_set_dense", kSet);
  const RunSet r = load_run_set(f.path);
  ASSERT_EQ(r.set.rows.size(), 1u);
  const ValidationRow& row = r.set.rows[0];
  const double predicted = direct_prediction(f.dir).tokens_per_s / 16;
  EXPECT_EQ(row.predicted, predicted);
  EXPECT_EQ(row.published, 3000);
  EXPECT_EQ(row.error(), (predicted - 3000) / 3000);
  EXPECT_EQ(r.set.mape, std::abs(row.error()));
  EXPECT_EQ(r.set.name, "test-set");
  EXPECT_EQ(r.set.source, "A dense GPT row (" + f.path + ")");
  EXPECT_EQ(r.set.quantity, "tokens/s per device");
  EXPECT_EQ(row.name, "gpt on 16");
  EXPECT_EQ(row.group, "gpt");
  EXPECT_EQ(row.layout, "tp 2 pp 2 dp 4 mbs 1 gbs 64");
  EXPECT_EQ(row.source, "worked by hand");
  ASSERT_EQ(row.assumed.size(), 3u);  // in file order
  EXPECT_EQ(row.assumed[2].first, "mbs");
  EXPECT_EQ(row.assumed[2].second, "Megatron's default");
  EXPECT_TRUE(row.notes.empty());  // the catalog H100 has a measured efficiency; it fits
  // Issue 15's bars when the file names none.
  EXPECT_EQ(r.targets.mape, 0.12);
  EXPECT_EQ(r.targets.max_error, 0.25);
}

// MFU 0.4 of the H100's 989.4 TFLOP/s bf16 peak with the source's 6e9 FLOPs per token:
// 0.4 × 989.4e12 / 6e9 = 65,960 tokens/s per device, compared with the predicted tokens/s.
TEST(ValidationSet, MfuWithTheSourcesFlopsPerTokenBecomesTokensPerSecond) {
  const SetFiles f = write_set(
      "run_set_mfu",
      edited("      tokens_per_s_per_device: 3000\n    published: [devices, tp, pp, gbs, "
             "tokens_per_s_per_device]",
             "      mfu: 0.4\n      flops_per_token: 6e9\n    published: [devices, tp, pp, gbs, "
             "mfu, flops_per_token]"));
  const ValidationRow row = load_run_set(f.path).set.rows.at(0);
  EXPECT_NEAR(row.published, 65960, 1e-9);
  EXPECT_EQ(row.predicted, direct_prediction(f.dir).tokens_per_s / 16);
  EXPECT_EQ(row.quantity, "tokens/s per device (from MFU)");
}

// Without flops_per_token the row compares MFU as plumb counts it, and assumed must say so.
TEST(ValidationSet, MfuWithoutFlopsPerTokenIsPlumbsOwnCountAndMustBeAssumed) {
  const std::string mfu = edited("tokens_per_s_per_device: 3000\n    published: [devices, tp, pp, "
                                 "gbs, tokens_per_s_per_device]",
                                 "mfu: 0.4\n    published: [devices, tp, pp, gbs, mfu]");
  const SetFiles f = write_set("run_set_mfu_plain", mfu);
  EXPECT_EQ(load_error(f.path),
            f.path + ":16: 'mfu' without flops_per_token is compared with plumb's own FLOP "
                     "count: say so in assumed (flops_per_token: why)");
  const SetFiles g = write_set("run_set_mfu_assumed",
                               mfu + "      flops_per_token: \"not published: plumb's count\"\n");
  const ValidationRow row = load_run_set(g.path).set.rows.at(0);
  EXPECT_EQ(row.predicted, direct_prediction(g.dir).mfu);
  EXPECT_EQ(row.published, 0.4);
  EXPECT_EQ(row.quantity, "MFU");
}

TEST(ValidationSet, AFieldNeitherPublishedNorAssumed) {
  const SetFiles f =
      write_set("run_set_unmarked", edited("      mbs: \"Megatron's default\"\n", ""));
  EXPECT_EQ(load_error(f.path), f.path + ":13: 'mbs' is neither published nor assumed: list it in "
                                         "published, or say in assumed why that value");
}

TEST(ValidationSet, AFieldBothPublishedAndAssumed) {
  const SetFiles f = write_set("run_set_both", edited("gbs, tokens", "gbs, mbs, tokens"));
  EXPECT_EQ(load_error(f.path),
            f.path + ":21: 'mbs' is both published and assumed: it is one or the other");
}

TEST(ValidationSet, UnknownKeyWithDidYouMean) {
  const SetFiles f = write_set("run_set_unknown",
                               edited("      gbs: 64\n", "      gbs: 64\n      schedul: 1f1b\n"));
  EXPECT_EQ(load_error(f.path),
            f.path + ":15: unknown key 'schedul' in layout (did you mean 'schedule'?); expected "
                     "one of tp, pp, dp, ep, etp, cp, vpp, zero, mbs, gbs, recompute, schedule, "
                     "ep_overlap, shared_expert_overlap, tp_overlap, dispatch_precision, "
                     "flash_attention, seq_len, capacity_factor, einsum_dispatch, cp_algo, dispatcher, "
                     "fp32_grad_reduce, fsdp, train_metrics, fp32_combine, eager, "
                     "grad_accum_fusion");
}

TEST(ValidationSet, BadScheduleName) {
  std::string text = edited("      gbs: 64\n", "      gbs: 64\n      schedule: dual-pipe\n");
  text.replace(text.find("gbs, tokens"), 11, "gbs, schedule, tokens");
  const SetFiles f = write_set("run_set_schedule", text);
  EXPECT_EQ(load_error(f.path),
            f.path + ":15: 'schedule': unknown schedule 'dual-pipe' (did you mean 'dualpipe'?); "
                     "expected one of 1f1b, dualpipe, interleaved, zero-bubble");
}

TEST(ValidationSet, TwoMeasuredQuantities) {
  std::string text = edited("3000\n", "3000\n      step_time_s: 2.5\n");
  text.replace(text.find("gbs, tokens"), 11, "gbs, step_time_s, tokens");
  const SetFiles f = write_set("run_set_two", text);
  EXPECT_EQ(load_error(f.path),
            f.path + ":16: 'measured' gives 'tokens_per_s_per_device' and 'step_time_s': "
                     "exactly one of tokens_per_s_per_device, step_time_s, tflops_per_device, mfu");
}

// dp 3 given: 2 × 2 × 3 = 12 devices, not 16, and 64 sequences do not split over 3 replicas.
TEST(ValidationSet, InvalidLayoutIsPlumbPlansOwnCheck) {
  std::string text = edited("      gbs: 64\n", "      gbs: 64\n      dp: 3\n");
  text.replace(text.find("gbs, tokens"), 11, "gbs, dp, tokens");
  const SetFiles f = write_set("run_set_layout", text);
  EXPECT_EQ(load_error(f.path),
            f.path + ":11: layout for gpt-test on 16 devices: tp 2 × cp 1 × pp 2 × dp 3 = 12 "
                     "devices, not 16; global batch 64 is not a multiple of dp 3 × micro-batch 1");
}

// The capacity keys reach the layout checks: a dense GPT has no experts to give a capacity.
TEST(ValidationSet, CapacityKeysAreReadIntoTheLayout) {
  std::string text = edited(
      "      gbs: 64\n", "      gbs: 64\n      capacity_factor: 1.1\n      einsum_dispatch: true\n");
  text.replace(text.find("gbs, tokens"), 11, "gbs, capacity_factor, einsum_dispatch, tokens");
  const SetFiles f = write_set("run_set_capacity", text);
  EXPECT_EQ(load_error(f.path),
            f.path + ":11: layout for gpt-test on 16 devices: --capacity-factor needs a MoE model; "
                     "--einsum-dispatch needs a MoE model");
  text.replace(text.find("capacity_factor: 1.1"), 20, "capacity_factor: -1");
  const SetFiles negative = write_set("run_set_capacity_negative", text);
  EXPECT_EQ(load_error(negative.path),
            negative.path + ":15: 'capacity_factor' must be a number from 0 to 100, got '-1'");
}

TEST(ValidationSet, MissingModelFileNamesTheKeyAndThePath) {
  const SetFiles f =
      write_set("run_set_missing", edited("model_file: gpt.yaml", "model_file: none.yaml"));
  EXPECT_EQ(load_error(f.path), f.path + ":7: 'model_file': " + f.dir +
                                    "/none.yaml: cannot read the model file: No such file or "
                                    "directory");
}

TEST(ValidationSet, UnknownCatalogNameAndMarkTypoSuggest) {
  std::string text = edited("hardware: h100-sxm", "hardware: h100");
  text.replace(text.find("[devices, tp"), 12, "[devics, tp");
  const SetFiles f = write_set("run_set_names", text);
  const std::string e = load_error(f.path);
  EXPECT_NE(e.find(f.path + ":8: 'hardware': unknown hardware 'h100' (did you mean 'h100-sxm'?)"),
            std::string::npos) << e;
  EXPECT_NE(e.find("(or hardware_file: a path relative to this file)"), std::string::npos) << e;
  EXPECT_NE(e.find(f.path + ":17: 'devics' in published is not a field this run gives (did you "
                            "mean 'devices'?)"),
            std::string::npos) << e;
  EXPECT_NE(e.find(f.path + ":9: 'devices' is neither published nor assumed"), std::string::npos)
      << e;
}

// Every problem of the file at once, one line each, in file order within a run: the second run
// repeats the first's name and gives little else.
TEST(ValidationSet, EveryProblemAtOnce) {
  std::string text = edited("      mbs: 1\n", "      mbs: 0\n");
  text.replace(text.find("tokens_per_s_per_device: 3000"), 29, "tokens_per_s_per_device: -1");
  text += "  - name: gpt on 16\n    model: gpt-test\n";
  const SetFiles f = write_set("run_set_all", text);
  const std::vector<std::string> lines = split_list(load_error(f.path), '\n');
  const std::vector<std::string> expected = {
      ":13: 'mbs' must be a whole number from 1 to 1000000, got '0'",
      ":16: 'tokens_per_s_per_device' must be a number above 0 and at most 1e+09, got '-1'",
      ":22: run name 'gpt on 16' is used twice (first at line 4)",
      ":23: 'model': unknown model 'gpt-test'",  // then the catalog's names
      ":22: a run needs 'hardware' (a catalog device) or 'hardware_file' (a path relative to "
      "this file)",
      ":22: run 'gpt on 16' needs 'devices'",
      ":22: 'measured' must give one of tokens_per_s_per_device, step_time_s, "
      "tflops_per_device, mfu",
      ":23: 'model' is neither published nor assumed: list it in published, or say in assumed "
      "why that value"};
  ASSERT_EQ(lines.size(), expected.size()) << load_error(f.path);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].substr(0, f.path.size() + expected[i].size()), f.path + expected[i]);
  }
}

// A run's cluster keys go over the catalog device's defaults as a --cluster file's do, and are
// fields like any other.
TEST(ValidationSet, ClusterOverridesReadAsAClusterFile) {
  const SetFiles f = write_set(
      "run_set_cluster",
      edited("    devices: 16\n", "    devices: 16\n    cluster: {rail_gbps_per_device: 25}\n") +
          "      cluster.rail_gbps_per_device: \"half the catalog's NIC\"\n");
  const ValidationRow row = load_run_set(f.path).set.rows.at(0);
  const ModelSpec m = load_model(f.dir + "/gpt.yaml");
  const HardwareSpec hw = load_hardware(preset_path("hardware", "h100-sxm"));
  HardwareSpec slower = hw;
  slower.scaleout_gbps_per_device = 25;
  const Network net(default_cluster(slower), Algorithm::kAuto);
  Layout p;
  p.tp = 2;
  p.pp = 2;
  p.dp = 4;
  p.zero = 1;
  p.global_batch = 64;
  p.recompute = Recompute::kSelective;
  EXPECT_EQ(row.predicted, Predictor(m, hw, net, "bf16", compute_model(hw))(p).tokens_per_s / 16);
  const SetFiles g = write_set(
      "run_set_cluster_bad",
      edited("    devices: 16\n", "    devices: 16\n    cluster: {rail_gbps_per_devic: 25}\n"));
  EXPECT_EQ(load_error(g.path),
            g.path + ":10: unknown key 'rail_gbps_per_devic' in cluster (did you mean "
                     "'rail_gbps_per_device'?); expected one of name, devices_per_node, "
                     "nodes_per_rack, scaleup_gbps_per_device, rail_gbps_per_device, "
                     "spine_gbps_per_device, oversubscription, latency_us, efficiency");
}

TEST(ValidationSet, TargetsFromTheFile) {
  const std::string title = "title: A dense GPT row\n";
  const SetFiles f = write_set("run_set_targets",
                               edited(title, title + "targets: {mape: 0.2, max_error: 0.5}\n"));
  const RunSet r = load_run_set(f.path);
  EXPECT_EQ(r.targets.mape, 0.2);
  EXPECT_EQ(r.targets.max_error, 0.5);
  const SetFiles g =
      write_set("run_set_targets_bad", edited(title, title + "targets: {mape: 12}\n"));
  EXPECT_EQ(load_error(g.path),
            g.path + ":3: 'targets.mape' must be a number above 0 and at most 1, got '12'");
}

TEST(ValidationSet, RunSetFilesAreTheFoldersYamlSorted) {
  const std::string dir = test::temp_dir("run_set_files");
  test::write_file(dir + "/b.yaml", "");
  test::write_file(dir + "/a.yaml", "");
  test::write_file(dir + "/notes.csv", "");
  EXPECT_EQ(run_set_files(dir), (std::vector<std::string>{dir + "/a.yaml", dir + "/b.yaml"}));
  EXPECT_TRUE(run_set_files(dir + "/absent").empty());
}

// Rows without a group are ranked with no other: no Spearman for them.
TEST(ValidationSet, UngroupedRowsHaveNoSpearman) {
  ValidationSet s;
  s.rows = {{"", "x", 1, 2}, {"", "y", 2, 1}, {"", "z", 3, 3}};
  summarize(s);
  EXPECT_TRUE(s.spearman.empty());
  EXPECT_NEAR(s.mape, (0.5 + 1 + 0) / 3, 1e-12);
}

// A run's split: build unless it says check; a misspelt split names the two.
TEST(ValidationSet, SplitIsBuildUnlessTheRunSaysCheck) {
  const SetFiles plain = write_set("run_set_split_none", kSet);
  EXPECT_EQ(load_run_set(plain.path).set.rows[0].split, "build");
  const SetFiles check = write_set("run_set_split", edited("    group: gpt\n", "    group: gpt\n    split: check\n"));
  const RunSet r = load_run_set(check.path);
  EXPECT_EQ(r.set.rows[0].split, "check");
  const std::vector<ValidationSet> parts = by_split(r.set);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].name, "test-set · check");
  EXPECT_EQ(by_split(load_run_set(plain.path).set)[0].name, "test-set");
  const SetFiles bad = write_set("run_set_split_bad", edited("    group: gpt\n", "    group: gpt\n    split: held-out\n"));
  EXPECT_EQ(load_error(bad.path),
            bad.path + ":6: 'split': unknown split 'held-out'; expected one of build, check");
}

// Each row as a measured step: the predicted step time scaled by published over predicted speed.
TEST(ValidationSet, EachRunIsAMeasuredStep) {
  const SetFiles f = write_set("run_set_steps", kSet);
  const RunSet r = load_run_set(f.path);
  ASSERT_EQ(r.steps.size(), 1u);
  const Prediction p = direct_prediction(f.dir);
  // 3000 tokens/s per device published against the predicted p.tokens_per_s / 16.
  EXPECT_NEAR(r.steps[0].measured[static_cast<size_t>(StepPart::kStep)],
              p.step_time_s * (p.tokens_per_s / 16) / 3000, 1e-9 * p.step_time_s);
  EXPECT_EQ(r.steps[0].layout.devices(), 16);
}


// Pairs at two scales: counted when at least 8× apart (of a split, or all), and within 10%.
TEST(ValidationSet, ScalePairSummaryCountsThoseFarEnoughApart) {
  const std::vector<ScalePair> pairs = {
      {"a", "b", 8, 64, 0.30, 0.05, "check"},    // 8×: 30% before, 5% after
      {"a", "c", 8, 32, 0.02, 0.02, "check"},    // 4×: not counted
      {"d", "e", 16, 256, -0.08, -0.12, "build"},  // 16×: 8% before, 12% after
  };
  const ScaleSummary all = summarize_pairs(pairs, 8, 0.10);
  EXPECT_EQ(all.pairs, 2u);
  EXPECT_EQ(all.within_before, 1u);
  EXPECT_EQ(all.within_after, 1u);
  const ScaleSummary check = summarize_pairs(pairs, 8, 0.10, "check");
  EXPECT_EQ(check.pairs, 1u);
  EXPECT_EQ(check.within_before, 0u);
  EXPECT_EQ(check.within_after, 1u);
}

// A pair of two source tables or clusters is not one job at two scales: the figure leaves it
// out unless asked for every pair.
TEST(ValidationSet, ScalePairSummaryKeepsPairsAcrossSourcesApart) {
  std::vector<ScalePair> pairs = {
      {"a", "b", 8, 64, 0.30, 0.05, "check"},
      {"a", "f", 8, 128, 0.40, 0.25, "check"},
  };
  pairs[1].same_source = false;
  const ScaleSummary one_job = summarize_pairs(pairs, 8, 0.10, "check");
  EXPECT_EQ(one_job.pairs, 1u);
  EXPECT_EQ(one_job.within_after, 1u);
  const ScaleSummary every = summarize_pairs(pairs, 8, 0.10, "check", PairScope::kAll);
  EXPECT_EQ(every.pairs, 2u);
  EXPECT_EQ(every.within_after, 1u);
}

// Pairs are found across the sets by model and device; a pair is of one source when both runs
// are of one group.
TEST(ValidationSet, ScalePairsMarkWhetherBothRunsAreOfOneGroup) {
  const SetFiles f = write_set("run_set_pairs", kSet);
  RunSet small = load_run_set(f.path);
  RunSet large = small;
  large.steps[0].layout.dp *= 8;
  large.set.rows[0].name = "bigger";
  std::vector<ScalePair> pairs = scale_pairs({&small, &large});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].large, "bigger");
  EXPECT_EQ(pairs[0].large_devices, 8 * pairs[0].small_devices);
  EXPECT_TRUE(pairs[0].same_source);
  large.set.rows[0].group = "another-table";
  pairs = scale_pairs({&small, &large});
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_FALSE(pairs[0].same_source);
}

}  // namespace
}  // namespace plumb::plan
