// nccl-tests text logs (src/common.cu's printf output), every variant seen in the wild:
// several tests in one file ("# Collective test starting: <name>_perf"), NCCL INFO/WARN lines in
// between, `mpirun --tag-output` prefixes ("[1,0]<stdout>:"), the -I per-iteration columns
// (i_min i_max i_p99 i_cv%), the -S timestamp after each row, -C's "cputime", and pre-2.13 logs
// with an `error` column instead of `#wrong` and no test name. Rows are split on whitespace and
// read by the column names of the header, never by position in characters (spacing changed in
// 2025). The out-of-place half of each row becomes a plumb row.
//
// What nccl-tests says about its own results is kept in the test's validity (validity.h): rows
// with wrong elements (`#wrong`, or before 2.13 an `error` above nccl-tests' bound for the type),
// in either half; the `# Out of bounds values : N FAILED` and `# Avg bus bandwidth : X FAILED`
// lines; failure lines (`Test NCCL failure`, ...); and a test that ends without its
// `# Avg bus bandwidth` line, with a cut last row, or with fewer rows than the sweep its
// `# nThread ... minBytes ... maxBytes ... step:` line asks for.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

// Whitespace-separated words, as views into `line` (no copies: this runs on every line).
std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}


// "[1,0]<stdout>:" -- mpirun --tag-output.
std::string_view strip_tag(std::string_view line) {
  if (line.empty() || line.front() != '[') return line;
  const size_t close = line.find(">:");
  if (close == std::string_view::npos || line.find('<') > close) return line;
  line.remove_prefix(close + 2);
  return line;
}

// The columns every row must have: without one, a row is not a measurement plumb can store.
constexpr std::array<std::string_view, 5> kRequiredColumns = {"size", "count", "type", "algbw",
                                                              "busbw"};

// Before 2.13 a row shows `error`, the largest relative difference from the expected result, and
// nccl-tests counts it out of bounds above DeltaMaxValue(type) (src/common.cu of those versions:
// half 1e-2, or 5e-2 in some, taken here; float 1e-5; double 1e-12; integers any difference).
double error_bound(const std::string& dtype) {
  if (dtype == "float16" || dtype == "bfloat16") return 5e-2;
  if (dtype == "float32") return 1e-5;
  if (dtype == "float64") return 1e-12;
  return 0;
}

// "minBytes 8 maxBytes 8192 step: 2(factor)" of the `# nThread` line; an unknown plan when a
// figure is missing or unreadable (then only the end marker says whether the test finished).
SweepPlan sweep_plan(const std::vector<std::string_view>& w) {
  SweepPlan plan;
  const auto after = [&](std::string_view name) -> std::string_view {
    const auto it = std::find(w.begin(), w.end(), name);
    return it == w.end() || it + 1 == w.end() ? std::string_view() : *(it + 1);
  };
  const auto min = parse_count(after("minBytes"));
  const auto max = parse_count(after("maxBytes"));
  const std::string_view step = after("step:");
  const size_t open = step.find('(');
  if (!min || !max || open == std::string_view::npos) return plan;
  const uint64_t by = parse_count(step.substr(0, open)).value_or(0);
  plan.min_bytes = *min;
  plan.max_bytes = *max;
  if (step.substr(open) == "(factor)") plan.factor = static_cast<double>(by);
  if (step.substr(open) == "(bytes)") plan.step_bytes = by;
  return plan;
}

// Consecutive rows of one (type, op, root): nccl-tests sweeps the sizes once for each.
struct SizeRun {
  std::string dtype;
  std::string op;
  int root = -1;
  uint64_t rows = 0;
  uint64_t last_bytes = 0;
  int last_line = 0;
};

// A row with fewer columns than the header: the last of a run that stopped mid-line, or an error
// once another row follows it.
struct ShortRow {
  int line = 0;
  std::vector<std::string> cells;
  std::string text;
};

class NcclTestsTextParser {
 public:
  NcclTestsTextParser(std::string_view file, const ImportOptions& options,
                      const Importer::TestSink& sink)
      : file_(file), options_(options), sink_(sink) {}

  void line(int number, std::string_view text);
  void finish();

 private:
  // The checks of the test's own validity, added to it when it ends.
  struct Checks {
    SweepPlan plan;
    bool summary = false;  // '# Avg bus bandwidth' seen: nccl-tests finished the test
    size_t width = 0;      // the header's columns, both halves
    std::optional<size_t> in_place_check;  // the in-place '#wrong' (or 'error') column
    std::optional<ShortRow> short_row;
    WrongRows out_of_place{"have wrong elements in the out-of-place half"};
    WrongRows in_place{"have wrong elements in the in-place half"};
    std::vector<SizeRun> runs;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", file_, number_, what));
  }
  std::string where() const { return fmt::format("{}:{}", file_, number_); }
  void comment(std::string_view body);
  void rank_line(const std::vector<std::string_view>& w);
  void header(const std::vector<std::string_view>& names);
  void stop_on_error(const std::function<void()>& fn);
  void row_structure(const std::vector<std::string_view>& cells) const;
  void row(const std::vector<std::string_view>& cells);
  void measure(const std::vector<std::string_view>& cells, comm::Row& r) const;
  void check(const comm::Row& r) const;
  void start_test(std::string collective);
  void end_test();
  void hand_over();
  void add_issue(Issue issue);
  void footer(const std::vector<std::string_view>& w);
  void replay_short_row();
  void observe(const std::vector<std::string_view>& cells, const comm::Row& r);
  void wrong_in_place(const std::vector<std::string_view>& cells, const comm::Row& r);
  void add_checks_to_test();
  std::optional<Issue> incomplete() const;
  double number(const std::vector<std::string_view>& cells, const std::string& column) const;
  uint64_t count(const std::vector<std::string_view>& cells, const std::string& column) const;
  int root(const std::vector<std::string_view>& cells) const;
  std::optional<size_t> column(const std::string& name) const;
  std::string time_column() const { return column("time") ? "time" : "cputime"; }

  std::string file_;
  const ImportOptions& options_;
  const Importer::TestSink& sink_;
  int number_ = 0;
  std::string version_;
  int done_ = 0;  // tests handed to sink_
  std::optional<ImportedTest> test_;
  std::string collective_;
  std::vector<std::string> columns_;  // the out-of-place half's column names
  ProblemList problems_;              // the bad rows so far: nothing is handed over once one is
  std::string text_;                  // the line being read, without its tag
  Checks checks_;
  // The last test ended, handed over when the next starts or the file ends: a failure line
  // between two tests is kept by the test before it.
  std::optional<ImportedTest> ended_;
  Validity orphans_;  // failure lines before any test: kept by the first
};

void NcclTestsTextParser::line(int number, std::string_view raw) {
  number_ = number;
  std::string_view text = strip_tag(raw);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return;
  text.remove_prefix(first);
  text_ = std::string(text);
  if (text.front() == '#') return stop_on_error([&] { comment(text.substr(1)); });
  if (text.find("NCCL INFO") != std::string_view::npos ||
      text.find("NCCL WARN") != std::string_view::npos) {
    return;
  }
  if (auto failure = failure_line(text, where())) return add_issue(std::move(*failure));
  const std::vector<std::string_view> cells = words(text);
  replay_short_row();
  if (test_ && !columns_.empty() && cells.size() < checks_.width) {  // cut, if the test's last
    checks_.short_row = ShortRow{number_, {cells.begin(), cells.end()}, quoted_line(text)};
    return;
  }
  stop_on_error([&] { row_structure(cells); });
  // A bad number does not stop the pass: every bad row of the file is reported at the end.
  problems_.attempt([&] { row(cells); });
}

// A row short of columns followed by more of the test was not cut: it is read (and refused when
// it lacks a column plumb reads) at its own line.
void NcclTestsTextParser::replay_short_row() {
  if (!checks_.short_row) return;
  const ShortRow cut = std::move(*checks_.short_row);
  checks_.short_row.reset();
  const int number = number_;
  number_ = cut.line;
  const std::vector<std::string_view> cells(cut.cells.begin(), cut.cells.end());
  problems_.attempt([&] {
    row_structure(cells);
    row(cells);
  });
  number_ = number;
}

// A failure line belongs to the test it is in; between tests, to the one before; before any, to
// the first.
void NcclTestsTextParser::add_issue(Issue issue) {
  if (test_) return test_->validity.push_back(std::move(issue));
  if (ended_) return ended_->validity.push_back(std::move(issue));
  orphans_.push_back(std::move(issue));
}

// A problem of the file's structure (a header, a test name, a row without a header) stops the
// pass, reported after the rows' problems found before it.
void NcclTestsTextParser::stop_on_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    problems_.add(e.what());
    problems_.throw_if_any();
  }
}

void NcclTestsTextParser::start_test(std::string collective) {
  end_test();
  hand_over();
  test_ = ImportedTest{};
  test_->validity = std::move(orphans_);
  orphans_.clear();
  checks_ = Checks{};
  test_->tool = version_.empty() ? "nccl-tests" : "nccl-tests " + version_;
  test_->line = number_;
  // A sweep of nccl-tests' defaults (8 B to 8 GiB by ×2) has 31 sizes: one allocation, not six.
  test_->rows.reserve(32);
  collective_ = std::move(collective);
  columns_.clear();
}

void NcclTestsTextParser::end_test() {
  if (!test_) return;
  // A short last row with nothing before it is no measurement at all: refused at its line.
  if (test_->rows.empty()) replay_short_row();
  if (!test_->rows.empty() && problems_.empty()) {
    if (options_.ranks > 0) test_->ranks = options_.ranks;
    add_checks_to_test();
    ended_ = std::move(test_);
  }
  test_.reset();
}

void NcclTestsTextParser::hand_over() {
  if (!ended_) return;
  std::stable_sort(ended_->validity.begin(), ended_->validity.end(),
                   [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
  ++done_;
  sink_(std::move(*ended_));
  ended_.reset();
}

// The test's own checks as issues: wrong rows first, then what the log says in its order, then
// whether it is complete.
void NcclTestsTextParser::add_checks_to_test() {
  Validity rows;
  checks_.out_of_place.add_issue_to(rows, test_->rows.size());
  checks_.in_place.add_issue_to(rows, test_->rows.size());
  test_->validity.insert(test_->validity.begin(), rows.begin(), rows.end());
  if (auto issue = incomplete()) test_->validity.push_back(std::move(*issue));
  std::stable_sort(test_->validity.begin(), test_->validity.end(),
                   [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
}

// A cut last row, no '# Avg bus bandwidth' line, or a run of rows shorter than the header's
// sweep: the test did not finish. The sweep named is the first run short of the plan (the last
// run when none is).
std::optional<Issue> NcclTestsTextParser::incomplete() const {
  const uint64_t planned = checks_.plan.size_count();
  const SizeRun* run = &checks_.runs.back();
  for (const SizeRun& r : checks_.runs) {
    if (r.rows < planned) {
      run = &r;
      break;
    }
  }
  std::vector<std::string> why;
  if (checks_.short_row) {
    why.push_back(fmt::format("the last row is cut short ({} of {} columns: '{}')",
                              checks_.short_row->cells.size(), checks_.width,
                              checks_.short_row->text));
  }
  if (!checks_.summary) {
    why.push_back("the test ends without nccl-tests' '# Avg bus bandwidth' line (the run stopped "
                  "before its summary)");
  }
  if (why.empty() && run->rows < planned) {
    why.push_back(fmt::format("{} {} has {} rows where its header's sweep has {} sizes",
                              run->dtype, run->op, run->rows, planned));
  }
  if (why.empty()) return std::nullopt;
  const int line = checks_.short_row ? checks_.short_row->line : run->last_line;
  return incomplete_sweep(fmt::format("{}:{}", file_, line), join(why, " and "),
                          checks_.plan, run->rows, run->last_bytes);
}

// "Rank  3 Group  0 Pid 1234 on host-a device  3 [...]": rank 3 runs on host-a. A rank number
// beyond any rank count (it would overflow the count) is an Error, not a wrapped-around count.
void NcclTestsTextParser::rank_line(const std::vector<std::string_view>& w) {
  if (w.size() < 4 || w[1].find_first_not_of("0123456789") != std::string_view::npos) return;
  auto on = std::find(w.begin() + 2, w.end(), "on");
  if (on == w.end() || on + 2 >= w.end() || *(on + 2) != "device") return;
  int rank = 0;
  const auto [end, ec] = std::from_chars(w[1].data(), w[1].data() + w[1].size(), rank);
  if (ec != std::errc() || rank == std::numeric_limits<int>::max()) {
    fail(fmt::format("expected a rank number below {} after 'Rank', got '{}'",
                     std::numeric_limits<int>::max(), w[1]));
  }
  test_->ranks = std::max(test_->ranks, rank + 1);
  const std::string host(*(on + 1));
  if (std::find(test_->hosts.begin(), test_->hosts.end(), host) == test_->hosts.end()) {
    test_->hosts.push_back(host);
  }
}

void NcclTestsTextParser::comment(std::string_view body) {
  const std::vector<std::string_view> w = words(body);
  if (w.empty()) return;
  if (w[0] == "nccl-tests" && w.size() > 2 && w[1] == "version") {
    version_ = std::string(w[2]);
  } else if (w[0] == "Collective" && w.size() > 3 && w[2] == "starting:") {
    start_test(known_collective(w[3], where()));
  } else if (w[0] == "nThread") {
    if (!test_ || !test_->rows.empty()) start_test(options_.collective);  // pre-2.13: no name
    test_->command = std::string(body.substr(body.find("nThread")));
    checks_.plan = sweep_plan(w);
  } else if (test_ && w[0] == "Rank") {
    rank_line(w);
  } else if (w[0] == "size" && w.size() > 3 && w[1] == "count") {
    replay_short_row();
    header(w);
  } else if (w[0] == "Collective" && w.size() > 2 && w[2] == "concluded:") {
    end_test();
  } else if (test_) {
    footer(w);
  }
}

// "# Reducing maxBytes to N due to memory limitation" (the sweep ends earlier, by design),
// "# Out of bounds values : 4 FAILED" and "# Avg bus bandwidth : 30.2993 [FAILED|OK]" (the end
// marker: nccl-tests prints it when every size ran).
void NcclTestsTextParser::footer(const std::vector<std::string_view>& w) {
  const auto starts = [&](std::initializer_list<std::string_view> head) {
    return w.size() > head.size() && std::equal(head.begin(), head.end(), w.begin());
  };
  if (starts({"Reducing", "maxBytes", "to"})) {
    if (const auto max = parse_count(w[3])) checks_.plan.max_bytes = *max;
    return;
  }
  const bool bounds = starts({"Out", "of", "bounds", "values"});
  const bool bandwidth = starts({"Avg", "bus", "bandwidth"});
  if (!bounds && !bandwidth) return;
  replay_short_row();
  checks_.summary |= bandwidth;
  const auto colon = std::find(w.begin(), w.end(), ":");
  const auto count = colon + 1 < w.end() ? parse_count(*(colon + 1)) : std::nullopt;
  const bool failed = w.back() == "FAILED" || (bounds && count.value_or(0) > 0);
  if (!failed) return;
  test_->validity.push_back({bounds ? IssueKind::kWrongResults : IssueKind::kFailedCheck, where(),
                             fmt::format("nccl-tests says '{}'", quoted_line(text_)), 0, 0, {},
                             0});
}

std::optional<size_t> NcclTestsTextParser::column(const std::string& name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return std::nullopt;
}

void NcclTestsTextParser::header(const std::vector<std::string_view>& names) {
  columns_.clear();
  checks_.width = names.size();
  checks_.in_place_check.reset();
  for (size_t i = 0; i < names.size(); ++i) {
    const bool check = names[i] == "#wrong" || names[i] == "error";
    if (check && std::count(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i),
                            names[i]) == 1) {
      checks_.in_place_check = i;
    }
  }
  for (std::string_view name : names) {
    if ((name == "time" || name == "cputime") &&
        std::find_if(columns_.begin(), columns_.end(), [](const std::string& c) {
          return c == "time" || c == "cputime";
        }) != columns_.end()) {
      break;  // the in-place half starts
    }
    columns_.emplace_back(name);
  }
  std::vector<std::string_view> missing;
  for (std::string_view name : kRequiredColumns) {
    if (!column(std::string(name))) missing.push_back(name);
  }
  if (!column("time") && !column("cputime")) missing.push_back("time");
  if (!missing.empty()) {
    fail(fmt::format("expected {} '{}' column{} in the column header, got: {}",
                     missing.size() == 1 ? "a" : "the", fmt::join(missing, "', '"),
                     missing.size() == 1 ? "" : "s", fmt::join(columns_, " ")));
  }
}

double NcclTestsTextParser::number(const std::vector<std::string_view>& cells,
                                   const std::string& name) const {
  const auto at = column(name);
  if (!at) return std::numeric_limits<double>::quiet_NaN();
  return parse_number(cells[*at], name, file_, number_);
}

uint64_t NcclTestsTextParser::count(const std::vector<std::string_view>& cells,
                                    const std::string& name) const {
  return parse_count(cells[*column(name)], name, file_, number_);
}

// -1 when the collective has no root.
int NcclTestsTextParser::root(const std::vector<std::string_view>& cells) const {
  const auto at = column("root");
  if (!at) return -1;
  const std::string_view cell = cells[*at];
  int value = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (ec != std::errc() || end != cell.data() + cell.size() || value < -1) {
    fail(fmt::format("expected a rank number (or -1) in column 'root', got '{}'", cell));
  }
  return value;
}

// The numbers of the out-of-place half.
void NcclTestsTextParser::measure(const std::vector<std::string_view>& cells, comm::Row& r) const {
  r.root = root(cells);
  r.bytes = r.requested_bytes = count(cells, "size");
  r.count = count(cells, "count");
  r.time_us = number(cells, time_column());
  r.algbw_gbps = number(cells, "algbw");
  r.busbw_gbps = number(cells, "busbw");
  if (const auto wrong = column("#wrong")) {
    r.wrong = cells[*wrong] == "N/A" ? -1 : static_cast<int64_t>(count(cells, "#wrong"));
  } else if (column("error")) {
    // a relative error, not a count: "at least one" beyond nccl-tests' own bound
    r.wrong = number(cells, "error") > error_bound(r.dtype) ? 1 : 0;
  }
  r.p50_us = std::numeric_limits<double>::quiet_NaN();  // nccl-tests prints no median
  r.p99_us = number(cells, "i_p99");
  r.max_us = number(cells, "i_max");
}

// A row that cannot have been measured (table_helpers.h row_problem), named by its column.
void NcclTestsTextParser::check(const comm::Row& r) const {
  const auto problem = row_problem(r);
  if (!problem) return;
  const std::string time = time_column();
  const std::array<std::string_view, 8> kColumns = {"size",  "count", time,    "algbw",
                                                    "busbw", "p50",   "i_p99", "i_max"};
  fail(fmt::format("column '{}': {}", kColumns[static_cast<size_t>(problem->field)],
                   problem->what));
}

void NcclTestsTextParser::row_structure(const std::vector<std::string_view>& cells) const {
  if (!test_ || columns_.empty()) {
    fail(fmt::format("a result row before any column header: '{}'", cells.front()));
  }
  if (cells.size() < columns_.size()) {
    fail(fmt::format("expected at least {} columns ({}), got {}", columns_.size(),
                     fmt::join(columns_, " "), cells.size()));
  }
  if (collective_.empty()) {
    fail("the log does not name its collective (nccl-tests before 2.13 prints no 'Collective "
         "test starting' line); pass --collective");
  }
}

void NcclTestsTextParser::row(const std::vector<std::string_view>& cells) {
  comm::Row r;
  r.layer = "world";
  r.group = "world";
  r.group_ranks = options_.ranks > 0 ? options_.ranks : test_->ranks;
  r.collective = collective_;
  const std::string_view type = cells[*column("type")];
  const auto dtype = plumb_dtype(type);
  if (!dtype) throw Error(unknown_dtype(where() + ": column 'type'", type));
  r.dtype = *dtype;
  const auto redop = column("redop");
  r.op = redop ? known_op(cells[*redop], where() + ": column 'redop'") : "none";
  measure(cells, r);
  r.straggler = -1;
  check(r);
  observe(cells, r);
  test_->rows.push_back(std::move(r));
}

// What a row adds to the test's checks: its wrong elements, in either half, and the run of sizes
// it extends.
void NcclTestsTextParser::observe(const std::vector<std::string_view>& cells, const comm::Row& r) {
  if (r.wrong > 0) {
    const bool counted = column("#wrong").has_value();
    checks_.out_of_place.add(
        where(), r.requested_bytes, counted ? r.wrong : -1,
        counted ? fmt::format("#wrong {}", r.wrong)
                : fmt::format("error {}, above nccl-tests' bound of {} for {}",
                              cells[*column("error")], error_bound(r.dtype), r.dtype));
  }
  wrong_in_place(cells, r);
  std::vector<SizeRun>& runs = checks_.runs;
  if (runs.empty() || runs.back().dtype != r.dtype || runs.back().op != r.op ||
      runs.back().root != r.root) {
    runs.push_back({r.dtype, r.op, r.root, 0, 0, 0});
  }
  ++runs.back().rows;
  runs.back().last_bytes = r.requested_bytes;
  runs.back().last_line = number_;
}

// The in-place half's '#wrong' (a count, or N/A when not checked) or, before 2.13, its 'error'.
void NcclTestsTextParser::wrong_in_place(const std::vector<std::string_view>& cells,
                                         const comm::Row& r) {
  const auto at = checks_.in_place_check;
  if (!at || *at >= cells.size() || cells[*at] == "N/A") return;
  if (column("#wrong")) {
    const uint64_t n = parse_count(cells[*at], "#wrong", file_, number_);
    if (n > 0) {
      checks_.in_place.add(where(), r.requested_bytes, static_cast<int64_t>(n),
                           fmt::format("#wrong {}", n));
    }
  } else if (parse_number(cells[*at], "error", file_, number_) > error_bound(r.dtype)) {
    checks_.in_place.add(where(), r.requested_bytes, -1,
                         fmt::format("error {}, above nccl-tests' bound of {} for {}", cells[*at],
                                     error_bound(r.dtype), r.dtype));
  }
}

void NcclTestsTextParser::finish() {
  end_test();
  if (ended_) {
    ended_->validity.insert(ended_->validity.end(), orphans_.begin(), orphans_.end());
  }
  problems_.throw_if_any();
  hand_over();
  if (done_ == 0) throw Error(fmt::format("{}: no nccl-tests result rows found", file_));
}

class NcclTestsText final : public Importer {
 public:
  std::string_view name() const override { return "nccl-tests"; }

  bool detect(std::string_view text) const override {
    return text.find("nccl-tests version") != std::string_view::npos ||
           text.find("Collective test starting") != std::string_view::npos ||
           (text.find("# nThread") != std::string_view::npos &&
            text.find("algbw") != std::string_view::npos);
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    std::vector<ImportedTest> tests;
    parse_each(text, file, options, [&](ImportedTest&& t) { tests.push_back(std::move(t)); });
    return tests;
  }

  void parse_each(std::string_view text, std::string_view file, const ImportOptions& options,
                  const TestSink& sink) const override {
    NcclTestsTextParser parser(file, options, sink);
    text = without_bom(text);
    int number = 0;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      parser.line(++number, text.substr(start, end - start));
      start = end + 1;
    }
    parser.finish();
  }
};

}  // namespace

const Importer& nccl_tests_text_importer() {
  static const NcclTestsText kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
