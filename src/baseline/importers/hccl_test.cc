// hccl_test logs (Ascend HCCL's collective test): "data_size(Bytes): | avg_time(us): |
// alg_bandwidth(GB/s): | check_result:" -- "aveg_time" in the current printf, "avg_time" in the
// vendor's documentation. hccl_test prints the root rank's own time and no busbw, and its
// bandwidth unit differs between versions (GiB/s in the documentation's table, 1e9 in current
// code), so plumb recomputes algbw from size and time and busbw from --ranks; the collective is
// not printed either (--collective).
//
// What hccl_test says about its results (hccl_opbase_rootinfo_base.cc print_execution_time, in
// CANN's tools/hccl_test) is kept in the test's validity (validity.h): check_result is `success`,
// `failed` or `NULL` (not checked: -c 0, or a type whose result would overflow); the root prints
// its own check only, and every other rank whose check failed prints "rank id N, check result
// failed, SIZE | ..." on its own line; "hccl_op_base execute failed" stops the sweep. hccl_test
// prints no end marker: a sweep whose next size (by the step of its last sizes) is not above the
// "maxbytes is N" of its settings line did not finish.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/regex.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

// check_result -> wrong elements: hccl_test reports pass or fail, not a count.
struct CheckResult {
  std::string_view text;
  int64_t wrong;
};
constexpr std::array<CheckResult, 3> kCheckResults = {{{"success", 0}, {"failed", 1}, {"NULL", -1}}};

// "rank id 3, check result failed, 8192 | ..."
const Regex& rank_failed_line() {
  static const Regex kLine(R"(^\s*rank id (\d+), check result failed, (\d+))");
  return kLine;
}
// "the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 5"
const Regex& settings_line() {
  static const Regex kLine(R"(minbytes is (\d+), maxbytes is (\d+))");
  return kLine;
}

// The sizes after `last` as the test's last sizes step: +d when the last three are evenly
// spaced, else ×(last / previous); an unknown plan with fewer than two sizes.
SweepPlan rest_of_sweep(const std::vector<comm::Row>& rows, uint64_t max_bytes) {
  SweepPlan plan;
  const size_t k = rows.size();
  if (k < 2 || rows[k - 1].bytes <= rows[k - 2].bytes || rows[k - 2].bytes == 0) return plan;
  const uint64_t last = rows[k - 1].bytes;
  const uint64_t step = last - rows[k - 2].bytes;
  if (k >= 3 && rows[k - 2].bytes > rows[k - 3].bytes && rows[k - 2].bytes - rows[k - 3].bytes == step) {
    plan.step_bytes = step;
  } else {
    plan.factor = static_cast<double>(last) / static_cast<double>(rows[k - 2].bytes);
  }
  const long double next = plan.factor > 1 ? static_cast<long double>(last) * plan.factor
                                            : static_cast<long double>(last) + step;
  if (next > static_cast<long double>(kMaxCount)) return {};  // beyond any maxbytes
  plan.max_bytes = max_bytes;
  plan.min_bytes = static_cast<uint64_t>(next);
  return plan;
}

class HcclTestParser {
 public:
  HcclTestParser(std::string_view file, const ImportOptions& options)
      : file_(file), options_(options) {}

  void line(int number, std::string_view line);
  std::vector<ImportedTest> finish();
  // A structural problem stops the pass: reported after the rows' problems found before it.
  [[noreturn]] void fail_after(const Error& e) {
    problems_.add(e.what());
    problems_.throw_if_any();
    throw e;
  }

 private:
  std::string where(int number) const { return fmt::format("{}:{}", file_, number); }
  void header(int number);
  void row(int number, const std::vector<std::string>& cells);
  bool rank_failed(int number, std::string_view line);
  void replay_short_row();
  void end_test();
  std::optional<Issue> incomplete() const;

  std::string file_;
  const ImportOptions& options_;
  std::vector<ImportedTest> tests_;
  ProblemList problems_;  // every bad row, in one pass
  std::string settings_;
  std::optional<uint64_t> max_bytes_;
  // The test being read:
  WrongRows wrong_{"failed their check"};
  WrongRows ranks_failed_{"have a rank that failed its check"};
  std::vector<uint64_t> failed_sizes_;  // of "rank id N, check result failed" lines
  struct ShortRow {
    int line = 0;
    size_t cells = 0;
    std::string text;
  };
  std::optional<ShortRow> short_row_;
  int last_row_line_ = 0;
};

void HcclTestParser::line(int number, std::string_view line) {
  const std::vector<std::string> cells = split_words(line, "|");
  if (cells.empty() || cells[0] == "Warning:") return;  // "No verification is performed": NULL rows
  std::string_view groups[3];
  if (settings_line().search(line, groups)) {
    settings_ = std::string(line);
    max_bytes_ = parse_count(groups[2]);
    return;
  }
  if (auto failure = failure_line(line, where(number))) {
    if (!tests_.empty()) tests_.back().validity.push_back(std::move(*failure));
    return;
  }
  if (rank_failed(number, line)) return;
  replay_short_row();
  if (cells[0] == "data_size(Bytes):") return header(number);
  if (tests_.empty()) {
    throw Error(fmt::format("{}: a result row before the 'data_size(Bytes):' header", where(number)));
  }
  if (cells.size() < 4) {  // cut, if it is the last
    short_row_ = ShortRow{number, cells.size(), quoted_line(line)};
    return;
  }
  problems_.attempt([&] { row(number, cells); });  // a bad number does not stop the pass
}

void HcclTestParser::header(int number) {
  end_test();
  if (options_.collective.empty()) {
    throw Error(fmt::format("{}: hccl_test logs do not name their collective; pass --collective",
                            where(number)));
  }
  ImportedTest t;
  t.tool = "hccl_test";
  t.command = settings_;
  t.ranks = required_ranks(options_, file_, "hccl_test");
  t.line = number;
  tests_.push_back(std::move(t));
}

void HcclTestParser::row(int number, const std::vector<std::string>& cells) {
  const uint64_t bytes = parse_count(cells[0], "data_size(Bytes)", file_, number);
  const double time = parse_number(cells[1], "avg_time(us)", file_, number);
  parse_number(cells[2], "alg_bandwidth(GB/s)", file_, number);  // validated, recomputed
  // hccl_test's default data type (-d) is fp32; its table does not print the type.
  comm::Row row = row_from_time(options_.collective, "float32", tests_.back().ranks, bytes, time);
  check_time_row(row, "avg_time(us)", file_, number);
  const auto result = std::find_if(kCheckResults.begin(), kCheckResults.end(),
                                   [&](const CheckResult& c) { return c.text == cells[3]; });
  if (result == kCheckResults.end()) {
    throw Error(fmt::format("{}: expected success, failed or NULL in column 'check_result', got "
                            "'{}'",
                            where(number), cells[3]));
  }
  row.wrong = result->wrong;
  if (row.wrong > 0) wrong_.add(where(number), bytes, -1, "check_result failed");
  tests_.back().rows.push_back(std::move(row));
  last_row_line_ = number;
}

bool HcclTestParser::rank_failed(int number, std::string_view line) {
  std::string_view groups[3];
  if (!rank_failed_line().search(line, groups)) return false;
  const uint64_t bytes = parse_count(groups[2], "data_size(Bytes)", file_, number);
  ranks_failed_.add(where(number), bytes, -1, fmt::format("rank id {}, check result failed", groups[1]));
  failed_sizes_.push_back(bytes);
  return true;
}

// A short row followed by more of the table was not cut: refused at its own line.
void HcclTestParser::replay_short_row() {
  if (!short_row_) return;
  problems_.add(fmt::format("{}: expected 4 columns (data_size avg_time alg_bandwidth "
                            "check_result), got {}",
                            where(short_row_->line), short_row_->cells));
  short_row_.reset();
}

// The sizes hccl_test did not reach: a cut last row, or a next size within maxbytes.
std::optional<Issue> HcclTestParser::incomplete() const {
  const std::vector<comm::Row>& rows = tests_.back().rows;
  const uint64_t last = rows.back().bytes;
  const SweepPlan rest = rest_of_sweep(rows, max_bytes_.value_or(0));
  const bool short_of_max = max_bytes_ && (rest.planned() ? rest.min_bytes <= *max_bytes_
                                                          : last < *max_bytes_);
  if (!short_row_ && !short_of_max) return std::nullopt;
  std::string what = short_row_ ? fmt::format("the last row is cut short ('{}')", short_row_->text)
                                : "";
  if (short_of_max) {
    what += fmt::format("{}its settings line says maxbytes is {} and {}", what.empty() ? "" : " and ",
                        *max_bytes_,
                        rest.planned() ? "the next size has no row" : "no row reached it");
  }
  const int line = short_row_ ? short_row_->line : last_row_line_;
  Issue issue = incomplete_sweep(where(line), what, rest, 0, last);
  if (issue.planned_bytes == 0 && max_bytes_) issue.planned_bytes = *max_bytes_;
  return issue;
}

void HcclTestParser::end_test() {
  if (!tests_.empty() && !tests_.back().rows.empty()) {
    ImportedTest& t = tests_.back();
    for (comm::Row& r : t.rows) {
      if (std::find(failed_sizes_.begin(), failed_sizes_.end(), r.bytes) != failed_sizes_.end()) {
        r.wrong = std::max<int64_t>(r.wrong, 1);
      }
    }
    Validity checks;
    wrong_.add_issue_to(checks, t.rows.size());
    ranks_failed_.add_issue_to(checks, t.rows.size());
    if (auto issue = incomplete()) checks.push_back(std::move(*issue));
    t.validity.insert(t.validity.begin(), checks.begin(), checks.end());
    std::stable_sort(t.validity.begin(), t.validity.end(),
                     [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
  } else if (short_row_ && !tests_.empty()) {
    replay_short_row();  // nothing measured: the cut row is an error
  }
  if (tests_.empty()) return;  // rank lines before the first header belong to it
  wrong_ = WrongRows("failed their check");
  ranks_failed_ = WrongRows("have a rank that failed its check");
  failed_sizes_.clear();
  short_row_.reset();
}

std::vector<ImportedTest> HcclTestParser::finish() {
  end_test();
  problems_.throw_if_any();
  if (tests_.empty() || tests_.back().rows.empty()) {
    throw Error(fmt::format("{}: no hccl_test result rows found", file_));
  }
  return std::move(tests_);
}

class HcclTest final : public Importer {
 public:
  std::string_view name() const override { return "hccl-test"; }

  bool detect(std::string_view text) const override {
    return text.find("data_size(Bytes)") != std::string_view::npos;
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    HcclTestParser parser(file, options);
    try {  // a structural problem stops the pass, after the rows' problems found before it
      for_each_line(text, [&](int number, std::string_view line) { parser.line(number, line); });
    } catch (const Error& e) {
      parser.fail_after(e);
    }
    return parser.finish();
  }
};

}  // namespace

const Importer& hccl_test_importer() {
  static const HcclTest kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
