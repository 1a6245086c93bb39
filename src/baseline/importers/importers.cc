#include <fmt/format.h>

#include <array>
#include <vector>

#include "baseline/importers/importer.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::baseline {

std::span<const Importer* const> importers() {
  // nccl-json first: it accepts only a JSON object with nccl-tests' keys, so it can never take a
  // text log, while a JSON document may happen to hold the words the text importer looks for.
  static const std::array<const Importer*, 4> kTable = {
      &nccl_tests_json_importer(), &nccl_tests_text_importer(), &hccl_test_importer(),
      &osu_importer()};
  return kTable;
}

const Importer& find_importer(std::string_view name) {
  std::vector<std::string> names;
  for (const Importer* i : importers()) {
    if (i->name() == name) return *i;
    names.emplace_back(i->name());
  }
  throw Error(unknown_name("--format", "format", name, names));
}

const Importer& detect_importer(std::string_view text, std::string_view file) {
  std::vector<std::string> names;
  for (const Importer* i : importers()) {
    if (i->detect(text)) return *i;
    names.emplace_back(i->name());
  }
  throw Error(fmt::format("{}: not a log plumb can read ({}); pass --format if it is one", file,
                          join(names, ", ")));
}

void Importer::parse_each(std::string_view text, std::string_view file,
                          const ImportOptions& options, const TestSink& sink) const {
  for (ImportedTest& test : parse(text, file, options)) sink(std::move(test));
}

}  // namespace plumb::baseline
