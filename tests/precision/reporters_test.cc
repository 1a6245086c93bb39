// The precision reporters on hand-made CompareResults whose figures are known by construction:
// the console table (severity order, the summary line, the first divergence, the cap on passes),
// msprobe's CSV columns (both modes, quoting), JSON plumb.precision/1 (the fixed keys,
// null where undefined), the HTML page (bars, marks, escaping, no script) and plumb precision
// stats' outputs; each whole output against a golden file in tests/fixtures/precision/cli/golden/.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "report/precision_reporter.h"
#include "support/subprocess.h"

namespace plumb::report {
namespace {

using json = nlohmann::ordered_json;
using precision::CompareResult;
using precision::PairResult;
using precision::PairRole;
using precision::Side;
using precision::Verdict;

const double kNaN = precision::kUndefined;

precision::TensorStats stats(double max, double min, double mean, double norm) {
  precision::TensorStats s;
  s.elements = 64;
  s.max = max;
  s.min = min;
  s.mean = mean;
  s.l2norm = norm;
  return s;
}

Side side(std::string dtype, std::vector<int64_t> shape, std::optional<precision::TensorStats> s = {}) {
  return Side{"dump/" + dtype, std::move(dtype), std::move(shape), s};
}

precision::Metrics metrics(double cosine, double max_abs, double max_rel, double one, double five) {
  precision::Metrics m;
  m.elements = 64;
  m.cosine = cosine;
  m.max_abs_err = max_abs;
  m.max_rel_err = max_rel;
  m.mean_abs_err = max_abs / 4;
  m.rmse = max_abs / 2;
  m.euclidean = max_abs * 3;
  m.one_thousandth_ratio = one;
  m.five_thousandths_ratio = five;
  return m;
}

PairResult pair(std::string api, std::string io, PairRole role, std::optional<precision::Metrics> m,
                Verdict v, std::string why) {
  PairResult p;
  p.api = api;
  p.name = api + "." + io;
  p.role = role;
  p.a = side("torch.float16", {4, 16}, stats(2, -2, 0.5, 8));
  p.b = side("torch.float32", {4, 16}, stats(2.5, -2, 0.25, 8));
  p.metrics = m;
  p.judgement = {v, std::move(why)};
  return p;
}

// A drifting LayerNorm: its input passes, its output fails; the softmax after it fails on its
// input too (so it is not a first divergence); a dropout whose shapes differ; an add only in A.
CompareResult tensor_result() {
  CompareResult r;
  r.a = "npu_dump";
  r.b = "gpu_dump";
  r.mode = "dump-tensors";
  r.rule = "msprobe";
  r.pairs = {
      pair("Functional.linear.0.forward", "input.0", PairRole::kInput,
           metrics(1, 0, 0, 1, 1), Verdict::kPass, ""),
      pair("Functional.linear.0.forward", "output.0", PairRole::kOutput,
           metrics(0.999998, 0.00025, 0.0004, 1, 1), Verdict::kPass, ""),
      pair("Functional.layer_norm.1.forward", "input.0", PairRole::kInput,
           metrics(0.999998, 0.00025, 0.0004, 1, 1), Verdict::kPass, ""),
      pair("Functional.layer_norm.1.forward", "output.0", PairRole::kOutput,
           metrics(0.95, 0.03, 0.125, 0.5, 0.75), Verdict::kFail,
           "cosine 0.95 < 0.99 and max abs error 0.03 > 0.001"),
      pair("Functional.softmax.2.forward", "input.0", PairRole::kInput,
           metrics(0.95, 0.03, 0.125, 0.5, 0.75), Verdict::kFail,
           "cosine 0.95 < 0.99 and max abs error 0.03 > 0.001"),
      pair("Functional.softmax.2.forward", "output.0", PairRole::kOutput,
           metrics(kNaN, 1.5, 3, 0.25, 0.5), Verdict::kFail, "max abs error 1.5 > 1"),
      pair("Functional.dropout.3.forward", "output.0", PairRole::kOutput, std::nullopt,
           Verdict::kUnmatched, "shape unmatched"),
      pair("Tensor.add.4.forward", "output.0", PairRole::kOutput, std::nullopt,
           Verdict::kUnmatched, "only in A"),
  };
  r.pairs[5].metrics->nan_a = 3;
  r.pairs[6].b->shape = {16, 4};
  r.pairs[7].b.reset();
  for (size_t i = 0; i < r.pairs.size(); ++i) r.pairs[i].order = i;
  r.first_divergence = {3};
  return r;
}

// Statistics mode: a's summaries against b's; one pass, one fail (its L2 norm 13 against 8), one
// only in B.
CompareResult statistics_result() {
  CompareResult r;
  r.a = "npu_dump";
  r.b = "gpu_dump";
  r.mode = "dump-statistics";
  r.rule = "msprobe";
  PairResult pass = pair("Functional.gelu.0.forward", "output.0", PairRole::kOutput, std::nullopt,
                         Verdict::kPass, "");
  pass.a->stats = stats(2.5, -2, 0.25, 8);
  pass.stat_diffs = precision::StatDiffs{};
  PairResult fail = pair("Functional.layer_norm.1.forward", "output.0", PairRole::kOutput,
                         std::nullopt, Verdict::kFail, "L2 norm relative error 0.625 > 0.5");
  fail.a->stats = stats(2, -2, 0.5, 13);
  fail.stat_diffs = precision::stat_diffs(*fail.a->stats, *fail.b->stats);
  PairResult only_b = pair("Functional.gelu.2.forward", "output.0", PairRole::kOutput,
                           std::nullopt, Verdict::kUnmatched, "only in B");
  only_b.a.reset();
  r.pairs = {pass, fail, only_b};
  for (size_t i = 0; i < r.pairs.size(); ++i) r.pairs[i].order = i;
  return r;
}

// Compares with tests/fixtures/precision/cli/golden/<name>. After an intended change of format, rerun
// with PLUMB_UPDATE_GOLDEN=1 to rewrite the file, and review its diff.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(PLUMB_TEST_FIXTURES) + "/precision/cli/golden/" + name;
  if (std::getenv("PLUMB_UPDATE_GOLDEN")) test::write_file(path, actual);
  EXPECT_EQ(actual, test::read_file(path)) << "golden file " << path;
}

template <class Reporter>
std::string text_of(const Reporter& reporter, const CompareResult& r) {
  std::ostringstream out;
  reporter.report(r, out);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// ---- console ----------------------------------------------------------------------------------

TEST(PrecisionConsole, Golden) {
  expect_golden("console_tensors.txt",
                text_of(PrecisionConsoleReporter({true}), tensor_result()));
  expect_golden("console_statistics.txt", text_of(PrecisionConsoleReporter(), statistics_result()));
}

TEST(PrecisionConsole, FailedFirstByCosineThenUnmatchedThenPassed) {
  // Fails: the undefined cosine first, then 0.95 twice (same error: execution order); the
  // unmatched in execution order; the passes by cosine ascending.
  EXPECT_EQ(severity_order(tensor_result()), (std::vector<size_t>{5, 3, 4, 6, 7, 1, 2, 0}));
  const std::vector<std::string> lines = lines_of(text_of(PrecisionConsoleReporter(), tensor_result()));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(lines[4].substr(0, 7), "verdict");
  EXPECT_EQ(lines[5].substr(0, 4), "FAIL");
  EXPECT_TRUE(has(lines[5], "Functional.softmax.2.forward.output.0")) << lines[5];
  EXPECT_TRUE(has(lines[5], "max abs error 1.5 > 1")) << lines[5];
  EXPECT_TRUE(has(lines[6], "Functional.layer_norm.1.forward.output.0")) << lines[6];
}

TEST(PrecisionConsole, SummaryLine) {
  EXPECT_EQ(summary_line(tensor_result()), "8 pairs: 3 passed, 3 failed, 2 unmatched");
  CompareResult one;
  one.pairs.push_back(pair("x", "y", PairRole::kTensor, metrics(1, 0, 0, 1, 1), Verdict::kPass, ""));
  EXPECT_EQ(summary_line(one), "1 pair: 1 passed, 0 failed, 0 unmatched");
}

TEST(PrecisionConsole, FirstDivergenceOnlyWhenAsked) {
  const std::string with = text_of(PrecisionConsoleReporter({true}), tensor_result());
  EXPECT_TRUE(has(with,
                  "first divergence (inputs pass, outputs fail), in execution order:\n"
                  "  Functional.layer_norm.1.forward.output.0  cosine 0.95 < 0.99 and max abs "
                  "error 0.03 > 0.001\n"))
      << with;
  EXPECT_FALSE(has(text_of(PrecisionConsoleReporter(), tensor_result()), "first divergence"));
  CompareResult none = tensor_result();
  none.first_divergence.clear();
  EXPECT_TRUE(has(text_of(PrecisionConsoleReporter({true}), none),
                  "first divergence: none (no API call whose inputs pass has an output that "
                  "fails)\n"));
  CompareResult files = tensor_result();
  files.mode = "files";
  EXPECT_TRUE(has(text_of(PrecisionConsoleReporter({true}), files),
                  "first divergence: only between two dumps (API calls with inputs and "
                  "outputs); this comparison is of files\n"));
}

TEST(PrecisionConsole, PassesBeyondTheCapAreCounted) {
  CompareResult r;
  r.mode = "files";
  r.rule = "msprobe";
  for (int i = 0; i < 25; ++i) {
    r.pairs.push_back(pair("t" + std::to_string(i), "npy", PairRole::kTensor,
                           metrics(1 - i * 1e-6, 0, 0, 1, 1), Verdict::kPass, ""));
  }
  const std::string text = text_of(PrecisionConsoleReporter(), r);
  EXPECT_EQ(count(text, "\npass "), kConsolePassRows);
  EXPECT_TRUE(has(text, "... 5 more passed pairs (--csv, --json and --html list every pair)\n"));
  EXPECT_TRUE(has(text, "t24.npy")) << "the lowest cosine is shown";
  EXPECT_FALSE(has(text, "t0.npy")) << "the highest is among those left out";
}

TEST(PrecisionConsole, NumberTexts) {
  EXPECT_EQ(cosine_text(0.9999871), "0.999987");
  EXPECT_EQ(cosine_text(kNaN), "n/a");
  EXPECT_EQ(error_text(0.0234567), "2.346e-02");
  EXPECT_EQ(error_text(0), "0");
  EXPECT_EQ(error_text(HUGE_VAL), "inf");
  EXPECT_EQ(ratio_text(0.99816), "0.9982");
  EXPECT_EQ(pair_dtype(tensor_result().pairs[0]), "torch.float16 vs torch.float32");
  EXPECT_EQ(pair_shape(tensor_result().pairs[6]), "[4, 16] vs [16, 4]");
  EXPECT_EQ(pair_shape(tensor_result().pairs[7]), "[4, 16]");
}

// ---- CSV --------------------------------------------------------------------------------------

TEST(PrecisionCsv, HeadersAreMsprobes) {
  // msprobe/core/common/const.py, CompareConst.COMPARE_RESULT_HEADER and
  // SUMMARY_COMPARE_RESULT_HEADER, spelled out here apart from the code.
  EXPECT_EQ(precision_csv_header(false),
            "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,"
            "NPU Requires_grad,Bench Requires_grad,Cosine,EucDist,MaxAbsErr,MaxRelativeErr,"
            "One Thousandth Err Ratio,Five Thousandths Err Ratio,NPU max,NPU min,NPU mean,"
            "NPU l2norm,Bench max,Bench min,Bench mean,Bench l2norm,Requires_grad Consistent,"
            "Accuracy Reached or Not,Err_message");
  EXPECT_EQ(precision_csv_header(true),
            "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,"
            "NPU Requires_grad,Bench Requires_grad,Max diff,Min diff,Mean diff,L2norm diff,"
            "MaxRelativeErr,MinRelativeErr,MeanRelativeErr,NormRelativeErr,NPU max,NPU min,"
            "NPU mean,NPU l2norm,Bench max,Bench min,Bench mean,Bench l2norm,"
            "Requires_grad Consistent,Result,Err_message");
}

TEST(PrecisionCsv, Golden) {
  expect_golden("tensors.csv", text_of(PrecisionCsvReporter(), tensor_result()));
  expect_golden("statistics.csv", text_of(PrecisionCsvReporter(), statistics_result()));
}

TEST(PrecisionCsv, RowsOfTheWorkedExample) {
  const std::vector<std::string> rows = lines_of(text_of(PrecisionCsvReporter(), tensor_result()));
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[4],
            "Functional.layer_norm.1.forward.output.0,Functional.layer_norm.1.forward.output.0,"
            "torch.float16,torch.float32,\"[4, 16]\",\"[4, 16]\",,,0.95,0.09,0.03,0.125,0.5,0.75,"
            "2.0,-2.0,0.5,8.0,2.5,-2.0,0.25,8.0,,No,cosine 0.95 < 0.99 and max abs error 0.03 > "
            "0.001");
  EXPECT_EQ(rows[8],
            "Tensor.add.4.forward.output.0,N/A,torch.float16,N/A,\"[4, 16]\",N/A,,,N/A,N/A,N/A,"
            "N/A,N/A,N/A,2.0,-2.0,0.5,8.0,N/A,N/A,N/A,N/A,,N/A,No bench data matched.");
  const std::vector<std::string> stats = lines_of(text_of(PrecisionCsvReporter(), statistics_result()));
  ASSERT_EQ(stats.size(), 4u);
  // a − b and |a − b| / |b| × 100 with msprobe's "%": max 2.0 − 2.5, mean 0.5 − 0.25, norm 13 − 8.
  EXPECT_EQ(stats[2],
            "Functional.layer_norm.1.forward.output.0,Functional.layer_norm.1.forward.output.0,"
            "torch.float16,torch.float32,\"[4, 16]\",\"[4, 16]\",,,-0.5,0.0,0.25,5.0,20.0%,0.0%,"
            "100.0%,62.5%,2.0,-2.0,0.5,13.0,2.5,-2.0,0.25,8.0,,Warning,L2 norm relative error "
            "0.625 > 0.5");
}

TEST(PrecisionCsv, QuotingAndFormulaDefused) {
  CompareResult r = tensor_result();
  r.pairs.resize(1);
  r.pairs[0].name = "=HYPERLINK(\"x\"),y";
  const std::vector<std::string> rows = lines_of(text_of(PrecisionCsvReporter(), r));
  ASSERT_EQ(rows.size(), 2u);
  const std::string cell = "\"'=HYPERLINK(\"\"x\"\"),y\"";
  EXPECT_EQ(rows[1].substr(0, 2 * cell.size() + 2), cell + "," + cell + ",") << rows[1];
}

// ---- JSON -------------------------------------------------------------------------------------

TEST(PrecisionJson, FixedKeysInEveryPair) {
  const json j = precision_to_json(tensor_result());
  EXPECT_EQ(j["schema"], "plumb.precision/1");
  ASSERT_EQ(j["pairs"].size(), 8u);
  for (const json& p : j["pairs"]) {
    for (const char* key : {"name", "dtype", "shape", "cosine", "max_abs_err", "max_rel_err",
                            "mean_abs_err", "rmse", "euclidean", "one_thousandth_ratio",
                            "five_thousandths_ratio", "nan_a", "nan_b", "verdict"}) {
      EXPECT_TRUE(p.contains(key)) << key << " in " << p.dump();
    }
  }
  std::vector<std::string> verdicts;
  for (const json& p : j["pairs"]) verdicts.push_back(p["verdict"]);
  EXPECT_EQ(verdicts, (std::vector<std::string>{"pass", "pass", "pass", "fail", "fail", "fail",
                                                "unmatched", "unmatched"}));
}

TEST(PrecisionJson, ValuesAndNullWhereUndefined) {
  const json j = precision_to_json(tensor_result());
  const json& ln = j["pairs"][3];
  EXPECT_EQ(ln["name"], "Functional.layer_norm.1.forward.output.0");
  EXPECT_EQ(ln["dtype"], "torch.float16");
  EXPECT_EQ(ln["shape"], json({4, 16}));
  EXPECT_EQ(ln["cosine"], 0.95);
  EXPECT_EQ(ln["max_abs_err"], 0.03);
  EXPECT_EQ(ln["euclidean"], 0.09);
  EXPECT_EQ(ln["first_divergence"], true);
  EXPECT_EQ(ln["role"], "output");
  EXPECT_EQ(ln["api"], "Functional.layer_norm.1.forward");
  const json& softmax = j["pairs"][5];
  EXPECT_TRUE(softmax["cosine"].is_null());  // undefined (msprobe's N/A)
  EXPECT_EQ(softmax["nan_a"], 3);
  EXPECT_EQ(softmax["first_divergence"], false);
  const json& dropout = j["pairs"][6];
  EXPECT_TRUE(dropout["cosine"].is_null());
  EXPECT_TRUE(dropout["max_abs_err"].is_null());
  EXPECT_EQ(dropout["nan_a"], 0);  // not compared: from a's summary
  EXPECT_EQ(dropout["why"], "shape unmatched");
  EXPECT_EQ(dropout["b_shape"], json({16, 4}));
  EXPECT_TRUE(j["pairs"][7]["b_dtype"].is_null());
  EXPECT_EQ(j["summary"], json({{"pairs", 8}, {"passed", 3}, {"failed", 3}, {"unmatched", 2}}));
  EXPECT_EQ(j["first_divergence"], json({"Functional.layer_norm.1.forward.output.0"}));
}

TEST(PrecisionJson, StatisticsPairs) {
  const json j = precision_to_json(statistics_result());
  EXPECT_EQ(j["mode"], "dump-statistics");
  const json& fail = j["pairs"][1];
  EXPECT_TRUE(fail["cosine"].is_null());
  EXPECT_EQ(fail["stat_diffs"]["mean_rel"], 1.0);
  EXPECT_EQ(fail["stat_diffs"]["norm_rel"], 0.625);
  EXPECT_EQ(fail["stats_b"]["max"], 2.5);
  EXPECT_EQ(fail["nan_a"], 0);  // from the summary
  EXPECT_TRUE(j["pairs"][2]["dtype"] == "torch.float32");  // b's when a is absent
}

TEST(PrecisionJson, Golden) {
  expect_golden("tensors.json", text_of(PrecisionJsonReporter(), tensor_result()));
}

TEST(PrecisionJson, TheStreamedDocumentIsTheDocument) {
  for (const CompareResult& r : {tensor_result(), statistics_result(), CompareResult{}}) {
    const std::string text = text_of(PrecisionJsonReporter(), r);
    EXPECT_EQ(json::parse(text), precision_to_json(r)) << text;
  }
  const std::vector<std::string> lines = lines_of(text_of(PrecisionJsonReporter(), tensor_result()));
  EXPECT_EQ(lines[1], "  \"schema\": \"plumb.precision/1\",");
  EXPECT_EQ(lines.size(), 8u + 1 + 8 + 2) << "the head, \"pairs\", a line per pair, the ends";
}

// ---- HTML -------------------------------------------------------------------------------------

std::string page_of(const CompareResult& r) {
  std::ostringstream out;
  write_precision_html(r, {}, out);
  return out.str();
}

TEST(PrecisionHtml, BarsMarksAndTable) {
  const std::string page = page_of(tensor_result());
  EXPECT_EQ(count(page, "<svg class=\"bars\""), 2u);  // cosine and max abs error
  EXPECT_EQ(count(page, "<g class=\"bar fail\">"), 2u * 3);
  EXPECT_EQ(count(page, "<g class=\"bar pass\">"), 2u * 3);
  EXPECT_EQ(count(page, "<g class=\"bar unmatched\">"), 2u * 2);
  EXPECT_EQ(count(page, "class=\"mark-fail\""), 2u * 3);
  EXPECT_EQ(count(page, "class=\"mark-unmatched\""), 2u * 2);
  EXPECT_EQ(count(page, "class=\"undefined\""), 1u);  // softmax's cosine
  EXPECT_EQ(count(page, "<line class=\"threshold\" x1=\"72\""), 4u);  // 0.99, 0.9; 0.001, 1
  EXPECT_EQ(count(page, "<tr class=\"fail\">"), 3u);
  EXPECT_TRUE(has(page, "<li><code>Functional.layer_norm.1.forward.output.0</code>"));
  EXPECT_TRUE(has(page, "<b>8 pairs: 3 passed, 3 failed, 2 unmatched</b>"));
  EXPECT_FALSE(has(page, "<script"));
  EXPECT_FALSE(has(page, "http"));
}

TEST(PrecisionHtml, StatisticsModeDrawsTheRelativeDifference) {
  const std::string page = page_of(statistics_result());
  EXPECT_EQ(count(page, "<svg class=\"bars\""), 1u);
  EXPECT_TRUE(has(page, "Relative difference of the L2 norm"));
  EXPECT_TRUE(has(page, "<th>l2norm rel</th>"));
}

TEST(PrecisionHtml, EveryNameEscaped) {
  CompareResult r = tensor_result();
  r.a = "<a>&";
  r.pairs[3].name = "<script>alert(1)</script>";
  r.pairs[3].judgement.why = "\"quoted\" & <b>";
  const std::string page = page_of(r);
  EXPECT_FALSE(has(page, "<script>"));
  EXPECT_TRUE(has(page, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(has(page, "&lt;a&gt;&amp;"));
  EXPECT_TRUE(has(page, "&quot;quoted&quot; &amp; &lt;b&gt;"));
}

TEST(PrecisionHtml, AtMostMaxBarsAndEmpty) {
  CompareResult r;
  r.mode = "directories";
  r.rule = "assert-close";
  for (size_t i = 0; i < kMaxPrecisionBars + 3; ++i) {
    PairResult p = pair("t" + std::to_string(i), "npy", PairRole::kTensor, metrics(1, 0, 0, 1, 1),
                        Verdict::kPass, "");
    p.order = i;
    r.pairs.push_back(p);
  }
  const std::string page = page_of(r);
  EXPECT_EQ(count(page, "<g class=\"bar pass\">"), 2 * kMaxPrecisionBars);
  EXPECT_TRUE(has(page, fmt::format("The first {} of {} pairs are drawn", kMaxPrecisionBars,
                                    kMaxPrecisionBars + 3)));
  EXPECT_EQ(count(page, "class=\"threshold\""), 0u);  // assert-close has no such lines
  EXPECT_TRUE(has(page_of(CompareResult{}), "No pair to draw."));
}

// Hundreds of operators: the axis names one pair in k (k keeps the slanted names 16 units apart)
// and always the first failure, whose closer neighbours give way; a long name leaves out the head
// every name shares but its last segment, then keeps its head and the tail from a '.'. Under assert-close no line is drawn and the caption says why.
TEST(PrecisionHtml, HundredsOfOperatorsNameEveryKthAndTheFirstFailure) {
  CompareResult r;
  r.mode = "directories";
  r.rule = "assert-close";
  for (size_t i = 0; i < 500; ++i) {
    const std::string api = fmt::format("Module.model.layers.{}.self_attention.core_attention", i);
    const bool fails = i == 237 || i == 300;
    PairResult p = pair(api, "forward.0.output.0", PairRole::kTensor, metrics(1, 0, 0, 1, 1),
                        fails ? Verdict::kFail : Verdict::kPass, "");
    p.metrics->rtol = 1e-3;
    p.metrics->atol = 1e-5;
    p.order = i;
    r.pairs.push_back(p);
  }
  const std::string page = page_of(r);
  // 858 units for 500 bars: 1.716 each, one name in 10: 0, 10, ... 490 less 230 and 240 (48),
  // and 237.
  EXPECT_EQ(count(page, "<text class=\"xname\""), 2u * 48);
  EXPECT_EQ(count(page, "<text class=\"xname first\""), 2u);
  EXPECT_TRUE(has(page, "<text class=\"xname first\" x=\"479.6\" y=\"262.0\" transform=\"rotate(45 "
                        "479.6 262.0)\"><title>Module.model.layers.237.self_attention.core_attention."
                        "forward.0.output.0</title>…layers.237.self_atte…forward.0.output.0</text>"));
  EXPECT_FALSE(has(page, "<title>Module.model.layers.230."));
  EXPECT_EQ(count(page, "operator, in execution order (one in 10 named; hover a bar for its name)"),
            2u);
  EXPECT_EQ(count(page, "text-anchor=\"start\">first failure</text>"), 2u);
  EXPECT_EQ(count(page, "class=\"threshold\""), 0u);
  EXPECT_EQ(count(page, "<p class=\"note rule-note\">No threshold line: rule assert-close judges "
                        "each element, not these per-operator figures. A pair fails when any "
                        "element has |a - b| &gt; atol + rtol * |b| (torch.float16 vs torch.float32 "
                        "rtol 0.001, atol 1e-05).</p>"),
            2u);
}

// ---- plumb precision stats --------------------------------------------------------------------

StatsReport stats_report() {
  precision::TensorStats s = stats(3, -1, 0.5, 4);
  s.std = 1.25;
  s.nan = 2;
  s.inf = 1;
  return {"model.safetensors",
          {{"model.safetensors:weight", "float32", {2, 3}, s},
           {"model.safetensors:empty", "bfloat16", {0}, precision::TensorStats{}}}};
}

TEST(PrecisionStats, ConsoleAndJson) {
  std::ostringstream out;
  print_precision_stats(stats_report(), out);
  expect_golden("stats_console.txt", out.str());
  const json j = precision_stats_json(stats_report());
  EXPECT_EQ(j["schema"], "plumb.precision-stats/1");
  EXPECT_EQ(j["tensors"][0]["name"], "model.safetensors:weight");
  EXPECT_EQ(j["tensors"][0]["shape"], json({2, 3}));
  EXPECT_EQ(j["tensors"][0]["std"], 1.25);
  EXPECT_EQ(j["tensors"][0]["nan"], 2);
  EXPECT_TRUE(j["tensors"][1]["min"].is_null());
}

}  // namespace
}  // namespace plumb::report
