// plumb precision compare: the msprobe fixture dump in both modes (its LayerNorm is the first
// divergence), dumps written here for the unmatched reasons, several ranks and the first
// divergence's limit; two files and two directories of .npy files written here; the same result
// on any number of threads; and every refusal's exact message.
#include "precision/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"

namespace plumb::precision {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(PLUMB_TEST_FIXTURES) + "/precision/msprobe";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(PLUMB_TEST_TMP) / ("compare_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A float32 .npy (format version 1.0, NEP 1: magic, version, header length, the header dict
// padded with spaces to a multiple of 64 bytes and ended by a newline, then the data).
void write_npy(const fs::path& path, const std::vector<float>& values, const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append(63 - (10 + header.size()) % 64, ' ').push_back('\n');
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  write_file(path, bytes);
}

// A statistics-mode tensor entry whose four summaries are all `v`.
std::string tensor(double v, const std::string& shape = "[2, 3]") {
  return fmt::format(R"({{"type": "torch.Tensor", "dtype": "torch.float32", "shape": {}, "Max": {}, "Min": {},
                          "Mean": {}, "Norm": {}, "requires_grad": false}})",
                     shape, v, v, v, v);
}

std::string call(double in, double out, const std::string& out_shape = "[2, 3]") {
  return fmt::format(R"({{"input_args": [{}], "input_kwargs": {{}}, "output": [{}]}})", tensor(in),
                     tensor(out, out_shape));
}

void write_dump(const fs::path& dir, const std::string& task, const std::vector<std::pair<std::string, std::string>>& calls) {
  std::string data;
  for (const auto& [api, entry] : calls) data += (data.empty() ? "" : ", ") + fmt::format("\"{}\": {}", api, entry);
  write_file(dir / "dump.json", fmt::format(R"({{"task": "{}", "level": "L1", "framework": "pytorch",
                                                 "dump_data_dir": null, "data": {{{}}}}})",
                                            task, data));
}

std::vector<std::string> names(const CompareResult& r) {
  std::vector<std::string> out;
  for (const PairResult& p : r.pairs) out.push_back(p.name);
  return out;
}

std::vector<std::string> verdicts(const CompareResult& r) {
  std::vector<std::string> out;
  for (const PairResult& p : r.pairs) {
    out.push_back(std::string(verdict_name(p.judgement.verdict)) +
                  (p.judgement.verdict == Verdict::kUnmatched ? ": " + p.judgement.why : ""));
  }
  return out;
}

std::string error_of(const std::string& a, const std::string& b, const CompareOptions& o = {}) {
  try {
    compare(a, b, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

const std::vector<std::string> kFixturePairs = {
    "Mint.add.0.forward.input.0",
    "Mint.add.0.forward.input.1",
    "Mint.add.0.forward.output.0",
    "Functional.layer_norm.0.forward.input.0",
    "Functional.layer_norm.0.forward.input.weight",
    "Functional.layer_norm.0.forward.input.bias",
    "Functional.layer_norm.0.forward.output.0",
    "Functional.linear.0.forward.input.0",
    "Functional.linear.0.forward.input.1",
    "Functional.linear.0.forward.input.2",
    "Functional.linear.0.forward.output.0",
    "Functional.softmax.0.forward.input.0",
    "Functional.softmax.0.forward.output.0",
};
constexpr size_t kLayerNormOutput = 6;

TEST(CompareDumps, StatisticsFixtureFindsTheLayerNormWithATighterNormRule) {
  const std::string npu = kFixtures + "/statistics/npu", gpu = kFixtures + "/statistics/gpu";
  const CompareResult loose = compare(npu, gpu, {});
  EXPECT_EQ(loose.mode, "dump-statistics");
  EXPECT_EQ(loose.rule, "msprobe");
  EXPECT_EQ(names(loose), kFixturePairs);
  const PairResult& ln = loose.pairs[kLayerNormOutput];
  EXPECT_EQ(ln.api, "Functional.layer_norm.0.forward");
  EXPECT_EQ(ln.role, PairRole::kOutput);
  EXPECT_EQ(ln.order, kLayerNormOutput);
  ASSERT_TRUE(ln.stat_diffs.has_value());
  EXPECT_FALSE(ln.metrics.has_value());
  EXPECT_EQ(ln.a->dtype, "Float32");
  EXPECT_EQ(ln.a->stats->mean, 0.001384318180498667);
  // The drift moves the mean (0.00138 on the NPU, 1.546 apart relatively) but hardly the L2 norm
  // (0.36%): msprobe's statistics rule (norm relative error > 0.5) lets it pass, as msprobe would.
  EXPECT_NEAR(ln.stat_diffs->mean_rel, 1.546, 0.001);
  EXPECT_NEAR(ln.stat_diffs->norm_rel, 0.0036, 0.0001);
  EXPECT_EQ(loose.failed(), 0u);
  EXPECT_TRUE(loose.first_divergence.empty());
  // A norm threshold of 0.3% finds it: its inputs agree exactly, its output does not.
  CompareOptions tight;
  tight.thresholds.stats_rel_fail = 0.003;
  const CompareResult r = compare(npu, gpu, tight);
  for (size_t i = 0; i < kLayerNormOutput; ++i) EXPECT_EQ(r.pairs[i].judgement.verdict, Verdict::kPass) << i;
  EXPECT_EQ(r.pairs[kLayerNormOutput].judgement.verdict, Verdict::kFail);
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{kLayerNormOutput}));
  EXPECT_EQ(r.unmatched(), 0u);
}

TEST(CompareDumps, TensorFixtureFindsTheLayerNorm) {
  const CompareResult r = compare(kFixtures + "/tensor/npu", kFixtures + "/tensor/gpu", {});
  EXPECT_EQ(r.mode, "dump-tensors");
  EXPECT_EQ(names(r), kFixturePairs);
  const PairResult& ln = r.pairs[kLayerNormOutput];
  ASSERT_TRUE(ln.metrics.has_value());
  // make_dump.py prints these from the arrays: cosine 0.982176, max abs error 0.020158.
  EXPECT_NEAR(ln.metrics->cosine, 0.982176, 1e-6);
  EXPECT_NEAR(ln.metrics->max_abs_err, 0.020158, 1e-6);
  EXPECT_EQ(ln.metrics->elements, 64u);
  EXPECT_EQ(ln.judgement.verdict, Verdict::kFail);
  EXPECT_EQ(ln.a->source, kFixtures + "/tensor/npu/step0/rank0/dump_tensor_data/"
                                      "Functional.layer_norm.0.forward.output.0.npy");
  EXPECT_DOUBLE_EQ(r.pairs[0].metrics->cosine, 1.0);
  EXPECT_EQ(r.pairs[0].metrics->max_abs_err, 0.0);
  for (size_t i = 0; i < kLayerNormOutput; ++i) EXPECT_EQ(r.pairs[i].judgement.verdict, Verdict::kPass) << i;
  EXPECT_EQ(r.pairs[7].judgement.verdict, Verdict::kFail);  // the Linear's input is the drifted output
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{kLayerNormOutput}));
  // The drift goes through the Linear (cosine 0.983) and the Softmax damps it (0.9997: pass).
  EXPECT_EQ(r.failed(), 4u);
  EXPECT_EQ(r.pairs[12].judgement.verdict, Verdict::kPass);
}

TEST(CompareDumps, SummariesOfTensorDumpsWhenAskedAndAgainstAStatisticsDump) {
  CompareOptions o;
  o.statistics = true;
  o.thresholds.stats_rel_fail = 0.003;
  const CompareResult r = compare(kFixtures + "/tensor/npu", kFixtures + "/statistics/gpu", o);
  EXPECT_EQ(r.mode, "dump-statistics");
  EXPECT_EQ(names(r), kFixturePairs);
  EXPECT_TRUE(r.pairs[kLayerNormOutput].stat_diffs.has_value());
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{kLayerNormOutput}));
  // A rank folder and a dump.json name the same dumps.
  const CompareResult same = compare(kFixtures + "/statistics/npu/step0/rank0/dump.json",
                                     kFixtures + "/statistics/gpu/step0", {});
  EXPECT_EQ(names(same), kFixturePairs);
}

TEST(CompareDumps, UnmatchedPairsSayWhy) {
  const fs::path dir = scratch("unmatched");
  write_dump(dir / "a", "statistics",
             {{"Tensor.add.0.forward", call(1, 2)}, {"Tensor.contiguous.0.forward", call(2, 2)},
              {"Tensor.view.0.forward", call(2, 2, "[2, 3]")}});
  write_dump(dir / "b", "statistics",
             {{"Tensor.add.0.forward", call(1, 2)}, {"Torch.matmul.0.forward", call(2, 3)},
              {"Tensor.view.0.forward", call(2, 2, "[3, 2]")}});
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  // A call only in B comes where B ran it: after the add.
  EXPECT_EQ(names(r), (std::vector<std::string>{
                          "Tensor.add.0.forward.input.0", "Tensor.add.0.forward.output.0",
                          "Torch.matmul.0.forward.input.0", "Torch.matmul.0.forward.output.0",
                          "Tensor.contiguous.0.forward.input.0", "Tensor.contiguous.0.forward.output.0",
                          "Tensor.view.0.forward.input.0", "Tensor.view.0.forward.output.0"}));
  EXPECT_EQ(verdicts(r), (std::vector<std::string>{"pass", "pass", "unmatched: only in B", "unmatched: only in B",
                                                   "unmatched: only in A", "unmatched: only in A", "pass",
                                                   "unmatched: shape unmatched"}));
  EXPECT_FALSE(r.pairs[2].a.has_value());
  EXPECT_EQ(r.pairs[2].b->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.pairs[7].a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.pairs[7].b->shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r.unmatched(), 5u);
  EXPECT_EQ(r.failed(), 0u);
  EXPECT_TRUE(r.first_divergence.empty());
}

// Issue 28, statistics mode: A's max given as NaN on both sides is msprobe's red mark (a fail),
// while summaries that are absent (null) on both sides say nothing.
TEST(CompareDumps, StatisticsNanOnBothSidesFailsAbsentSummariesDoNot) {
  const fs::path dir = scratch("stats_nan");
  const std::string nan_out = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2], "Max": NaN,
                                  "Min": -1, "Mean": NaN, "Norm": NaN, "requires_grad": false})";
  const std::string absent = R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [0], "Max": null,
                                 "Min": null, "Mean": null, "Norm": null, "requires_grad": false})";
  const std::string entry = fmt::format(R"({{"input_args": [{}], "input_kwargs": {{}}, "output": [{}]}})", absent,
                                        nan_out);
  write_dump(dir / "a", "statistics", {{"Tensor.div.0.forward", entry}});
  write_dump(dir / "b", "statistics", {{"Tensor.div.0.forward", entry}});
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  EXPECT_EQ(verdicts(r), (std::vector<std::string>{"pass", "fail"}));
  EXPECT_EQ(r.pairs[1].judgement.why,
            "A's max nan and min -1, the same in B: msprobe marks a NaN/Inf max or min in A red");
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{1}));
}

TEST(CompareDumps, SeveralRanksMatchedByTheirPath) {
  const fs::path dir = scratch("ranks");
  write_dump(dir / "a/step0/rank0", "statistics", {{"Tensor.add.0.forward", call(1, 2)}});
  write_dump(dir / "a/step0/rank1", "statistics", {{"Tensor.add.0.forward", call(1, 2)}});
  write_dump(dir / "b/step0/rank0", "statistics", {{"Tensor.add.0.forward", call(1, 5)}});
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  EXPECT_EQ(names(r), (std::vector<std::string>{
                          "step0/rank0/Tensor.add.0.forward.input.0", "step0/rank0/Tensor.add.0.forward.output.0",
                          "step0/rank1/Tensor.add.0.forward.input.0", "step0/rank1/Tensor.add.0.forward.output.0"}));
  EXPECT_EQ(r.pairs[1].api, "step0/rank0/Tensor.add.0.forward");
  EXPECT_EQ(verdicts(r), (std::vector<std::string>{"pass", "fail", "unmatched: only in A", "unmatched: only in A"}));
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{1}));
}

TEST(CompareDumps, FirstDivergenceStopsAfterFiveCalls) {
  // Seven calls whose inputs agree and whose outputs do not: each introduced its own error, and
  // only the first five are listed. A call with a failing input is never listed.
  const fs::path dir = scratch("divergence");
  std::vector<std::pair<std::string, std::string>> a, b;
  a.push_back({"Functional.gelu.0.forward", call(7, 1)});
  b.push_back({"Functional.gelu.0.forward", call(1, 10)});
  for (int i = 0; i < 7; ++i) {
    a.push_back({fmt::format("Tensor.mul.{}.forward", i), call(1, 1)});
    b.push_back({fmt::format("Tensor.mul.{}.forward", i), call(1, 10)});
  }
  write_dump(dir / "a", "statistics", a);
  write_dump(dir / "b", "statistics", b);
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  EXPECT_EQ(r.failed(), 9u);
  EXPECT_EQ(r.first_divergence, (std::vector<size_t>{3, 5, 7, 9, 11}));
  EXPECT_EQ(r.pairs[3].api, "Tensor.mul.0.forward");
}

TEST(CompareDumps, PyTorchTensorDumpsReadTheirPtFiles) {
  // PyTorch's msprobe writes each tensor with torch.save; the .pt fixtures of pt_reader_test stand
  // in for them (tests/fixtures/precision/pt/make_pt.py).
  const fs::path dir = scratch("pt");
  const std::string pt = std::string(PLUMB_TEST_FIXTURES) + "/precision/pt/";
  const std::string entry = R"({"input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [4],
      "Max": 65504.0, "Min": -2.0, "Mean": 16375.875, "Norm": 65504.0, "requires_grad": false,
      "data_name": "Functional.relu.0.forward.input.0.pt"}], "input_kwargs": {"inplace": {"type": "bool",
      "value": false}}, "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 5.25,
      "Min": -6.0, "Mean": 0.958, "Norm": 10.5, "requires_grad": false,
      "data_name": "Functional.relu.0.forward.output.0.pt"}]})";
  for (const char* side : {"a", "b"}) {
    write_dump(dir / side / "step0/rank0", "tensor", {{"Functional.relu.0.forward", entry}});
    fs::create_directories(dir / side / "step0/rank0/dump_tensor_data");
    fs::copy_file(pt + "float16.pt", dir / side / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.input.0.pt");
    fs::copy_file(pt + "float32_2d.pt",
                  dir / side / "step0/rank0/dump_tensor_data/Functional.relu.0.forward.output.0.pt");
  }
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  EXPECT_EQ(r.mode, "dump-tensors");
  EXPECT_EQ(names(r), (std::vector<std::string>{"Functional.relu.0.forward.input.0",
                                                "Functional.relu.0.forward.output.0"}));
  EXPECT_EQ(verdicts(r), (std::vector<std::string>{"pass", "pass"}));
  ASSERT_TRUE(r.pairs[1].metrics.has_value());
  EXPECT_EQ(r.pairs[1].metrics->elements, 6u);
  EXPECT_DOUBLE_EQ(r.pairs[1].metrics->cosine, 1.0);
  EXPECT_EQ(r.pairs[1].metrics->max_abs_err, 0.0);
  EXPECT_EQ(r.pairs[0].a->dtype, "torch.float16");
}

TEST(CompareDumps, SameResultOnAnyNumberOfThreads) {
  CompareOptions one, many;
  one.threads = 1;
  many.threads = 5;
  const CompareResult r1 = compare(kFixtures + "/tensor/npu", kFixtures + "/tensor/gpu", one);
  const CompareResult r5 = compare(kFixtures + "/tensor/npu", kFixtures + "/tensor/gpu", many);
  ASSERT_EQ(names(r1), names(r5));
  for (size_t i = 0; i < r1.pairs.size(); ++i) {
    EXPECT_EQ(r1.pairs[i].metrics->cosine, r5.pairs[i].metrics->cosine) << i;
    EXPECT_EQ(r1.pairs[i].metrics->max_abs_err, r5.pairs[i].metrics->max_abs_err) << i;
  }
  EXPECT_EQ(r1.first_divergence, r5.first_divergence);
}

TEST(CompareFiles, OneTensorEachIsOnePair) {
  const fs::path dir = scratch("files");
  write_npy(dir / "a.npy", {1, 2, 3, 4}, "(2, 2)");
  write_npy(dir / "b.npy", {1, 2, 3, 4.5}, "(2, 2)");
  write_npy(dir / "c.npy", {1, 2, 3, 4}, "(4,)");
  const std::string a = (dir / "a.npy").string();
  const CompareResult r = compare(a, (dir / "b.npy").string(), {});
  EXPECT_EQ(r.mode, "files");
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].name, a);
  EXPECT_EQ(r.pairs[0].role, PairRole::kTensor);
  EXPECT_EQ(r.pairs[0].a->dtype, "float32");
  EXPECT_EQ(r.pairs[0].metrics->max_abs_err, 0.5);
  EXPECT_EQ(r.pairs[0].judgement.verdict, Verdict::kPass);  // cosine 0.9983, max abs error 0.5
  EXPECT_TRUE(r.first_divergence.empty());
  EXPECT_EQ(verdicts(compare(a, (dir / "c.npy").string(), {})),
            (std::vector<std::string>{"unmatched: shape unmatched"}));
}

TEST(CompareDirectories, FilesMatchedByRelativePath) {
  const fs::path dir = scratch("directories");
  write_npy(dir / "a/x.npy", {1, 2}, "(2,)");
  write_npy(dir / "b/x.npy", {1, 2}, "(2,)");
  write_npy(dir / "a/layers/0/y.npy", {1, 2, 3}, "(3,)");
  write_npy(dir / "b/layers/0/y.npy", {1, 2}, "(2,)");
  write_npy(dir / "a/only_a.npy", {1}, "(1,)");
  write_npy(dir / "b/only_b.npy", {1}, "(1,)");
  write_file(dir / "a/notes.txt", "not a tensor");
  const CompareResult r = compare((dir / "a").string(), (dir / "b").string(), {});
  EXPECT_EQ(r.mode, "directories");
  EXPECT_EQ(names(r), (std::vector<std::string>{"layers/0/y.npy", "only_a.npy", "only_b.npy", "x.npy"}));
  EXPECT_EQ(verdicts(r), (std::vector<std::string>{"unmatched: shape unmatched", "unmatched: only in A",
                                                   "unmatched: only in B", "pass"}));
  EXPECT_EQ(r.pairs[1].a->source, (dir / "a/only_a.npy").string());
}

TEST(CompareErrors, OneClearLineEach) {
  const fs::path dir = scratch("errors");
  write_npy(dir / "t.npy", {1}, "(1,)");
  fs::create_directories(dir / "plain");
  write_dump(dir / "odd", "overflow_check", {});
  write_dump(dir / "missing/rank0", "tensor",
             {{"Tensor.add.0.forward", R"({"output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1],
                                          "data_name": "Tensor.add.0.forward.output.0.pt"}]})"}});
  const std::string stats = kFixtures + "/statistics/npu", tensors = kFixtures + "/tensor/gpu";
  EXPECT_EQ(error_of(stats, tensors),
            stats + "/step0/rank0/dump.json is a 'statistics' dump and " + tensors +
                "/step0/rank0/dump.json a 'tensor' dump; compare dumps of one task, or compare only their "
                "summaries (--statistics)");
  EXPECT_EQ(error_of(stats, (dir / "plain").string()),
            stats + " is an msprobe dump and " + (dir / "plain").string() +
                " a directory with no dump.json (in it, in rank*/ or in step*/rank*/); plumb compares two tensor "
                "files, two directories of them, or two msprobe dumps");
  EXPECT_EQ(error_of((dir / "t.npy").string(), (dir / "plain").string()),
            (dir / "t.npy").string() + " is a tensor file and " + (dir / "plain").string() +
                " a directory with no dump.json (in it, in rank*/ or in step*/rank*/); plumb compares two tensor "
                "files, two directories of them, or two msprobe dumps");
  EXPECT_EQ(error_of((dir / "absent.npy").string(), (dir / "t.npy").string()),
            (dir / "absent.npy").string() + ": cannot read: No such file or directory");
  EXPECT_EQ(error_of((dir / "odd").string(), (dir / "odd").string()),
            (dir / "odd/dump.json").string() + ": task 'overflow_check': plumb compares 'statistics' and 'tensor' dumps");
  EXPECT_EQ(error_of((dir / "missing").string(), (dir / "missing").string()),
            (dir / "missing/rank0/dump_tensor_data/Tensor.add.0.forward.output.0.pt").string() +
                ": cannot read: No such file or directory");
  CompareOptions bad_rule;
  bad_rule.rule = "nope";
  EXPECT_NE(error_of(stats, stats, bad_rule).find("nope"), std::string::npos);
}

}  // namespace
}  // namespace plumb::precision
