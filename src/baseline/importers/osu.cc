// OSU micro-benchmark collective logs (osu_allreduce, osu_reduce, ...), default columns
// ("# Size  Avg Latency(us)") and -f ("... Min Latency(us) Max Latency(us) Iterations"). OSU
// prints latency only: algbw and busbw are computed from size and average latency as nccl-tests
// defines them, with --ranks (OSU does not print it). OSU's min/max are across ranks of per-rank
// averages, not across iterations, so they do not become p99/max.
//
// What OSU says about its results is kept in the test's validity (validity.h): with -c a
// `Validation` column of `Pass` or `Fail` (osu_util_mpi.c print_stats_validate), a failure line
// of MPI ("mpirun noticed that process rank ...", "MPI_ABORT was invoked") and a last row cut
// short. OSU prints no end marker and no planned last size, so a run that stopped between two
// rows cannot be told from a finished one: the record keeps the last size it reached.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/regex.h"

namespace plumb::baseline {
namespace {

// "# OSU MPI Allreduce Latency Test v7.1", "# OSU MPI-CUDA Reduce Latency Test v7.3"
const Regex& title_line() {
  static const Regex kTitle(R"(# OSU MPI(?:-\w+)? (\w+) Latency Test (v\S+))");
  return kTitle;
}
// "# Datatype: MPI_CHAR."
const Regex& type_line() {
  static const Regex kType(R"(# Datatype: (\w+))");
  return kType;
}

class OsuParser {
 public:
  OsuParser(std::string_view file, const ImportOptions& options) : file_(file), options_(options) {}

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
  void title(int number, std::string_view line, std::string_view name, std::string_view version);
  void row(int number, const std::vector<std::string>& cells);
  void replay_short_row();
  void end_test();

  std::string file_;
  const ImportOptions& options_;
  std::vector<ImportedTest> tests_;
  ProblemList problems_;  // every bad row, in one pass
  std::string collective_;
  std::string dtype_ = "int8";
  int ranks_ = 0;
  // The test being read:
  size_t width_ = 0;  // the cells of its first row: a later row with fewer was cut
  WrongRows failed_{"failed their check"};
  struct ShortRow {
    int line = 0;
    std::vector<std::string> cells;
    std::string text;
  };
  std::optional<ShortRow> short_row_;
};

void OsuParser::line(int number, std::string_view line) {
  std::string_view groups[3];
  if (title_line().search(line, groups)) return title(number, line, groups[1], groups[2]);
  if (type_line().search(line, groups)) {
    const auto name = plumb_dtype(groups[1]);
    if (!name) throw Error(unknown_dtype(where(number), groups[1]));
    dtype_ = *name;
  }
  const std::vector<std::string> cells = split_words(line);
  if (cells.empty() || cells[0].front() == '#') return;
  if (auto failure = failure_line(line, where(number))) {
    if (!tests_.empty()) tests_.back().validity.push_back(std::move(*failure));
    return;
  }
  if (tests_.empty()) {
    throw Error(fmt::format("{}: a result row before the OSU title line", where(number)));
  }
  replay_short_row();
  if (cells.size() < std::max<size_t>(width_, 2)) {  // cut, if it is the last
    short_row_ = ShortRow{number, cells, quoted_line(line)};
    return;
  }
  if (width_ == 0) width_ = cells.size();
  problems_.attempt([&] { row(number, cells); });  // a bad row does not stop the pass
}

void OsuParser::title(int number, std::string_view line, std::string_view name,
                      std::string_view version) {
  end_test();
  width_ = 0;
  failed_ = WrongRows("failed their check");
  short_row_.reset();
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  collective_ = known_collective(lower, where(number));
  ranks_ = required_ranks(options_, file_, "OSU");
  ImportedTest t;
  t.tool = fmt::format("OSU {}", version);
  t.command = std::string(line.substr(line.find("OSU")));
  t.ranks = ranks_;
  t.line = number;
  tests_.push_back(std::move(t));
}

void OsuParser::row(int number, const std::vector<std::string>& cells) {
  const uint64_t bytes = parse_count(cells[0], "Size", file_, number);
  if (cells.size() < 2) {
    throw Error(fmt::format("{}: expected a latency after the size", where(number)));
  }
  const double latency = parse_number(cells[1], "Avg Latency(us)", file_, number);
  comm::Row row = row_from_time(collective_, dtype_, ranks_, bytes, latency);
  check_time_row(row, "Avg Latency(us)", file_, number);
  // -c: "Pass" or "Fail" after the latencies (and before any tail percentiles).
  for (size_t i = 2; i < cells.size(); ++i) {
    if (cells[i] == "Pass" || cells[i] == "Fail") row.wrong = cells[i] == "Fail" ? 1 : 0;
  }
  if (row.wrong > 0) failed_.add(where(number), bytes, -1, "Validation Fail");
  tests_.back().rows.push_back(std::move(row));
}

// A short row followed by more of the table was not cut: read (and refused) at its own line.
void OsuParser::replay_short_row() {
  if (!short_row_) return;
  const ShortRow cut = std::move(*short_row_);
  short_row_.reset();
  problems_.attempt([&] { row(cut.line, cut.cells); });
}

void OsuParser::end_test() {
  if (tests_.empty()) return;
  ImportedTest& t = tests_.back();
  if (t.rows.empty()) replay_short_row();  // nothing measured: the cut row is an error
  if (t.rows.empty()) return;
  Validity checks;
  failed_.add_issue_to(checks, t.rows.size());
  if (short_row_) {
    Issue cut{IssueKind::kIncomplete, where(short_row_->line),
              fmt::format("the last row is cut short ('{}'); OSU prints no planned last size",
                          short_row_->text),
              t.rows.back().bytes, 0, {}, 0};
    checks.push_back(std::move(cut));
  }
  t.validity.insert(t.validity.begin(), checks.begin(), checks.end());
  std::stable_sort(t.validity.begin(), t.validity.end(),
                   [](const Issue& a, const Issue& b) { return a.kind < b.kind; });
}

std::vector<ImportedTest> OsuParser::finish() {
  end_test();
  problems_.throw_if_any();
  if (tests_.empty() || tests_.back().rows.empty()) {
    throw Error(fmt::format("{}: no OSU result rows found", file_));
  }
  return std::move(tests_);
}

class Osu final : public Importer {
 public:
  std::string_view name() const override { return "osu"; }

  bool detect(std::string_view text) const override {
    return text.find("# OSU MPI") != std::string_view::npos;
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    OsuParser parser(file, options);
    try {  // a structural problem stops the pass, after the rows' problems found before it
      for_each_line(text, [&](int number, std::string_view line) { parser.line(number, line); });
    } catch (const Error& e) {
      parser.fail_after(e);
    }
    return parser.finish();
  }
};

}  // namespace

const Importer& osu_importer() {
  static const Osu kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
