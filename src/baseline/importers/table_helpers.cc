#include "baseline/importers/table_helpers.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "comm/bandwidth.h"
#include "comm/collective.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

// nccl-tests prints bandwidths with two decimals ("%7.2f"): an algbw from 0.02 GB/s on leaves a
// busbw of at least 0.01 with any factor of 1/2 or more, so a printed 0.00 beside it is wrong.
constexpr double kMinAlgbwForNonzeroBusbw = 0.02;

struct DtypeName {
  std::string_view spelling, plumb;
};
// plumb's names (comm/dtype.h), nccl-tests' table names (src/common.cu test_typenames; "char"
// and "int" before NCCL 2, "f8e4m3"/"f8e5m2" for fp8) and OSU's MPI datatypes.
constexpr std::array<DtypeName, 27> kDtypes = {{
    {"float32", "float32"},      {"float16", "float16"},     {"bfloat16", "bfloat16"},
    {"float64", "float64"},      {"int8", "int8"},           {"uint8", "uint8"},
    {"int32", "int32"},          {"uint32", "uint32"},       {"int64", "int64"},
    {"uint64", "uint64"},        {"fp8_e4m3", "fp8_e4m3"},   {"fp8_e5m2", "fp8_e5m2"},
    {"float", "float32"},        {"half", "float16"},        {"double", "float64"},
    {"char", "int8"},            {"int", "int32"},           {"f8e4m3", "fp8_e4m3"},
    {"f8e5m2", "fp8_e5m2"},      {"bf16", "bfloat16"},       {"fp16", "float16"},
    {"MPI_CHAR", "int8"},        {"MPI_SIGNED_CHAR", "int8"}, {"MPI_UNSIGNED_CHAR", "uint8"},
    {"MPI_INT", "int32"},        {"MPI_FLOAT", "float32"},   {"MPI_DOUBLE", "float64"},
}};
constexpr size_t kPlumbDtypes = 12;  // the first entries: plumb's own names

std::optional<RowProblem> time_problem(Field field, double us, bool may_be_unknown) {
  if (us > 0 && std::isfinite(us)) return std::nullopt;
  if (may_be_unknown && std::isnan(us)) return std::nullopt;
  return RowProblem{field, fmt::format("expected a time above 0 µs, got {}", us)};
}

std::optional<RowProblem> bandwidth_problem(Field field, double gbps) {
  if (gbps >= 0 && std::isfinite(gbps)) return std::nullopt;
  return RowProblem{field, fmt::format("expected a bandwidth not below 0 GB/s, got {}", gbps)};
}

std::optional<RowProblem> count_problem(Field field, uint64_t n) {
  if (n <= kMaxCount) return std::nullopt;
  return RowProblem{field, fmt::format("expected a whole number from 0 to {}, got {}", kMaxCount, n)};
}

std::optional<RowProblem> wrong_problem(int64_t wrong) {
  if (wrong >= -1) return std::nullopt;
  return RowProblem{Field::kWrong, fmt::format("expected a count of wrong elements from 0 (or "
                                               "none: not checked), got {}",
                                               wrong)};
}

std::optional<RowProblem> spread_problem(double spread) {
  if (std::isnan(spread) || (spread >= 0 && spread <= kMaxSpread)) return std::nullopt;
  return RowProblem{Field::kSpread,
                    fmt::format("expected a relative spread from 0 to {} (the rounds' median "
                                "absolute deviation over their median; none when measured once), "
                                "got {}",
                                kMaxSpread, spread)};
}

}  // namespace

std::string_view without_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  return text;
}

void for_each_line(std::string_view text, const std::function<void(int, std::string_view)>& fn) {
  text = without_bom(text);
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++number, line);
    start = end + 1;
  }
}

std::vector<std::string> split_words(std::string_view line, std::string_view extra_separators) {
  std::vector<std::string> out;
  std::string word;
  for (char c : line) {
    const bool separator = c == ' ' || c == '\t' || extra_separators.find(c) != std::string_view::npos;
    if (!separator) {
      word += c;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::optional<uint64_t> parse_count(std::string_view cell) {
  uint64_t value = 0;
  const char* end = cell.data() + cell.size();
  const auto [stop, ec] = std::from_chars(cell.data(), end, value);
  if (cell.empty() || ec != std::errc() || stop != end || value > kMaxCount) return std::nullopt;
  return value;
}

std::optional<double> parse_real(std::string_view cell) {
  double value = 0;
  const char* end = cell.data() + cell.size();
  const auto [stop, ec] = std::from_chars(cell.data(), end, value);
  if (cell.empty() || ec != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

uint64_t parse_count(std::string_view cell, std::string_view column, std::string_view file,
                     int line) {
  if (const auto value = parse_count(cell)) return *value;
  throw Error(fmt::format("{}:{}: expected a whole number from 0 to {} in column '{}', got '{}'",
                          file, line, kMaxCount, column, cell));
}

double parse_number(std::string_view cell, std::string_view column, std::string_view file,
                    int line) {
  if (const auto value = parse_real(cell)) return *value;
  throw Error(fmt::format("{}:{}: expected a number in column '{}', got '{}'", file, line, column,
                          cell));
}

std::optional<RowProblem> validity_problem(const comm::Row& r) {
  if (auto p = wrong_problem(r.wrong)) return p;
  return spread_problem(r.busbw_spread);
}

std::optional<RowProblem> row_problem(const comm::Row& r) {
  const std::optional<RowProblem> problems[] = {
      count_problem(Field::kBytes, r.bytes),
      count_problem(Field::kCount, r.count),
      time_problem(Field::kTime, r.time_us, false),
      bandwidth_problem(Field::kAlgbw, r.algbw_gbps),
      bandwidth_problem(Field::kBusbw, r.busbw_gbps),
      time_problem(Field::kP50, r.p50_us, true),
      time_problem(Field::kP99, r.p99_us, true),
      time_problem(Field::kMax, r.max_us, true),
      wrong_problem(r.wrong),
      spread_problem(r.busbw_spread),
  };
  for (const auto& p : problems) {
    if (p) return p;
  }
  if (r.busbw_gbps != 0 || r.group_ranks == 1) return std::nullopt;
  if (r.algbw_gbps >= kMinAlgbwForNonzeroBusbw) {
    return RowProblem{Field::kBusbw,
                      fmt::format("expected a busbw above 0 beside an algbw of {} GB/s (busbw is "
                                  "at least half of algbw from 2 ranks on), got 0",
                                  r.algbw_gbps)};
  }
  // bytes / time in GB/s; even the algbw of nccl-tests before 2.13 (allgather: size × (n-1)/n)
  // is at least half of it.
  if (static_cast<double>(r.bytes) / r.time_us / 1e3 >= 2 * 2 * kMinAlgbwForNonzeroBusbw) {
    return RowProblem{Field::kBusbw, fmt::format("expected a busbw above 0 for {} bytes in {} µs "
                                                 "on more than one rank, got 0",
                                                 r.bytes, r.time_us)};
  }
  return std::nullopt;
}

std::string known_collective(std::string_view name, std::string_view where) {
  return std::string(comm::find_collective(name, where).name());
}

std::optional<std::string> plumb_dtype(std::string_view name) {
  for (const DtypeName& d : kDtypes) {
    if (d.spelling == name) return std::string(d.plumb);
  }
  return std::nullopt;
}

std::string unknown_dtype(std::string_view where, std::string_view name) {
  std::vector<std::string> names;
  for (size_t i = 0; i < kPlumbDtypes; ++i) names.emplace_back(kDtypes[i].plumb);
  std::vector<std::string> spellings;
  for (const DtypeName& d : kDtypes) spellings.emplace_back(d.spelling);
  const auto suggestion = closest_match(name, spellings);
  return fmt::format("{}: unknown data type '{}'{}; expected one of {}", where, name,
                     suggestion ? fmt::format(" (did you mean '{}'?)", *suggestion) : "",
                     join(names, ", "));
}

std::string known_op(std::string_view op, std::string_view where) {
  // nccl-tests' test_opnames (src/common.cu); "mulsum" is ncclPreMulSum; "none" where no op.
  constexpr std::array<std::string_view, 7> kOps = {"sum", "prod", "max",  "min",
                                                    "avg", "mulsum", "none"};
  std::vector<std::string> names;
  for (std::string_view name : kOps) {
    if (name == op) return std::string(op);
    names.emplace_back(name);
  }
  throw Error(unknown_name(where, "reduction", op, names));
}

comm::Row row_from_time(const std::string& collective, const std::string& dtype, int ranks,
                        uint64_t bytes, double time_us) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  comm::Row r;
  r.layer = "world";
  r.group = "world";
  r.group_ranks = ranks;
  r.collective = collective;
  r.dtype = dtype;
  const comm::Collective& c = comm::find_collective(collective);
  r.op = c.uses_op() ? "sum" : "none";
  r.root = c.uses_root() ? 0 : -1;
  r.requested_bytes = r.bytes = bytes;
  r.count = 0;  // unknown for a type plumb does not know
  for (const comm::DataTypeInfo& t : comm::all_data_types()) {
    if (t.name == dtype) r.count = bytes / t.size;
  }
  r.time_us = time_us;
  r.algbw_gbps = time_us > 0 ? comm::algbw_gbps(bytes, time_us * 1e-6) : 0;
  r.busbw_gbps = comm::busbw_gbps(r.algbw_gbps, c.bus_factor(ranks));
  r.wrong = -1;
  r.p50_us = r.p99_us = r.max_us = nan;
  r.straggler = -1;
  return r;
}

void check_time_row(const comm::Row& row, std::string_view time_column, std::string_view file,
                    int line) {
  if (const auto problem = row_problem(row)) {
    throw Error(fmt::format("{}:{}: column '{}': {}", file, line, time_column, problem->what));
  }
}

int required_ranks(const ImportOptions& options, std::string_view file, std::string_view tool) {
  if (options.ranks > 0) return options.ranks;
  throw Error(fmt::format("{}: {} logs do not say how many ranks ran, and busbw depends on it; "
                          "pass --ranks",
                          file, tool));
}

void WrongRows::add(const std::string& where, uint64_t bytes, int64_t elements,
                    std::string shown) {
  if (count_++ == 0) {
    where_ = where;
    bytes_ = bytes;
    shown_ = std::move(shown);
  }
  if (elements < 0) return;
  counted_ = true;
  elements_ = elements > std::numeric_limits<int64_t>::max() - elements_
                  ? std::numeric_limits<int64_t>::max()
                  : elements_ + elements;
}

void WrongRows::add_issue_to(Validity& validity, size_t rows) const {
  if (count_ == 0) return;
  const std::string total = counted_ && count_ > 1 ? fmt::format("; {} in all", elements_) : "";
  validity.push_back({IssueKind::kWrongResults, where_,
                      fmt::format("{} of {} rows {}, the first at {} ({}{})", count_, rows, what_,
                                  format_bytes(bytes_), shown_, total),
                      0, 0, {}, 0});
}

namespace {

// nccl-tests src/common.h (NCCLCHECK, CUDACHECK, TESTCHECK), hccl_test
// hccl_test_common.cc (opbase_test_by_data_size), Open MPI's orte/mpirun help texts, Slurm's srun.
constexpr std::array<std::string_view, 7> kFailureLines = {
    "Test NCCL failure",    "Test CUDA failure",       "Test failure",
    "hccl_op_base execute failed", "MPI_ABORT was invoked", "mpirun noticed that process rank",
    "srun: error:",
};

// Longer lines are cut: a message stays one line.
constexpr size_t kMostQuoted = 160;

}  // namespace

std::string quoted_line(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  text = first == std::string_view::npos ? std::string_view() : text.substr(first);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  if (text.size() <= kMostQuoted) return std::string(text);
  return std::string(text.substr(0, kMostQuoted)) + "…";
}

std::optional<Issue> failure_line(std::string_view line, const std::string& where) {
  for (std::string_view marker : kFailureLines) {
    if (line.find(marker) == std::string_view::npos) continue;
    return Issue{IssueKind::kFailedCheck, where,
                 fmt::format("the run reported a failure: '{}'", quoted_line(line)), 0, 0, {}, 0};
  }
  return std::nullopt;
}

}  // namespace plumb::baseline
