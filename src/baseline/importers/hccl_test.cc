// hccl_test logs (Ascend HCCL's collective test): "data_size(Bytes): | avg_time(us): |
// alg_bandwidth(GB/s): | check_result:" -- "aveg_time" in the current printf, "avg_time" in the
// vendor's documentation. hccl_test prints the root rank's own time and no busbw, and its
// bandwidth unit differs between versions (GiB/s in the documentation's table, 1e9 in current
// code), so plumb recomputes algbw from size and time and busbw from --ranks; the collective is
// not printed either (--collective).
#include <fmt/format.h>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"

namespace plumb::baseline {
namespace {

class HcclTest final : public Importer {
 public:
  std::string_view name() const override { return "hccl-test"; }

  bool detect(std::string_view text) const override {
    return text.find("data_size(Bytes)") != std::string_view::npos;
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    std::vector<ImportedTest> tests;
    ProblemList problems;  // every bad row, in one pass
    std::string settings;
    try {  // a structural problem stops the pass, after the rows' problems found before it
      for_each_line(text, [&](int number, std::string_view line) {
        const std::vector<std::string> cells = split_words(line, "|");
        if (cells.empty()) return;
        if (line.find("minbytes") != std::string_view::npos) {
          settings = std::string(line);
          return;
        }
        if (cells[0] == "data_size(Bytes):") {
          if (options.collective.empty()) {
            throw Error(fmt::format("{}:{}: hccl_test logs do not name their collective; pass "
                                    "--collective",
                                    file, number));
          }
          const int ranks = required_ranks(options, file, "hccl_test");
          tests.push_back({"hccl_test", settings, {}, ranks, number, {}});
          return;
        }
        if (tests.empty()) {
          throw Error(fmt::format("{}:{}: a result row before the 'data_size(Bytes):' header", file, number));
        }
        if (cells.size() < 4) {
          throw Error(fmt::format("{}:{}: expected 4 columns (data_size avg_time alg_bandwidth "
                                  "check_result), got {}",
                                  file, number, cells.size()));
        }
        problems.attempt([&] {  // a bad number does not stop the pass
          const uint64_t bytes = parse_count(cells[0], "data_size(Bytes)", file, number);
          const double time = parse_number(cells[1], "avg_time(us)", file, number);
          parse_number(cells[2], "alg_bandwidth(GB/s)", file, number);  // validated, recomputed
          // hccl_test's default data type (-d) is fp32; its table does not print the type.
          comm::Row row =
              row_from_time(options.collective, "float32", tests.back().ranks, bytes, time);
          check_time_row(row, "avg_time(us)", file, number);
          row.wrong = cells[3] == "success" ? 0 : 1;  // hccl_test reports pass/fail, not a count
          tests.back().rows.push_back(std::move(row));
        });
      });
    } catch (const Error& e) {
      problems.add(e.what());
    }
    problems.throw_if_any();
    if (tests.empty() || tests.back().rows.empty()) {
      throw Error(fmt::format("{}: no hccl_test result rows found", file));
    }
    return tests;
  }
};

}  // namespace

const Importer& hccl_test_importer() {
  static const HcclTest kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
