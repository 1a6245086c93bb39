// OSU micro-benchmark collective logs (osu_allreduce, osu_reduce, ...), default columns
// ("# Size  Avg Latency(us)") and -f ("... Min Latency(us) Max Latency(us) Iterations"). OSU
// prints latency only: algbw and busbw are computed from size and average latency as nccl-tests
// defines them, with --ranks (OSU does not print it). OSU's min/max are across ranks of per-rank
// averages, not across iterations, so they do not become p99/max.
#include <fmt/format.h>

#include <cctype>
#include <regex>

#include "baseline/importers/importer.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"

namespace plumb::baseline {
namespace {

class Osu final : public Importer {
 public:
  std::string_view name() const override { return "osu"; }

  bool detect(std::string_view text) const override {
    return text.find("# OSU MPI") != std::string_view::npos;
  }

  std::vector<ImportedTest> parse(std::string_view text, std::string_view file,
                                  const ImportOptions& options) const override {
    static const std::regex kTitle(R"(# OSU MPI(?:-\w+)? (\w+) Latency Test (v\S+))");
    static const std::regex kType(R"(# Datatype: (\w+))");
    std::vector<ImportedTest> tests;
    ProblemList problems;  // every bad row, in one pass
    std::string collective;
    std::string dtype = "int8";
    int ranks = 0;
    try {  // a structural problem stops the pass, after the rows' problems found before it
      for_each_line(text, [&](int number, std::string_view line) {
        const std::string s(line);
        std::smatch m;
        if (std::regex_search(s, m, kTitle)) {
          std::string name = m[1];
          for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          collective = known_collective(name, fmt::format("{}:{}", file, number));
          ranks = required_ranks(options, file, "OSU");
          tests.push_back({fmt::format("OSU {}", m[2].str()), s.substr(2), {}, ranks, number, {}});
          return;
        }
        if (std::regex_search(s, m, kType)) {
          const auto name = plumb_dtype(m[1].str());
          if (!name) throw Error(unknown_dtype(fmt::format("{}:{}", file, number), m[1].str()));
          dtype = *name;
        }
        const std::vector<std::string> cells = split_words(line);
        if (cells.empty() || cells[0].front() == '#') return;
        if (tests.empty()) throw Error(fmt::format("{}:{}: a result row before the OSU title line", file, number));
        problems.attempt([&] {  // a bad row does not stop the pass
          const uint64_t bytes = parse_count(cells[0], "Size", file, number);
          if (cells.size() < 2) throw Error(fmt::format("{}:{}: expected a latency after the size", file, number));
          const double latency = parse_number(cells[1], "Avg Latency(us)", file, number);
          comm::Row row = row_from_time(collective, dtype, ranks, bytes, latency);
          check_time_row(row, "Avg Latency(us)", file, number);
          tests.back().rows.push_back(std::move(row));
        });
      });
    } catch (const Error& e) {
      problems.add(e.what());
    }
    problems.throw_if_any();
    if (tests.empty() || tests.back().rows.empty()) {
      throw Error(fmt::format("{}: no OSU result rows found", file));
    }
    return tests;
  }
};

}  // namespace

const Importer& osu_importer() {
  static const Osu kInstance;
  return kInstance;
}

}  // namespace plumb::baseline
