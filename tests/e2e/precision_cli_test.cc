// plumb precision end to end, the real binary on files numpy wrote (tests/fixtures/precision/cli,
// make_files.py) and on the msprobe dump fixture of a drifting LayerNorm
// (tests/fixtures/precision/msprobe, make_dump.py): exit 0 when every pair passes, 1 when one
// fails, 2 with one exact line for bad input; the console, CSV, JSON and the stats command; the
// HTML page in Debian's headless Chromium (the DOM holds the bars, the console stays silent, a
// screenshot is kept as <build>/artefacts/precision-report.png).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "support/browser.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

const std::string kPlumb = std::string(PLUMB_BIN) + " precision ";
const std::string kFiles = std::string(PLUMB_TEST_FIXTURES) + "/precision/cli/";
const std::string kDumps = std::string(PLUMB_TEST_FIXTURES) + "/precision/msprobe/";
const std::string kTensorDumps = kDumps + "tensor/npu " + kDumps + "tensor/gpu";
const std::string kStatisticsDumps = kDumps + "statistics/npu " + kDumps + "statistics/gpu";
const std::string kArtefacts = PLUMB_ARTEFACT_DIR;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---- exit codes on files -----------------------------------------------------------------------

TEST(PrecisionCli, FilesThatAgreeExitZero) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "files/close.npy " + kFiles + "files/ref.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(has(r.out, "mode files, rule msprobe\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n1 pair: 1 passed, 0 failed, 0 unmatched\n")) << r.out;
}

TEST(PrecisionCli, ADriftFailsWithExitOne) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "files/drift.npy " + kFiles + "files/ref.npy");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 8u) << r.out;
  EXPECT_EQ(lines[5].substr(0, 4), "FAIL");
  // numpy on the same two arrays: cosine 0.9789806065240909, max |a − b| 0.19999998807907104.
  EXPECT_TRUE(has(lines[5], "float32  [4, 8]  0.978981    2.000e-01")) << lines[5];
  EXPECT_TRUE(has(lines[5], "cosine 0.978981 < 0.99 and max abs error 0.2 > 0.001")) << lines[5];
  EXPECT_EQ(lines[7], "1 pair: 0 passed, 1 failed, 0 unmatched");
}

TEST(PrecisionCli, ThresholdsAndRulesChangeTheVerdict) {
  const std::string files = kFiles + "files/drift.npy " + kFiles + "files/ref.npy";
  EXPECT_EQ(run_command(kPlumb + "compare " + files + " --cosine 0.97").exit_code, 0);
  EXPECT_EQ(run_command(kPlumb + "compare " + files + " --cosine 0.97 --max-abs-fail 0.1").exit_code, 1);
  EXPECT_EQ(run_command(kPlumb + "compare " + files + " --rule assert-close").exit_code, 1);
  const test::Run loose = run_command(kPlumb + "compare " + files + " --rule assert-close --atol 0.25");
  EXPECT_EQ(loose.exit_code, 0) << loose.out << loose.err;
  EXPECT_TRUE(has(loose.out, "mode files, rule assert-close\n")) << loose.out;
}

TEST(PrecisionCli, ShapeMismatchIsUnmatchedNotAnError) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "files/wide.npy " + kFiles + "files/ref.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "UNMATCHED")) << r.out;
  EXPECT_TRUE(has(r.out, "float32  [8, 4] vs [4, 8]")) << r.out;
  EXPECT_TRUE(has(r.out, "shape unmatched\n")) << r.out;
  EXPECT_TRUE(has(r.out, "1 pair: 0 passed, 0 failed, 1 unmatched\n")) << r.out;
}

TEST(PrecisionCli, RawFilesWithDtypeAndShape) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "raw/drift.bin " + kFiles +
                            "raw/ref.bin --dtype float16 --shape 4,8 --json -");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pairs"][0]["dtype"], "float16");
  EXPECT_EQ(j["pairs"][0]["shape"], nlohmann::json({4, 8}));
  EXPECT_EQ(j["pairs"][0]["verdict"], "fail");
  EXPECT_TRUE(has(r.err, "1 pair: 0 passed, 1 failed, 0 unmatched\n")) << "the table goes to stderr";
}

TEST(PrecisionCli, DirectoriesMatchedByRelativePath) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "dir_a " + kFiles + "dir_b --csv -");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> rows = lines_of(r.out);
  ASSERT_EQ(rows.size(), 5u) << r.out;
  EXPECT_EQ(rows[0].substr(0, 59), "NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,");
  EXPECT_EQ(rows[1].substr(0, 26), "only_a.npy,N/A,N/A,N/A,N/A");
  EXPECT_TRUE(has(rows[1], ",N/A,No bench data matched.")) << rows[1];
  EXPECT_EQ(rows[2].substr(0, 15), "N/A,only_b.npy,");
  EXPECT_EQ(rows[3].substr(0, 61), "sub/y.npy,sub/y.npy,float32,float32,\"[4, 8]\",\"[4, 8]\",,,0.978");
  EXPECT_TRUE(has(rows[3], ",No,cosine 0.978981 < 0.99 and max abs error 0.2 > 0.001")) << rows[3];
  EXPECT_EQ(rows[4].substr(0, 52), "x.npy,x.npy,float32,float32,\"[4, 8]\",\"[4, 8]\",,,1.0,");
  EXPECT_TRUE(has(r.err, "4 pairs: 1 passed, 1 failed, 2 unmatched\n")) << r.err;
}

// ---- the drifting LayerNorm (msprobe dumps) ----------------------------------------------------

TEST(PrecisionCli, TensorDumpsFindTheLayerNorm) {
  const test::Run r = run_command(kPlumb + "compare " + kTensorDumps + " --first-divergence");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(has(r.out, "13 pairs: 9 passed, 4 failed, 0 unmatched\n")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "first divergence (inputs pass, outputs fail), in execution order:\n"
                  "  Functional.layer_norm.0.forward.output.0  cosine 0.982176 < 0.99 and max abs "
                  "error 0.020158 > 0.001\n"))
      << r.out;
  // The worst first: the LayerNorm's output (and the Linear's input it feeds) before the Linear's
  // output, whose cosine is higher.
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GT(lines.size(), 6u);
  EXPECT_TRUE(has(lines[5], "FAIL     Functional.layer_norm.0.forward.output.0")) << lines[5];
}

TEST(PrecisionCli, TensorDumpsJsonAndCsv) {
  const std::string dir = temp_dir("precision-dumps");
  const test::Run r = run_command(kPlumb + "compare " + kTensorDumps + " --json " + dir + "/r.json --csv " +
                            dir + "/r.csv --threads 2");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir + "/r.json"));
  EXPECT_EQ(j["schema"], "plumb.precision/1");
  EXPECT_EQ(j["mode"], "dump-tensors");
  EXPECT_EQ(j["summary"]["failed"], 4);
  EXPECT_EQ(j["first_divergence"], nlohmann::json({"Functional.layer_norm.0.forward.output.0"}));
  for (const nlohmann::json& p : j["pairs"]) {
    if (p["name"] != "Functional.layer_norm.0.forward.output.0") continue;
    EXPECT_EQ(p["verdict"], "fail");
    EXPECT_EQ(p["role"], "output");
    EXPECT_EQ(p["api"], "Functional.layer_norm.0.forward");
    EXPECT_NEAR(p["cosine"].get<double>(), 0.982176, 1e-6);
  }
  const std::vector<std::string> csv = lines_of(read_file(dir + "/r.csv"));
  ASSERT_EQ(csv.size(), 14u);
  EXPECT_TRUE(has(csv[0], ",Cosine,EucDist,MaxAbsErr,MaxRelativeErr,")) << csv[0];
}

TEST(PrecisionCli, StatisticsDumpsPassUnlessTheThresholdTightens) {
  const test::Run r = run_command(kPlumb + "compare " + kStatisticsDumps + " --first-divergence");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "mode dump-statistics, rule msprobe\n")) << r.out;
  EXPECT_TRUE(has(r.out, "13 pairs: 13 passed, 0 failed, 0 unmatched\n")) << r.out;
  const test::Run tight = run_command(kPlumb + "compare " + kStatisticsDumps +
                                " --stats-rel 0.0001 --first-divergence --csv -");
  ASSERT_EQ(tight.exit_code, 1) << tight.err;
  EXPECT_TRUE(has(tight.err,
                  "first divergence (inputs pass, outputs fail), in execution order:\n"
                  "  Functional.layer_norm.0.forward.output.0  L2 norm relative error"))
      << tight.err;
  EXPECT_TRUE(has(tight.out, ",Max diff,Min diff,Mean diff,L2norm diff,")) << tight.out;
  EXPECT_TRUE(has(tight.out, ",Warning,L2 norm relative error")) << tight.out;
}

// ---- plumb precision stats ---------------------------------------------------------------------

TEST(PrecisionCli, StatsOfAFile) {
  const test::Run r = run_command(kPlumb + "stats " + kFiles + "files/nan.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  // The name column as wide as the file's name, then the figures.
  EXPECT_EQ(lines[2], "name" + std::string(kFiles.size() + std::string("files/nan.npy").size() - 2, ' ') +
                          "dtype    shape   elements        min      max       mean       std  NaN  Inf");
  EXPECT_TRUE(has(lines[3], "float32  [4, 8]        32  -0.998082  0.99683  -0.052211  0.701695    2    1"))
      << lines[3];
  const test::Run j = run_command(kPlumb + "stats " + kFiles + "files/nan.npy --json -");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["schema"], "plumb.precision-stats/1");
  EXPECT_EQ(doc["tensors"][0]["nan"], 2);
  EXPECT_EQ(doc["tensors"][0]["inf"], 1);
  EXPECT_EQ(doc["tensors"][0]["elements"], 32);
}

// ---- issue 28: what used to pass -------------------------------------------------------------

// Raw float32 files written here: `values` as one tensor.
std::string raw_f32(const std::string& dir, const std::string& name, const std::vector<float>& values) {
  const std::string path = dir + "/" + name;
  write_file(path, std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return path;
}

// The console row of the one pair: its verdict, cosine and reason.
std::string pair_row(const test::Run& r) {
  const std::vector<std::string> lines = lines_of(r.out);
  return lines.size() > 5 ? lines[5] : "(no row) " + r.out;
}

TEST(PrecisionCli, ZerosNanAndTinyOutputsFailWithTheirReason) {
  const std::string dir = temp_dir("precision-issue28");
  const float nan = __builtin_nanf("");
  const std::string ref = raw_f32(dir, "ref.bin", {0.5f, -0.25f, 0.125f, 0.75f});
  const std::string raw = " --dtype float32";
  const test::Run zeros = run_command(kPlumb + "compare " + raw_f32(dir, "zeros.bin", {0, 0, 0, 0}) + " " + ref + raw);
  EXPECT_EQ(zeros.exit_code, 1) << zeros.out << zeros.err;
  EXPECT_TRUE(has(pair_row(zeros), "     n/a    7.500e-01    1.000e+00    0.0000    0.0000  A is all zero and B is not: "
                                   "no cosine (max abs error 0.75)"))
      << pair_row(zeros);
  const test::Run nans =
      run_command(kPlumb + "compare " + raw_f32(dir, "nan_a.bin", {nan, nan}) + " " + raw_f32(dir, "nan_b.bin", {nan, nan}) + raw);
  EXPECT_EQ(nans.exit_code, 1) << nans.out << nans.err;
  EXPECT_TRUE(has(pair_row(nans), "1.000000            0            0    1.0000    1.0000  A holds 2 NaN and 0 Inf, at "
                                  "the same places as B: msprobe sets them to 0 for the metrics and marks the pair "
                                  "red (a NaN/Inf max or min in A)"))
      << pair_row(nans);
  const test::Run tiny =
      run_command(kPlumb + "compare " + raw_f32(dir, "tiny.bin", {0.5e-30f, -0.25e-30f, 0.125e-30f, 0.75e-30f}) + " " +
                  ref + raw);
  EXPECT_EQ(tiny.exit_code, 1) << tiny.out << tiny.err;
  EXPECT_TRUE(has(pair_row(tiny), "1.000000    7.500e-01    1.000e+00    0.0000    0.0000  A is zero at B's scale: its L2 "
                                  "norm is 1e-30 of B's, not above msprobe's zero norm 2.22e-16 (max abs error 0.75)"))
      << pair_row(tiny);
}

// A .pt whose storage's bytes no longer match the zip's CRC-32: bad input, not numbers.
TEST(PrecisionCli, ADamagedPtIsRefused) {
  const std::string dir = temp_dir("precision-crc");
  const std::string good = std::string(PLUMB_TEST_FIXTURES) + "/precision/pt/float32_2d.pt";
  std::string bytes = read_file(good);
  bytes[384] = static_cast<char>(bytes[384] ^ 0xff);
  write_file(dir + "/damaged.pt", bytes);
  const test::Run r = run_command(kPlumb + "compare " + dir + "/damaged.pt " + good);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + dir + "/damaged.pt: zip entry 'float32_2d/data/0': its 24 bytes have CRC-32 "
                   "61dd8917, and the zip records 68100c46: the entry is damaged\n");
}

// ---- bad input: exit 2, one line --------------------------------------------------------------

TEST(PrecisionCli, BadInputOneLineEach) {
  const std::string ok = kFiles + "files/drift.npy " + kFiles + "files/ref.npy";
  const std::string raw = kFiles + "raw/drift.bin " + kFiles + "raw/ref.bin";
  const struct {
    std::string args;
    std::string err;
  } cases[] = {
      {"compare " + ok + " --rule foo",
       "plumb: error: --rule: unknown rule 'foo'; the rules are: msprobe, assert-close\n"},
      {"compare " + ok + " --rule assert-close --cosine 0.95",
       "plumb: error: --cosine: a threshold of --rule msprobe; this comparison uses --rule "
       "assert-close\n"},
      {"compare " + ok + " --rtol 0.1",
       "plumb: error: --rtol: a threshold of --rule assert-close; this comparison uses --rule "
       "msprobe\n"},
      {"compare " + ok + " --cosine 2",
       "plumb: error: --cosine: must be a number from -1 to 1, got '2'; run 'plumb --help' for "
       "usage\n"},
      {"compare " + raw + " --dtype q8",
       "plumb: error: --dtype: unknown element type 'q8'; expected one of bool, int8, int16, "
       "int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64, "
       "complex64, complex128\n"},
      {"compare " + raw + " --dtype f16 --shape 2,x",
       "plumb: error: --shape '2,x': expected whole numbers separated by commas, e.g. 1024,4096\n"},
      {"compare " + raw,
       "plumb: error: " + kFiles + "raw/drift.bin: raw data needs --dtype (and --shape, else one "
       "dimension of the file's size)\n"},
      {"compare " + raw + " --dtype f16 --shape 3,3",
       "plumb: error: " + kFiles + "raw/drift.bin: 64 bytes, but --shape [3, 3] of float16 needs 18\n"},
      {"compare " + kFiles + "files/nope.npy " + kFiles + "files/ref.npy",
       "plumb: error: " + kFiles + "files/nope.npy: cannot read: No such file or directory\n"},
      {"compare " + kFiles + "files/drift.npy " + kFiles + "dir_b",
       "plumb: error: " + kFiles + "files/drift.npy is a tensor file and " + kFiles +
           "dir_b a directory with no dump.json (in it, in rank*/ or in step*/rank*/); plumb "
           "compares two tensor files, two directories of them, or two msprobe dumps\n"},
      {"compare " + kFiles + "make_files.py " + kFiles + "files/ref.npy",
       "plumb: error: " + kFiles + "make_files.py: not a tensor file this reader knows (.npy, "
       ".pt, .safetensors; raw data needs --dtype)\n"},
      {"compare " + ok + " --json " + kFiles + "files/ref.npy",
       "plumb: error: --json " + kFiles + "files/ref.npy: is also B (" + kFiles +
           "files/ref.npy); writing it would destroy what is read: choose another file\n"},
      {"compare " + ok + " --threads -1",
       "plumb: error: --threads: must be a whole number from 0 to 1024, got '-1'; run 'plumb "
       "--help' for usage\n"},
      {"stats " + kFiles + "dir_a", "plumb: error: " + kFiles + "dir_a: is a directory, not a file\n"},
      {"frobnicate", "plumb: error: A subcommand is required; run 'plumb --help' for usage\n"},
  };
  for (const auto& c : cases) {
    const test::Run r = run_command(kPlumb + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST(PrecisionCli, EveryFlagProblemInOneMessage) {
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "raw/drift.bin " + kFiles +
                            "raw/ref.bin --rule assert-close --cosine 0.9 --max-abs 0.1 --dtype "
                            "q8 --shape 2,,3");
  EXPECT_EQ(r.exit_code, 2);
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_EQ(lines[0].substr(0, 23), "plumb: error: --cosine:");
  EXPECT_EQ(lines[1].substr(0, 10), "--max-abs:");
  EXPECT_EQ(lines[2].substr(0, 8), "--dtype:");
  EXPECT_EQ(lines[3].substr(0, 8), "--shape ");
}

TEST(PrecisionCli, AFailedComparisonLeavesNoOutputFile) {
  const std::string dir = temp_dir("precision-no-output");
  const test::Run r = run_command(kPlumb + "compare " + kFiles + "files/nope.npy " + kFiles +
                            "files/ref.npy --json " + dir + "/r.json --html " + dir + "/r.html");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.html"));
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "no temporary file left behind";
}

// ---- the HTML page in a real browser ---------------------------------------------------------

std::string write_page() {
  std::filesystem::create_directories(kArtefacts);
  const std::string path = kArtefacts + "/precision-report.html";
  const test::Run r = run_command(kPlumb + "compare " + kTensorDumps + " --html " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  return path;
}

TEST(PrecisionReportBrowser, BarsMarksAndASilentConsole) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const test::Run run = chromium("--dump-dom file://" + path, "precision-dom");
  ASSERT_EQ(run.exit_code, 0) << "chromium (exit 124: timed out after " << kChromiumTimeoutSeconds
                              << " s)\n"
                              << run.err;
  EXPECT_EQ(count(run.out, "<svg class=\"bars\""), 2u);  // cosine, max abs error
  EXPECT_EQ(count(run.out, "<g class=\"bar fail\">"), 2u * 4);
  EXPECT_EQ(count(run.out, "<g class=\"bar pass\">"), 2u * 9);
  EXPECT_EQ(count(run.out, "class=\"mark-fail\""), 2u * 4);
  EXPECT_EQ(count(run.out, "<tr class=\"fail\">"), 4u);
  EXPECT_TRUE(has(run.out, "<li><code>Functional.layer_norm.0.forward.output.0</code>")) << run.out;
  EXPECT_EQ(count(run.out, "<script"), 0u);
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

// The x axis names the operators (slanted, the whole name on hover), each threshold line says
// which metric, value, rule and flag it is and the caption what crossing it means, in the console's
// words; the first pair to fail, in execution order, is marked. On the msprobe dump of a drifting
// LayerNorm: 13 pairs, the first failure is the LayerNorm's output (the first divergence).
TEST(PrecisionReportBrowser, OperatorNamesThresholdsAndTheFirstFailure) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const test::Run run = chromium("--dump-dom file://" + path, "precision-names");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& dom = run.out;
  // Every one of the 13 pairs named on both charts; the longest keep head and tail.
  EXPECT_EQ(count(dom, "<text class=\"xname"), 2u * 13);
  for (const char* name : {"Mint.add.0.forward.input.0", "Functional.linear.0.forward.input.2",
                           "Functional.softmax.0.forward.output.0"}) {
    EXPECT_EQ(count(dom, fmt::format("<title>{0}</title>{0}</text>", name)), 2u) << name;
  }
  EXPECT_EQ(count(dom, "<title>Functional.layer_norm.0.forward.input.weight</title>"
                       "Functional.layer_…0.forward.input.weight</text>"),
            2u);
  // The first failure: its name in bold red on the axis, a band behind its bar, a label above.
  EXPECT_EQ(count(dom, "<title>Functional.layer_norm.0.forward.output.0</title>"
                       "Functional.layer_norm.0.forward.output.0</text>"),
            2u);
  EXPECT_EQ(count(dom, "<text class=\"xname first\""), 2u);
  const size_t first = dom.find("<text class=\"xname first\"");
  EXPECT_EQ(dom.find("<title>", first), dom.find("<title>Functional.layer_norm.0.forward.output.0", first));
  EXPECT_EQ(count(dom, "<rect class=\"first-fail\" x=\"468.00\""), 2u);  // the 7th of 13 columns
  EXPECT_EQ(count(dom, "text-anchor=\"start\">first failure</text>"), 2u);
  EXPECT_EQ(count(dom, "</svg>first failure in execution order</span>"), 2u);
  // Each threshold line labelled in the margin: metric and value, then rule and flag.
  for (const char* label : {"cosine 0.99<tspan class=\"tsource\" x=\"938\" dy=\"12\">msprobe, --cosine</tspan>",
                            "cosine 0.9<tspan class=\"tsource\" x=\"938\" dy=\"12\">msprobe, --cosine-fail</tspan>",
                            "max abs error 0.001<tspan class=\"tsource\" x=\"938\" dy=\"12\">msprobe, --max-abs</tspan>",
                            "max abs error 1<tspan class=\"tsource\" x=\"938\" dy=\"12\">msprobe, --max-abs-fail</tspan>"}) {
    EXPECT_EQ(count(dom, fmt::format("\">{}</text>", label)), 1u) << label;
  }
  // What crossing each means, as the console's reason says it.
  for (const char* caption :
       {"<li><b>cosine 0.99</b> (msprobe, --cosine): a pair below it fails when its max abs error "
        "is also above 0.001 (cosine &lt; 0.99 and max abs error &gt; 0.001).</li>",
        "<li><b>cosine 0.9</b> (msprobe, --cosine-fail): a pair below it fails whatever its error "
        "(cosine &lt; 0.9).</li>",
        "<li><b>max abs error 0.001</b> (msprobe, --max-abs): a pair above it fails when its cosine "
        "is also below 0.99 (cosine &lt; 0.99 and max abs error &gt; 0.001).</li>",
        "<li><b>max abs error 1</b> (msprobe, --max-abs-fail): a pair above it fails whatever its "
        "cosine (max abs error &gt; 1).</li>"}) {
    EXPECT_EQ(count(dom, caption), 1u) << caption;
  }
  EXPECT_EQ(count(dom, "A bar's colour is its verdict: under msprobe a pair also fails when its "
                       "metrics are undefined (NaN or Inf at different places), A holds NaN or "
                       "Inf, or one side is all zero (the table's why)."),
            2u);
}

// Where the browser lays them out: every operator name and threshold label wholly inside its svg
// (the slanted names measured after their rotation), the verdict in <pre id="probe">.
constexpr const char* kLabelProbe = R"(<script>
const bad = []; let names = 0, labels = 0;
document.querySelectorAll('svg.bars').forEach((svg, k) => {
  const r = svg.getBoundingClientRect();
  svg.querySelectorAll('text.xname, text.tlabel, text.first-fail-label').forEach(t => {
    t.classList.contains('xname') ? ++names : ++labels;
    const b = t.getBoundingClientRect();
    if (b.left < r.left - 0.5 || b.top < r.top - 0.5 || b.right > r.right + 0.5 ||
        b.bottom > r.bottom + 0.5) bad.push(`chart ${k}: ${t.textContent}`);
  });
});
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = `names ${names}, labels ${labels}, outside: ` + (bad.length ? bad.join('; ') : 'none');
document.body.append(pre);
</script></body>)";

TEST(PrecisionReportBrowser, NamesAndLabelsInsideTheirCharts) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  std::string page = read_file(write_page());
  const size_t end = page.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  page.replace(end, std::string("</body>").size(), kLabelProbe);
  const std::string probed = kArtefacts + "/precision-report-probed.html";
  write_file(probed, page);
  const test::Run run = chromium("--dump-dom --window-size=1400,1400 file://" + probed, "precision-probe");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // 13 names on each chart; 2 threshold labels and the first failure's on each.
  EXPECT_TRUE(has(run.out, "<pre id=\"probe\">names 26, labels 6, outside: none</pre>"))
      << run.out.substr(std::min(run.out.size(), run.out.find("<pre id=\"probe\">")));
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
}

TEST(PrecisionReportBrowser, Screenshot) {
  const std::string missing = chromium_missing();
  ASSERT_TRUE(missing.empty()) << missing;
  const std::string path = write_page();
  const std::string png = kArtefacts + "/precision-report.png";
  std::filesystem::remove(png);
  const test::Run run = chromium(fmt::format("--screenshot={} --window-size=1400,1400 file://{}", png, path),
                           "precision-shot");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(page_console_lines(run.err), std::vector<std::string>{}) << run.err;
  ASSERT_TRUE(std::filesystem::exists(png)) << run.out << run.err;
  // A blank 1400×1400 page compresses to a few KiB; bars, tables and text do not.
  EXPECT_GT(std::filesystem::file_size(png), 50'000u);
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace plumb::test
