// What the importers (and the reader of plumb's own baseline JSON) share: line splitting, numbers
// read with range checks, the checks every imported row passes (no impossible time, size or
// bandwidth), the collectives and element types a row may name, typed JSON fields with their
// paths, and rows whose bandwidths plumb computes itself.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/importers/importer.h"
#include "common/json.h"
#include "common/problem_list.h"

namespace plumb::baseline {

// `text` without a leading UTF-8 byte order mark (Windows editors write one).
std::string_view without_bom(std::string_view text);

// Calls fn(line_number, line) for every line of without_bom(text), without "\n" or "\r\n".
void for_each_line(std::string_view text, const std::function<void(int, std::string_view)>& fn);

// Whitespace-separated words; `extra_separators` count as spaces too ("|" for hccl_test).
std::vector<std::string> split_words(std::string_view line, std::string_view extra_separators = "");

// The largest byte or element count a row may hold: the store's INTEGER is a signed 64-bit one.
inline constexpr uint64_t kMaxCount = std::numeric_limits<int64_t>::max();

// The largest value a record's int field (a rank, a world size) may hold.
inline constexpr int64_t kMaxInt = std::numeric_limits<int>::max();

// Checked reading with std::from_chars: the whole cell, no sign, at most kMaxCount; nullopt
// otherwise (a negative or overflowing count is never clamped).
std::optional<uint64_t> parse_count(std::string_view cell);
// The whole cell as a finite number; nullopt otherwise ("nan", "inf", "1e999", "12x").
std::optional<double> parse_real(std::string_view cell);

// A count or an Error "<file>:<line>: expected a whole number from 0 to 9223372036854775807 in
// column '<column>', got '<cell>'".
uint64_t parse_count(std::string_view cell, std::string_view column, std::string_view file,
                     int line);
// A finite number or an Error "<file>:<line>: expected a number in column '<column>', got '<x>'".
double parse_number(std::string_view cell, std::string_view column, std::string_view file,
                    int line);

// The largest busbw_spread a row may hold: the rounds' median absolute deviation relative to
// their median (comm/rounds.h). It is at most 1 for an odd number of rounds; with an even number
// it can pass 1 when one round nearly stopped, but rounds of one size a thousand times apart are
// no measurement of one setup, and a larger figure only turns the noise model into nonsense
// (docs/diff.md, "The noise model").
inline constexpr double kMaxSpread = 1000;

// The measured quantities of a row, to name the one that is impossible.
enum class Field { kBytes, kCount, kTime, kAlgbw, kBusbw, kP50, kP99, kMax, kWrong, kSpread };
inline constexpr size_t kFieldCount = 10;
struct RowProblem {
  Field field;
  std::string what;  // "expected a time above 0 µs, got -5"
};
// What cannot be measured: a time that is not above 0 (p50/p99/max may be NaN: unknown), a
// negative bandwidth, a size or count beyond kMaxCount, and a busbw of 0 beside an algbw, or a
// size and time, that is not (busbw = algbw × factor, and the factor is at least 1/2 from 2 ranks
// on: docs/comm.md); a wrong-element count below 0 other than -1 (not checked); a busbw_spread
// that is negative, not finite or above kMaxSpread (NaN: measured once).
// The first problem, or nothing.
std::optional<RowProblem> row_problem(const comm::Row& row);
// Only the wrong-element count and the spread (what plumb diff's verdicts rely on besides busbw).
std::optional<RowProblem> validity_problem(const comm::Row& row);

// plumb's name of an element type as plumb, nccl-tests or MPI (via OSU) spell it ("float" ->
// "float32", "half" -> "float16", "MPI_INT" -> "int32"); nullopt for a type plumb does not know.
std::optional<std::string> plumb_dtype(std::string_view name);
// The Error text for a type plumb_dtype() does not know: "<where>: unknown data type 'x'
// (did you mean ..?); expected one of float32, float16, ...".
std::string unknown_dtype(std::string_view where, std::string_view name);

// `op` when it is a reduction nccl-tests prints (sum, prod, max, min, avg, mulsum) or "none"
// (a collective that does not reduce); otherwise an Error "<where>: unknown reduction 'x' ...".
std::string known_op(std::string_view op, std::string_view where);

// A row of a tool that reports time per size only: algbw = bytes / 1e9 / time and busbw from the
// collective's factor for `ranks` (nccl-tests' definitions, docs/comm.md); unknown tails are NaN.
comm::Row row_from_time(const std::string& collective, const std::string& dtype, int ranks,
                        uint64_t bytes, double time_us);

// An Error "<file>:<line>: column '<time_column>': expected a time above 0 µs, got 0" for a row of
// row_from_time() that row_problem() refuses (its time is the only number read from the log).
void check_time_row(const comm::Row& row, std::string_view time_column, std::string_view file,
                    int line);

// The rank count a log needs for busbw: options.ranks, or an Error naming the file.
int required_ranks(const ImportOptions& options, std::string_view file, std::string_view tool);

// The rows of one test whose results were wrong, for the one issue that names them: "3 of 10
// rows have wrong elements in the out-of-place half, the first at 1 MiB (#wrong 12; 40 in all)".
class WrongRows {
 public:
  // `what`: "have wrong elements in the out-of-place half", "failed their check".
  explicit WrongRows(std::string what) : what_(std::move(what)) {}
  // A wrong row at `where` ("log.txt:12"): `elements` wrong (-1: the tool gives no count), shown
  // as `shown` ("#wrong 12", "check_result failed").
  void add(const std::string& where, uint64_t bytes, int64_t elements, std::string shown);
  // The issue, or nothing when no row was wrong; `rows` is how many rows the test has.
  void add_issue_to(Validity& validity, size_t rows) const;

 private:
  std::string what_;
  int64_t count_ = 0;
  int64_t elements_ = 0;  // over the rows that count them
  bool counted_ = false;  // some row gave a count
  std::string where_;     // the first
  uint64_t bytes_ = 0;
  std::string shown_;
};

// A line by which the tool, MPI or Slurm says that the run failed (nccl-tests' "Test NCCL
// failure", "Test CUDA failure" and "Test failure", hccl_test's "hccl_op_base execute failed",
// Open MPI's "MPI_ABORT was invoked" and "mpirun noticed that process rank", Slurm's "srun:
// error:"), as a failed-check issue quoting it; nothing for any other line.
std::optional<Issue> failure_line(std::string_view line, const std::string& where);

// `text` cut to a length that keeps a message on one line, "…" marking the cut.
std::string quoted_line(std::string_view text);

}  // namespace plumb::baseline
