// The Ascend readers on the real torch_npu exports in tests/fixtures/traces/ascend (text and
// SQLite), checked against what msprof-analyze itself wrote beside them (step_trace_time.csv,
// analysis.db StepTraceTime), and on copies broken on purpose.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "common/sqlite.h"
#include "common/error.h"
#include "step/ascend_csv.h"
#include "step/ascend_reader.h"
#include "step/readers.h"
#include "step/trace_set.h"
#include "support/subprocess.h"

namespace plumb::step {
namespace {

namespace fs = std::filesystem;

const std::string kAscend = std::string(PLUMB_TEST_FIXTURES) + "/traces/ascend/";
const std::string kText = kAscend + "pt-level1-2rank-text/";
const std::string kDb = kAscend + "pt-level1-2rank-db/";

std::string rank_dir(const std::string& set, int rank) {
  return set + "rank" + std::to_string(rank) + "_ascend_pt";
}

// A copy of a fixture rank directory to break; returns the copy's path.
std::string copy_of(const std::string& dir, const std::string& name) {
  fs::path to = fs::path(test::temp_dir(name)) / fs::path(dir).filename();
  fs::copy(dir, to, fs::copy_options::recursive);
  return to.string();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "(no error)";
}

// --- interval arithmetic for the breakdown check (the real one is src/step/breakdown.cc) ---
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

Intervals merged(Intervals in) {
  std::sort(in.begin(), in.end());
  Intervals out;
  for (const auto& [a, b] : in) {
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

Intervals spans_of(const RankTrace& trace, Activity activity, int64_t from, int64_t to) {
  Intervals in;
  for (const DeviceSpan& s : trace.spans) {
    int64_t a = std::max(s.start_ns, from);
    int64_t b = std::min(s.end_ns, to);
    if (s.activity == activity && a < b) in.emplace_back(a, b);
  }
  return merged(in);
}

Intervals intersection(const Intervals& u, const Intervals& v) {
  Intervals out;
  for (size_t i = 0, j = 0; i < u.size() && j < v.size();) {
    int64_t a = std::max(u[i].first, v[j].first);
    int64_t b = std::min(u[i].second, v[j].second);
    if (a < b) out.emplace_back(a, b);
    (u[i].second < v[j].second) ? ++i : ++j;
  }
  return out;
}

double length_us(const Intervals& u) {
  int64_t ns = 0;
  for (const auto& [a, b] : u) ns += b - a;
  return static_cast<double>(ns) / 1000.0;
}

// msprof-analyze's step_trace_time columns for one step (µs).
struct Msprof {
  double computing, not_overlapped, overlapped, communication, free, stage, preparing;
};

// plumb's figures for the same step, in msprof's terms: Computing = |∪compute|, Communication =
// |∪comm|, Overlapped = |∪comm ∩ ∪compute|, Not Overlapped = the rest of ∪comm; msprof's Free is
// the part of its stage window [step start + Preparing, + Stage] that neither computes nor
// communicates (plumb splits that into memory and idle).
Msprof plumb_figures(const RankTrace& trace, const StepSpan& step, double preparing_us,
                     double stage_us) {
  const Intervals compute = spans_of(trace, Activity::kCompute, step.start_ns, step.end_ns);
  const Intervals comm = spans_of(trace, Activity::kCommunication, step.start_ns, step.end_ns);
  const double overlapped = length_us(intersection(compute, comm));
  const int64_t stage_start = step.start_ns + static_cast<int64_t>(preparing_us * 1000.0 + 0.5);
  const int64_t stage_end = stage_start + static_cast<int64_t>(stage_us * 1000.0 + 0.5);
  Intervals busy = compute;
  busy.insert(busy.end(), comm.begin(), comm.end());
  busy = intersection(merged(busy), Intervals{{stage_start, stage_end}});
  const double free = static_cast<double>(stage_end - stage_start) / 1000.0 - length_us(busy);
  return Msprof{length_us(compute), length_us(comm) - overlapped, overlapped, length_us(comm),
                free, stage_us, preparing_us};
}

Msprof msprof_csv(const std::string& dir) {
  CsvTable table = CsvTable::read(dir + "/ASCEND_PROFILER_OUTPUT/step_trace_time.csv");
  const CsvTable::Row row = table.rows().at(0);
  auto number = [&](const char* column) {
    return std::stod(std::string(table.cell(row, table.column(column))));
  };
  return Msprof{number("Computing"), number("Communication(Not Overlapped)"),
                number("Overlapped"), number("Communication"), number("Free"), number("Stage"),
                number("Preparing")};
}

Msprof msprof_analysis_db(const std::string& dir) {
  Database db(dir + "/ASCEND_PROFILER_OUTPUT/analysis.db",
                        ReadOnly::kImmutable);
  Statement row = db.prepare(
      "SELECT computing, communication_not_overlapped, overlapped, communication, free, stage, "
      "preparing FROM StepTraceTime");
  EXPECT_TRUE(row.step());
  return Msprof{row.column_double(0), row.column_double(1), row.column_double(2),
                row.column_double(3), row.column_double(4), row.column_double(5),
                row.column_double(6)};
}

// Computing, communication, overlapped, exposed, free within 50 ns of msprof's own figures:
// both sum the same tasks; msprof rounds each task's duration to 1 ns on the way.
constexpr double kToleranceUs = 0.05;
// Figures that depend on msprof's stage window: the text export computes Preparing and Stage from
// timestamps held as doubles of µs since 1970, whose step there is 0.25 µs (131912.5, 20433.25);
// two ends of a window, 0.5 µs.
constexpr double kWindowToleranceUs = 0.5;

// plumb's own figures over the whole ProfilerStep span (what plumb.step/1 reports): memory is
// copying time outside computation and communication, idle the rest of the step. Against msprof:
// memory + idle = Free + Preparing + the step's tail after msprof's stage window.
void expect_reconciles(const RankTrace& trace, const StepSpan& step, const Msprof& msprof,
                       const Msprof& plumb) {
  const Intervals compute = spans_of(trace, Activity::kCompute, step.start_ns, step.end_ns);
  const Intervals comm = spans_of(trace, Activity::kCommunication, step.start_ns, step.end_ns);
  const Intervals copies = spans_of(trace, Activity::kMemory, step.start_ns, step.end_ns);
  Intervals busy = compute;
  busy.insert(busy.end(), comm.begin(), comm.end());
  busy = merged(busy);
  const double memory = length_us(copies) - length_us(intersection(copies, busy));
  busy.insert(busy.end(), copies.begin(), copies.end());
  const double step_us = static_cast<double>(step.end_ns - step.start_ns) / 1000.0;
  const double idle = step_us - length_us(merged(busy));
  const double tail = step_us - msprof.preparing - msprof.stage;
  std::cout << fmt::format("{} rank {}: step {:.3f}, memory {:.3f}, idle {:.3f}; "
                           "msprof Preparing {:.3f}, Stage {:.3f}, tail {:.3f} (us)\n",
                           trace.format, trace.rank, step_us, memory, idle, msprof.preparing,
                           msprof.stage, tail);
  EXPECT_NEAR(memory + idle, msprof.free + msprof.preparing + tail, kWindowToleranceUs);
  EXPECT_NEAR(step_us - plumb.computing - plumb.not_overlapped, memory + idle, kToleranceUs);
}

void expect_agrees(const RankTrace& trace, const Msprof& msprof) {
  ASSERT_EQ(trace.steps.size(), 1u);
  Msprof plumb = plumb_figures(trace, trace.steps[0], msprof.preparing, msprof.stage);
  std::cout << fmt::format(
      "{} rank {}: computing {:.3f}/{:.3f}, communication {:.3f}/{:.3f}, overlapped {:.3f}/{:.3f}, "
      "not overlapped {:.3f}/{:.3f}, free {:.3f}/{:.3f} (plumb/msprof, us)\n",
      trace.format, trace.rank, plumb.computing, msprof.computing, plumb.communication,
      msprof.communication, plumb.overlapped, msprof.overlapped, plumb.not_overlapped,
      msprof.not_overlapped, plumb.free, msprof.free);
  EXPECT_NEAR(plumb.computing, msprof.computing, kToleranceUs);
  EXPECT_NEAR(plumb.communication, msprof.communication, kToleranceUs);
  EXPECT_NEAR(plumb.overlapped, msprof.overlapped, kToleranceUs);
  EXPECT_NEAR(plumb.not_overlapped, msprof.not_overlapped, kToleranceUs);
  EXPECT_NEAR(plumb.free, msprof.free, kWindowToleranceUs);
  expect_reconciles(trace, trace.steps[0], msprof, plumb);
}

TEST(AscendText, BreakdownAgreesWithMsprofStepTraceTime) {
  for (int rank : {0, 1}) {
    const std::string dir = rank_dir(kText, rank);
    expect_agrees(read_ascend_text(dir, {}), msprof_csv(dir));
  }
}

TEST(AscendDb, BreakdownAgreesWithMsprofAnalysisDb) {
  for (int rank : {0, 1}) {
    const std::string dir = rank_dir(kDb, rank);
    expect_agrees(read_ascend_db(dir, {}), msprof_analysis_db(dir));
  }
}

std::map<CollectiveKind, int> kinds(const RankTrace& trace) {
  std::map<CollectiveKind, int> count;
  for (const CollectiveCall& call : trace.calls) ++count[call.kind];
  return count;
}

TEST(AscendText, RankStepsAndExactTimes) {
  const RankTrace trace = read_ascend_text(rank_dir(kText, 1), {});
  EXPECT_EQ(trace.rank, 1);
  EXPECT_EQ(trace.format, "ascend-text");
  EXPECT_EQ(trace.world_size, -1);
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps[0].step, 50);
  // "ts": "1736408883688868.080", "dur": 153888.39 — 19 digits a double would round.
  EXPECT_EQ(trace.steps[0].start_ns, 1736408883688868080);
  EXPECT_EQ(trace.steps[0].end_ns, 1736408883842756470);
  const RankTrace rank0 = read_ascend_text(rank_dir(kText, 0), {});
  EXPECT_EQ(rank0.rank, 0);
  // kernel_details.csv's first row: "1736408883704643.212\t", 53.741 µs.
  auto first = std::min_element(rank0.spans.begin(), rank0.spans.end(),
                                [](const DeviceSpan& a, const DeviceSpan& b) {
                                  return a.activity == Activity::kCompute &&
                                         (b.activity != Activity::kCompute || a.start_ns < b.start_ns);
                                });
  EXPECT_EQ(first->start_ns, 1736408883704643212);
  EXPECT_EQ(first->end_ns, 1736408883704696953);
  EXPECT_EQ(first->stream, 2u);
  EXPECT_EQ(std::count_if(rank0.spans.begin(), rank0.spans.end(),
                          [](const DeviceSpan& s) { return s.activity == Activity::kCompute; }),
            187);
  // The 24 MEMCPY_ASYNC tasks of the "Ascend Hardware" streams.
  EXPECT_EQ(std::count_if(rank0.spans.begin(), rank0.spans.end(),
                          [](const DeviceSpan& s) { return s.activity == Activity::kMemory; }),
            24);
}

TEST(AscendText, HcclOpsWithBytesGroupAndStream) {
  const RankTrace trace = read_ascend_text(rank_dir(kText, 0), {});
  EXPECT_EQ(kinds(trace), (std::map<CollectiveKind, int>{{CollectiveKind::kAllReduce, 4}}));
  ASSERT_EQ(trace.calls.size(), 4u);
  const CollectiveCall& first = trace.calls[0];
  EXPECT_EQ(first.name, "hcom_allReduce__586_0_1");
  EXPECT_EQ(first.bytes, 16388000u);  // count 4097000 × FP32
  EXPECT_EQ(first.start_ns, 1736408883732241564);
  EXPECT_EQ(first.end_ns, 1736408883732241564 + 79089520);
  EXPECT_EQ(first.group, "17522688603477080586");
  EXPECT_EQ(first.group_ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(trace.calls[3].bytes, 2469696u * 4);
  const auto comm = std::find_if(trace.spans.begin(), trace.spans.end(), [](const DeviceSpan& s) {
    return s.activity == Activity::kCommunication && s.call == 0;
  });
  ASSERT_NE(comm, trace.spans.end());
  EXPECT_EQ(comm->stream, 4u);
}

TEST(AscendDb, RankStepsOpsAndHost) {
  const RankTrace trace = read_ascend_db(rank_dir(kDb, 1), {});
  EXPECT_EQ(trace.rank, 1);
  EXPECT_EQ(trace.format, "ascend-db");
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps[0].step, 50);
  const RankTrace rank0 = read_ascend_db(rank_dir(kDb, 0), {});
  EXPECT_EQ(rank0.host, "ubuntu");
  ASSERT_EQ(rank0.steps.size(), 1u);
  EXPECT_EQ(rank0.steps[0].start_ns, 1736410576386409710);  // PYTORCH_API's text column
  EXPECT_EQ(rank0.steps[0].end_ns, 1736410576538298460);
  EXPECT_EQ(kinds(rank0), (std::map<CollectiveKind, int>{{CollectiveKind::kAllReduce, 4}}));
  ASSERT_EQ(rank0.calls.size(), 4u);
  EXPECT_EQ(rank0.calls[0].name, "hcom_allReduce__210_0_1");
  EXPECT_EQ(rank0.calls[0].bytes, 16388000u);
  EXPECT_EQ(rank0.calls[0].start_ns, 1736410576431631806);
  EXPECT_EQ(rank0.calls[0].group, "17148521525495523210");  // analysis.db's id, as the text's
  EXPECT_EQ(rank0.calls[0].group_ranks.size(), 8u);
  EXPECT_EQ(std::count_if(rank0.spans.begin(), rank0.spans.end(),
                          [](const DeviceSpan& s) { return s.activity == Activity::kCompute; }),
            187);
  EXPECT_EQ(std::count_if(rank0.spans.begin(), rank0.spans.end(),
                          [](const DeviceSpan& s) { return s.activity == Activity::kMemory; }),
            24);
}

TEST(AscendReaders, StepRegexWholeNameFirstGroup) {
  ReadOptions options;
  options.step_regex = "ProfilerStep#(5)0";
  EXPECT_EQ(read_ascend_text(rank_dir(kText, 0), options).steps.at(0).step, 5);
  EXPECT_EQ(read_ascend_db(rank_dir(kDb, 0), options).steps.at(0).step, 5);
  options.step_regex = "ProfilerStep#(5)";  // not the whole name
  EXPECT_TRUE(read_ascend_text(rank_dir(kText, 0), options).steps.empty());
  options.step_regex = "ProfilerStep#(\\d+";
  EXPECT_EQ(error_of([&] { read_ascend_db(rank_dir(kDb, 0), options); }),
            "--step-regex 'ProfilerStep#(\\d+': not a valid regular expression (missing ): "
            "ProfilerStep#(\\d+)");
  options.step_regex = "ProfilerStep#\\d+";
  EXPECT_EQ(error_of([&] { read_ascend_text(rank_dir(kText, 0), options); }),
            "--step-regex 'ProfilerStep#\\d+': expected a group holding the step number, as in "
            "'ProfilerStep#(\\d+)'");
}

TEST(AscendReaders, RankFromDirectoryNameWithoutProfilerInfo) {
  const std::string dir = copy_of(rank_dir(kText, 1), "ascend-rank-name");
  fs::remove(fs::path(dir) / "profiler_info_1.json");
  const fs::path renamed = fs::path(dir).parent_path() / "rank5_ascend_pt";
  fs::rename(dir, renamed);
  EXPECT_EQ(ascend::rank_of(renamed), 5);
  const fs::path anonymous = fs::path(dir).parent_path() / "host_ascend_pt";
  fs::rename(renamed, anonymous);
  EXPECT_EQ(error_of([&] { ascend::rank_of(anonymous); }),
            anonymous.string() + ": no rank: no profiler_info_N.json with rank_id, and the "
                                 "directory name says none (expected e.g. rank3_ascend_pt)");
}

TEST(AscendReaders, ProfilerInfoNotJson) {
  const std::string dir = copy_of(rank_dir(kDb, 1), "ascend-bad-info");
  test::write_file(dir + "/profiler_info_1.json", "{\"rank_id\": ");
  EXPECT_EQ(error_of([&] { read_ascend_db(dir, {}); }),
            dir + "/profiler_info_1.json: not valid JSON: parse error at line 1, column 13: syntax "
                  "error while parsing value - unexpected end of input; expected '[', '{', or a "
                  "literal; expected torch_npu's profiler_info JSON");
  test::write_file(dir + "/profiler_info_1.json", "{}");  // no rank_id: the N of its name
  EXPECT_EQ(read_ascend_db(dir, {}).rank, 1);
}

TEST(AscendReaders, MissingProfilerOutput) {
  const std::string dir = test::temp_dir("ascend-empty") + "/rank0_ascend_pt";
  fs::create_directories(dir);
  const std::string expected = dir + ": no ASCEND_PROFILER_OUTPUT folder; expected a torch_npu "
                               "profiler directory (*_ascend_pt) after its export finished";
  EXPECT_EQ(error_of([&] { read_ascend_text(dir, {}); }), expected);
  EXPECT_EQ(error_of([&] { read_ascend_db(dir, {}); }), expected);
}

TEST(AscendText, TruncatedTraceView) {
  const std::string dir = copy_of(rank_dir(kText, 0), "ascend-truncated");
  const std::string file = dir + "/ASCEND_PROFILER_OUTPUT/trace_view.json";
  fs::resize_file(file, 100000);
  const std::string message = error_of([&] { read_ascend_text(dir, {}); });
  EXPECT_EQ(message, file + ": byte 100000: a string is not closed: the file is truncated");
}

TEST(AscendText, KernelDetailsMissingColumnAndBadCell) {
  const std::string dir = copy_of(rank_dir(kText, 0), "ascend-bad-csv");
  const std::string file = dir + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  std::string text = test::read_file(file);
  std::string broken = text;
  broken.replace(broken.find("Duration(us)"), 12, "Length(us)");
  test::write_file(file, broken);
  EXPECT_EQ(error_of([&] { read_ascend_text(dir, {}); }),
            file + ":1: no column 'Duration(us)' in the header; expected it beside 'Step Id', "
                   "'Model ID', 'Task ID', 'Stream ID', ...");
  broken = text;
  broken.replace(broken.find("1736408883704801.156"), 20, "17364088837048x1.156");
  test::write_file(file, broken);
  EXPECT_EQ(error_of([&] { read_ascend_text(dir, {}); }),
            file + ":3: column 'Start Time(us)': expected a time in microseconds, got "
                   "'17364088837048x1.156'");
}

TEST(AscendDb, MissingTableAndNotADatabase) {
  const std::string dir = copy_of(rank_dir(kDb, 0), "ascend-bad-db");
  const std::string file = dir + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";
  {
    Database db(file);
    db.exec("DROP TABLE COMPUTE_TASK_INFO");
  }
  EXPECT_EQ(error_of([&] { read_ascend_db(dir, {}); }),
            file + ": no table COMPUTE_TASK_INFO; expected torch_npu's SQLite export "
                   "(ascend_pytorch_profiler_N.db)");
  test::write_file(file, std::string(4096, 'x'));
  EXPECT_EQ(error_of([&] { read_ascend_db(dir, {}); }),
            file + ": not a readable SQLite database; expected torch_npu's SQLite export "
                   "(ascend_pytorch_profiler_N.db)");
  fs::remove(file);
  EXPECT_EQ(error_of([&] { read_ascend_db(dir, {}); }),
            dir + "/ASCEND_PROFILER_OUTPUT: no ascend_pytorch_profiler_N.db; expected "
                  "torch_npu's SQLite export (ascend_pytorch_profiler_N.db)");
}

// --- damaged input (docs/step.md, "Damaged input"): copies of the fixtures broken on purpose;
// event numbers, lines, steps and counts checked with Python's json, csv and sqlite3 ---

// Step 50 of rank 0 holds 215 device events in both exports: 187 computing tasks, 24 memory
// tasks, 4 HCCL ops.
constexpr int kStep50Events = 215;

// `file` with `from` (found exactly once) replaced by `to`.
void replace_in(const std::string& file, std::string_view from, std::string_view to) {
  std::string text = test::read_file(file);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  ASSERT_EQ(text.find(from, at + 1), std::string::npos) << from;
  test::write_file(file, text.replace(at, from.size(), to));
}

std::vector<std::string> notes_of(RankTrace trace) {
  std::vector<RankTrace> set;
  set.push_back(std::move(trace));
  std::vector<std::string> notes;
  check_trace_set(set, "ProfilerStep#(\\d+)", notes);
  return notes;
}

struct TextCopy {
  std::string dir;
  std::string csv;
  std::string view;
};

TextCopy text_copy(const std::string& name) {
  TextCopy copy;
  copy.dir = copy_of(rank_dir(kText, 0), name);
  copy.csv = copy.dir + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  copy.view = copy.dir + "/ASCEND_PROFILER_OUTPUT/trace_view.json";
  return copy;
}

TEST(AscendTextDamage, KernelDetailsCutInsideARowIsAnError) {
  TextCopy copy = text_copy("ascend-cut-row");
  const std::string text = test::read_file(copy.csv);
  test::write_file(copy.csv, text.substr(0, text.size() / 2));  // inside line 101's Cube cells
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":101: the file ends inside this row (43 of 46 cells): it was cut short");
  // Inside a quoted cell ("""32,3,224,224""" of line 2).
  test::write_file(copy.csv, text.substr(0, text.find("224,224")));
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":2: the file ends inside a quoted cell of this row: it was cut short");
  // A row in the middle with a cell too few (two rows run together, a lost comma).
  std::string lost = text;
  lost.erase(lost.find(",6.54,"), 5);
  test::write_file(copy.csv, lost);
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":3: expected 46 cells as in the header, got 45");
}

TEST(AscendTextDamage, KernelDetailsEndingBeforeItsTraceIsAnError) {
  TextCopy copy = text_copy("ascend-cut-rows");
  const std::string text = test::read_file(copy.csv);
  // The header and 95 rows, each whole: the file parses, but trace_view.json has computing
  // tasks after its last row.
  size_t end = 0;
  for (int line = 0; line < 96; ++line) end = text.find('\n', end) + 1;
  test::write_file(copy.csv, text.substr(0, end));
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ": ends before its trace: its last row (line 96) starts at "
                       "1736408883734354.866 µs, but trace_view.json has 93 computing tasks "
                       "after it in step 50, the last at 1736408883840600.069 µs; the file was "
                       "cut short or belongs to another run (export the profile again)");
  test::write_file(copy.csv, text.substr(0, text.find('\n') + 1));
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ": ends before its trace: it holds no rows, but trace_view.json has 185 "
                       "computing tasks in step 50, the last at 1736408883840600.069 µs; the "
                       "file was cut short or belongs to another run (export the profile again)");
}

TEST(AscendTextDamage, KernelDetailsCellsThatAreNotTimesAreErrors) {
  TextCopy copy = text_copy("ascend-bad-cells");
  replace_in(copy.csv, "1736408883704801.156\t,6.54,", "1736408883704801.156\t,,");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":3: column 'Duration(us)': expected a time in microseconds, got ''");
  replace_in(copy.csv, "1736408883704801.156\t,,", "1736408883704801.156\t,NULL,");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":3: column 'Duration(us)': expected a time in microseconds, got 'NULL'");
  replace_in(copy.csv, "1736408883704801.156\t,NULL,", "1736408883704801.156\t,--6.54,");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.csv + ":3: column 'Duration(us)': expected a time in microseconds, got '--6.54'");
}

TEST(AscendTextDamage, NegativeKernelTimesAreDroppedAndNoted) {
  TextCopy copy = text_copy("ascend-negative-kernel");
  replace_in(copy.csv, "1736408883704801.156\t,6.54,", "1736408883704801.156\t,-6.54,");
  RankTrace trace = read_ascend_text(copy.dir, {});
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(trace.dropped[0].starts_ns, (std::vector<int64_t>{1736408883704801156}));
  EXPECT_EQ(notes_of(std::move(trace)).back(),
            "rank 0 (" + copy.dir + "): dropped 1 device event for a negative 'Duration(us)' "
            "(the first: kernel_details.csv:3): 1 of " + std::to_string(kStep50Events) +
            " in step 50; their time is missing from the figures");
  replace_in(copy.csv, "1736408883704801.156\t,-6.54,", "-1736408883704801.156\t,6.54,");
  trace = read_ascend_text(copy.dir, {});
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(trace.dropped[0].why, "a negative 'Start Time(us)'");
  EXPECT_EQ(notes_of(std::move(trace)).back(),
            "rank 0 (" + copy.dir + "): dropped 1 device event for a negative 'Start Time(us)' "
            "(the first: kernel_details.csv:3): 1 outside every step; their time is missing "
            "from the figures");
}

TEST(AscendTextDamage, TraceViewTimesOfTheWrongTypeAreErrors) {
  TextCopy copy = text_copy("ascend-bad-view");
  const std::string step = R"("ts": "1736408883686740.710", "dur": 155985.8)";
  replace_in(copy.view, step, R"("ts": null, "dur": 155985.8)");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.view + ": event 859 ('ProfilerStep#50'): 'ts' is null, expected a number of "
                        "µs (or a string holding one)");
  replace_in(copy.view, R"("ts": null, "dur": 155985.8)",
             R"("ts": "1736408883686740.710", "dur": "155985.8")");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.view + ": event 859 ('ProfilerStep#50'): 'dur' is a string (\"155985.8\"), "
                        "expected a number of µs");
  replace_in(copy.view, R"("ts": "1736408883686740.710", "dur": "155985.8")",
             R"("ts": "1736408883686740.710", "dur": -155985.8)");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.view + ": event 859 ('ProfilerStep#50'): 'dur' is negative (-155985.800 µs)");
  replace_in(copy.view, R"("ts": "1736408883686740.710", "dur": -155985.8)", step);
  const std::string op = R"("ts": "1736408883732241.564", "dur": 79089.52021875, "args": {"conn)";
  replace_in(copy.view, op, R"("ts": "a while ago", "dur": 79089.52021875, "args": {"conn)");
  EXPECT_EQ(error_of([&] { read_ascend_text(copy.dir, {}); }),
            copy.view + ": event 5061 ('hcom_allReduce__586_0_1'): 'ts' is \"a while ago\", "
                        "expected a number of µs (or a string holding one)");
}

TEST(AscendTextDamage, NegativeTaskAndOpDurationsAreDroppedAndNoted) {
  TextCopy copy = text_copy("ascend-negative-tasks");
  const RankTrace clean = read_ascend_text(copy.dir, {});
  replace_in(copy.view, R"("ts": "1736408883700059.821", "dur": 840.07675)",
             R"("ts": "1736408883700059.821", "dur": -840.07675)");
  replace_in(copy.view, R"("ts": "1736408883732241.564", "dur": 79089.52021875, "args": {"conn)",
             R"("ts": "1736408883732241.564", "dur": -79089.52021875, "args": {"conn)");
  RankTrace trace = read_ascend_text(copy.dir, {});
  EXPECT_EQ(trace.calls.size(), clean.calls.size() - 1);
  EXPECT_EQ(trace.spans.size(), clean.spans.size() - 2);
  ASSERT_EQ(trace.dropped.size(), 1U);
  const std::vector<std::string> notes = notes_of(std::move(trace));
  EXPECT_EQ(notes.back(),
            "rank 0 (" + copy.dir + "): dropped 2 device events for a negative 'dur' (the first: "
            "trace_view.json event 3876 ('MEMCPY_ASYNC')): 2 of " +
                std::to_string(kStep50Events) +
                " in step 50; their time is missing from the figures");
}

struct DbCopy {
  std::string dir;
  std::string file;
};

DbCopy db_copy(const std::string& name) {
  DbCopy copy;
  copy.dir = copy_of(rank_dir(kDb, 0), name);
  copy.file = copy.dir + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db";
  return copy;
}

void exec_on(const std::string& file, const std::string& sql) {
  Database db(file);
  db.exec(sql);
}

TEST(AscendDbDamage, TimesThatAreNullOrNotIntegersAreErrors) {
  DbCopy copy = db_copy("ascend-db-null");
  exec_on(copy.file, "UPDATE TASK SET startNs = NULL WHERE rowid = 4");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table TASK, row 4: startNs is NULL, expected an integer of ns");
  exec_on(copy.file, "UPDATE TASK SET startNs = 'soon' WHERE rowid = 4");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table TASK, row 4: startNs is 'soon', expected an integer of ns");
  exec_on(copy.file, "UPDATE TASK SET startNs = 12.5 WHERE rowid = 4");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table TASK, row 4: startNs is '12.5', expected an integer of ns");
  exec_on(copy.file, "UPDATE TASK SET startNs = 1736410576404465403 WHERE rowid = 4");
  exec_on(copy.file, "UPDATE COMMUNICATION_OP SET endNs = NULL WHERE rowid = 2");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table COMMUNICATION_OP, row 2: endNs is NULL, expected an integer "
                        "of ns");
  exec_on(copy.file, "UPDATE COMMUNICATION_OP SET endNs = 1736410576522566903 WHERE rowid = 2");
  exec_on(copy.file, "UPDATE PYTORCH_API SET endNs = NULL WHERE rowid = 1601");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table PYTORCH_API, row 1601: endNs is NULL, expected an integer of "
                        "ns");
}

TEST(AscendDbDamage, AStepWhoseEndIsBeforeItsStartIsAnError) {
  DbCopy copy = db_copy("ascend-db-step");
  exec_on(copy.file, "UPDATE PYTORCH_API SET endNs = '1736410576386409700' WHERE rowid = 1601");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table PYTORCH_API, row 1601 (step 50): endNs 1736410576386409700 is "
                        "before startNs 1736410576386409710; a step's span must be known");
  exec_on(copy.file, "UPDATE PYTORCH_API SET startNs = '-5' WHERE rowid = 1601");
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": table PYTORCH_API, row 1601 (step 50): startNs is negative (-5); a "
                        "step's span must be known");
}

TEST(AscendDbDamage, ReversedAndNegativeTimesAreDroppedAndNoted) {
  DbCopy copy = db_copy("ascend-db-reversed");
  const RankTrace clean = read_ascend_db(copy.dir, {});
  exec_on(copy.file, "UPDATE TASK SET endNs = startNs - 10 WHERE rowid IN (4, 5)");
  exec_on(copy.file, "UPDATE COMMUNICATION_OP SET endNs = startNs - 1 WHERE rowid = 2");
  RankTrace trace = read_ascend_db(copy.dir, {});
  EXPECT_EQ(trace.spans.size(), clean.spans.size() - 3);
  EXPECT_EQ(trace.calls.size(), clean.calls.size() - 1);
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(notes_of(std::move(trace)).back(),
            "rank 0 (" + copy.dir + "): dropped 3 device events for endNs before startNs (the "
            "first: ascend_pytorch_profiler_0.db TASK row 4): 3 of " +
                std::to_string(kStep50Events) +
                " in step 50; their time is missing from the figures");
  exec_on(copy.file, "UPDATE TASK SET endNs = startNs + 10 WHERE rowid IN (4, 5)");
  exec_on(copy.file,
          "UPDATE COMMUNICATION_OP SET endNs = startNs + 1, startNs = -7 WHERE rowid = 2");
  trace = read_ascend_db(copy.dir, {});
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(notes_of(std::move(trace)).back(),
            "rank 0 (" + copy.dir + "): dropped 1 device event for a negative startNs (the "
            "first: ascend_pytorch_profiler_0.db COMMUNICATION_OP row 2 "
            "('hcom_allReduce__210_1_1')): 1 outside every step; their time is missing from "
            "the figures");
}

TEST(AscendDbDamage, ADatabaseCutShortIsAnError) {
  DbCopy copy = db_copy("ascend-db-cut");
  fs::resize_file(copy.file, 856064 / 2);
  EXPECT_EQ(error_of([&] { read_ascend_db(copy.dir, {}); }),
            copy.file + ": the file is cut short: 428032 bytes of the 856064 its header states; "
                        "export the profile again");
}

// The db names the communicator, the text export its hash; both readers give the hash, and
// analysis.db (msprof-analyze) wrote the same number for this name.
TEST(AscendReaders, GroupIdIsMsprofDoubleHash) {
  EXPECT_EQ(ascend::hccl_group_id("90.91.105.46%enp189s0f0_60000_0_1736410538306028"),
            "17148521525495523210");
  EXPECT_EQ(ascend::hccl_group_id(""), "0");
}

constexpr const char* kCommName = "90.91.105.46%enp189s0f0_60000_0_1736410538306028";

TEST(AscendReaders, ParallelGroupInfoGivesGlobalRanksAndWorldSize) {
  const std::string info = std::string(R"({")") + kCommName +
                           R"(": {"group_name": "default_group", "group_rank": 0,
                               "global_ranks": [0, 1, 2, 3, 4, 5, 6, 7]},
                               "other": {"group_name": "dp", "global_ranks": [1, 3]},
                               "bad": {"group_name": 7, "global_ranks": "x"}})";
  const ascend::ParallelGroups groups = ascend::parallel_groups(info);
  EXPECT_EQ(groups.world_size, 8);
  EXPECT_EQ(groups.ranks_of_group.at("17148521525495523210").size(), 8u);
  EXPECT_EQ(groups.ranks_of_group.at(ascend::hccl_group_id("other")), (std::vector<int>{1, 3}));
  EXPECT_EQ(groups.ranks_of_group.size(), 2u);
  EXPECT_EQ(ascend::parallel_groups("not json").world_size, -1);
  // The SQLite export keeps it in META_DATA, as JSON text.
  const std::string dir = copy_of(rank_dir(kDb, 0), "ascend-parallel-db");
  {
    Database db(dir + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    Statement insert =
        db.prepare("INSERT INTO META_DATA (name, value) VALUES ('parallel_group_info', ?)");
    const std::string dp = std::string(R"({")") + kCommName +
                           R"(": {"group_name": "dp", "group_rank": 0, "global_ranks": [0, 8]}})";
    insert.bind(1, std::string_view(dp));
    insert.step();
  }
  const RankTrace db_trace = read_ascend_db(dir, {});
  EXPECT_EQ(db_trace.world_size, -1);  // a dp group does not say the world's size
  EXPECT_EQ(db_trace.calls.at(0).group_ranks, (std::vector<int>{0, 8}));
  // The text export keeps it in profiler_metadata.json; ops name the group by its hash.
  const std::string text_dir = copy_of(rank_dir(kText, 0), "ascend-parallel-text");
  const std::string comm = text_dir + "/ASCEND_PROFILER_OUTPUT/communication.json";
  std::string json = test::read_file(comm);
  for (size_t at; (at = json.find("17522688603477080586")) != std::string::npos;) {
    json.replace(at, 20, "17148521525495523210");
  }
  test::write_file(comm, json);
  test::write_file(text_dir + "/profiler_metadata.json",
                   std::string(R"({"parallel_group_info": {")") + kCommName +
                       R"(": {"group_name": "default_group", "group_rank": 0,
                              "global_ranks": [0, 1, 2, 3]}}})");
  const RankTrace text_trace = read_ascend_text(text_dir, {});
  EXPECT_EQ(text_trace.world_size, 4);
  EXPECT_EQ(text_trace.calls.at(0).group, "17148521525495523210");
  EXPECT_EQ(text_trace.calls.at(0).group_ranks, (std::vector<int>{0, 1, 2, 3}));
}

// Both column sets of msprof-analyze's own test data: the newer one with the quoted, tabbed start
// time, and the older one whose HCCL ops are rows (skipped: trace_view.json gives the ops).
TEST(AscendText, KernelDetailsColumnSetsOfOtherVersions) {
  const std::string dir = copy_of(rank_dir(kText, 0), "ascend-column-sets");
  const std::string target = dir + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
  // These files come from other runs: a trace_view.json with one step and no device tasks, so
  // that the check that kernel_details.csv reaches as far as its trace (AscendTextDamage) has
  // nothing to hold them against.
  test::write_file(dir + "/ASCEND_PROFILER_OUTPUT/trace_view.json",
                   R"([{"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, )"
                   R"("tid": 1, "ts": "1699529622790614.8", "dur": 1}])");
  auto compute_spans = [&](const char* name) {
    fs::copy_file(kAscend + "msprof-analyze-resources/" + name, target,
                  fs::copy_options::overwrite_existing);
    std::vector<DeviceSpan> spans;
    for (const DeviceSpan& s : read_ascend_text(dir, {}).spans) {
      if (s.activity == Activity::kCompute) spans.push_back(s);
    }
    return spans;
  };
  std::vector<DeviceSpan> newer = compute_spans("kernel_details_newer_cols.csv");
  ASSERT_EQ(newer.size(), 29u);
  EXPECT_EQ(newer[0].start_ns, 1736413971558972912);
  EXPECT_EQ(newer[0].end_ns - newer[0].start_ns, 185504);
  EXPECT_EQ(newer[0].stream, 2u);
  std::vector<DeviceSpan> older = compute_spans("kernel_details_with_hccl.csv");
  ASSERT_EQ(older.size(), 572u);  // 591 rows, 19 of them HCCL ops
  EXPECT_EQ(older[0].start_ns, 1699529622790614800);
  EXPECT_EQ(older[0].stream, 16u);
}

TEST(AscendText, MissingExportFiles) {
  const std::string dir = copy_of(rank_dir(kText, 0), "ascend-missing-files");
  const std::string out = dir + "/ASCEND_PROFILER_OUTPUT/";
  fs::remove(out + "communication.json");
  fs::remove(out + "communication_matrix.json");
  EXPECT_EQ(read_ascend_text(dir, {}).calls.at(0).group, "");  // optional: groups unknown
  fs::remove(out + "trace_view.json");
  EXPECT_EQ(error_of([&] { read_ascend_text(dir, {}); }),
            out + "trace_view.json: missing; expected torch_npu's text export "
                  "(export_type text) to have written it");
  fs::remove(out + "kernel_details.csv");
  EXPECT_EQ(error_of([&] { read_ascend_text(dir, {}); }),
            out + "kernel_details.csv: missing; expected torch_npu's text export "
                  "(export_type text) to have written it");
}

// --- the CSV reader and the number rules on their own ---
TEST(AscendCsv, QuotedCellsByHeaderName) {
  CsvTable table = CsvTable::parse(
      "\xEF\xBB\xBF" "A, B ,C\r\n1,\"\"\"32,3\"\"\",\"x\ny\"\r\n\r\n2,b,c\n", "t.csv");
  const std::vector<CsvTable::Row> rows = table.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(table.column("B"), 1u);
  EXPECT_EQ(table.cell(rows[0], 1), "\"32,3\"");
  EXPECT_EQ(table.cell(rows[0], 2), "x\ny");
  EXPECT_EQ(rows[1].line, 5);
  CsvTable short_row = CsvTable::parse("A,B,C\n1,2\n", "t.csv");
  EXPECT_EQ(error_of([&] { short_row.rows(); }),
            "t.csv:2: expected 3 cells as in the header, got 2");
  CsvTable::Row row{2, {"1", "2"}, true};
  EXPECT_EQ(error_of([&] { short_row.cell(row, 2); }),
            "t.csv:2: expected 3 cells as in the header, got 2");
  EXPECT_EQ(error_of([] { CsvTable::parse("A,B,C\n1,2,3\n4,5", "t.csv").rows(); }),
            "t.csv:3: the file ends inside this row (2 of 3 cells): it was cut short");
  EXPECT_EQ(error_of([] { CsvTable::parse("A,B,C\n1,2,\"3\n", "t.csv").rows(); }),
            "t.csv:2: the file ends inside a quoted cell of this row: it was cut short");
  // A last row with every cell but no line end is whole (msprof-analyze's own resources end so).
  EXPECT_EQ(CsvTable::parse("A,B,C\n1,2,3", "t.csv").rows().size(), 1U);
  EXPECT_EQ(error_of([] { CsvTable::parse("", "e.csv"); }),
            "e.csv: empty; expected a CSV header line");
}

TEST(AscendCsv, MicrosecondsToIntegerNanoseconds) {
  EXPECT_EQ(ascend_us_to_ns("1736408883704643.212\t"), 1736408883704643212);
  EXPECT_EQ(ascend_us_to_ns("1699529622790614.8"), 1699529622790614800);
  EXPECT_EQ(ascend_us_to_ns("840.07675"), 840077);  // half up past the third digit
  EXPECT_EQ(ascend_us_to_ns("53.7410625"), 53741);
  EXPECT_EQ(ascend_us_to_ns("7"), 7000);
  for (const char* bad : {"", "-1", "1e5", "N/A", "1.2.3", "99999999999999999"}) {
    EXPECT_EQ(ascend_us_to_ns(bad), std::nullopt) << bad;
  }
}

TEST(AscendReaders, HcclBytesFollowNcclTests) {
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kAllReduce, 4097000, "FP32", 0), 16388000u);
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kAllGather, 10, "FP16", 8), 160u);
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kReduceScatter, 10, "BFP16", 4), 80u);
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kAllGather, 10, "FP16", 0), 0u);  // group unknown
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kAllReduce, 10, "INVALID_TYPE", 8), 0u);
  EXPECT_EQ(ascend::hccl_bytes(CollectiveKind::kBroadcast, -1, "FP32", 8), 0u);
}

}  // namespace
}  // namespace plumb::step
