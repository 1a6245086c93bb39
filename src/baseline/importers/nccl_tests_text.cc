// nccl-tests text logs (src/common.cu's printf output), every variant seen in the wild:
// several tests in one file ("# Collective test starting: <name>_perf"), NCCL INFO/WARN lines in
// between, `mpirun --tag-output` prefixes ("[1,0]<stdout>:"), the -I per-iteration columns
// (i_min i_max i_p99 i_cv%), the -S timestamp after each row, -C's "cputime", and pre-2.13 logs
// with an `error` column instead of `#wrong` and no test name. Rows are split on whitespace and
// read by the column names of the header, never by position in characters (spacing changed in
// 2025). The out-of-place half of each row becomes a plumb row.
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

class Parser {
 public:
  Parser(std::string_view file, const ImportOptions& options, const Importer::TestSink& sink)
      : file_(file), options_(options), sink_(sink) {}

  void line(int number, std::string_view text);
  void finish();

 private:
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
};

void Parser::line(int number, std::string_view raw) {
  number_ = number;
  std::string_view text = strip_tag(raw);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return;
  text.remove_prefix(first);
  if (text.front() == '#') return stop_on_error([&] { comment(text.substr(1)); });
  if (text.find("NCCL INFO") != std::string_view::npos ||
      text.find("NCCL WARN") != std::string_view::npos) {
    return;
  }
  const std::vector<std::string_view> cells = words(text);
  stop_on_error([&] { row_structure(cells); });
  // A bad number does not stop the pass: every bad row of the file is reported at the end.
  problems_.attempt([&] { row(cells); });
}

// A problem of the file's structure (a header, a test name, a row without a header) stops the
// pass, reported after the rows' problems found before it.
void Parser::stop_on_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    problems_.add(e.what());
    problems_.throw_if_any();
  }
}

void Parser::start_test(std::string collective) {
  end_test();
  test_ = ImportedTest{};
  test_->tool = version_.empty() ? "nccl-tests" : "nccl-tests " + version_;
  test_->line = number_;
  // A sweep of nccl-tests' defaults (8 B to 8 GiB by ×2) has 31 sizes: one allocation, not six.
  test_->rows.reserve(32);
  collective_ = std::move(collective);
  columns_.clear();
}

void Parser::end_test() {
  if (test_ && !test_->rows.empty() && problems_.empty()) {
    if (options_.ranks > 0) test_->ranks = options_.ranks;
    ++done_;
    sink_(std::move(*test_));
  }
  test_.reset();
}

// "Rank  3 Group  0 Pid 1234 on host-a device  3 [...]": rank 3 runs on host-a. A rank number
// beyond any rank count (it would overflow the count) is an Error, not a wrapped-around count.
void Parser::rank_line(const std::vector<std::string_view>& w) {
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

void Parser::comment(std::string_view body) {
  const std::vector<std::string_view> w = words(body);
  if (w.empty()) return;
  if (w[0] == "nccl-tests" && w.size() > 2 && w[1] == "version") {
    version_ = std::string(w[2]);
  } else if (w[0] == "Collective" && w.size() > 3 && w[2] == "starting:") {
    start_test(known_collective(w[3], where()));
  } else if (w[0] == "nThread") {
    if (!test_ || !test_->rows.empty()) start_test(options_.collective);  // pre-2.13: no name
    test_->command = std::string(body.substr(body.find("nThread")));
  } else if (test_ && w[0] == "Rank") {
    rank_line(w);
  } else if (w[0] == "size" && w.size() > 3 && w[1] == "count") {
    header(w);
  } else if (w[0] == "Collective" && w.size() > 2 && w[2] == "concluded:") {
    end_test();
  }
}

std::optional<size_t> Parser::column(const std::string& name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return std::nullopt;
}

void Parser::header(const std::vector<std::string_view>& names) {
  columns_.clear();
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

double Parser::number(const std::vector<std::string_view>& cells, const std::string& name) const {
  const auto at = column(name);
  if (!at) return std::numeric_limits<double>::quiet_NaN();
  return parse_number(cells[*at], name, file_, number_);
}

uint64_t Parser::count(const std::vector<std::string_view>& cells, const std::string& name) const {
  return parse_count(cells[*column(name)], name, file_, number_);
}

// -1 when the collective has no root.
int Parser::root(const std::vector<std::string_view>& cells) const {
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
void Parser::measure(const std::vector<std::string_view>& cells, comm::Row& r) const {
  r.root = root(cells);
  r.bytes = r.requested_bytes = count(cells, "size");
  r.count = count(cells, "count");
  r.time_us = number(cells, time_column());
  r.algbw_gbps = number(cells, "algbw");
  r.busbw_gbps = number(cells, "busbw");
  if (const auto wrong = column("#wrong")) {
    r.wrong = cells[*wrong] == "N/A" ? -1 : static_cast<int64_t>(count(cells, "#wrong"));
  } else if (column("error")) {
    r.wrong = number(cells, "error") > 0 ? 1 : 0;  // a relative error, not a count: "at least one"
  }
  r.p50_us = std::numeric_limits<double>::quiet_NaN();  // nccl-tests prints no median
  r.p99_us = number(cells, "i_p99");
  r.max_us = number(cells, "i_max");
}

// A row that cannot have been measured (table_helpers.h row_problem), named by its column.
void Parser::check(const comm::Row& r) const {
  const auto problem = row_problem(r);
  if (!problem) return;
  const std::string time = time_column();
  const std::array<std::string_view, 8> kColumns = {"size",  "count", time,    "algbw",
                                                    "busbw", "p50",   "i_p99", "i_max"};
  fail(fmt::format("column '{}': {}", kColumns[static_cast<size_t>(problem->field)],
                   problem->what));
}

void Parser::row_structure(const std::vector<std::string_view>& cells) const {
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

void Parser::row(const std::vector<std::string_view>& cells) {
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
  test_->rows.push_back(std::move(r));
}

void Parser::finish() {
  end_test();
  problems_.throw_if_any();
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
    Parser parser(file, options, sink);
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
