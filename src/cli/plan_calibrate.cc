#include "cli/plan_calibrate.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "cli/measured_step.h"
#include "cli/record_source.h"
#include "common/error.h"
#include "common/json.h"
#include "common/yaml_strict.h"

namespace plumb::cli {
namespace {

// A file named on the command line: a plumb.step/1 file (plumb step --json), else a record file.
std::optional<nlohmann::json> step_file(const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(what, ec)) return std::nullopt;
  std::string problem;
  const nlohmann::json doc = parse_json_or_discarded(read_text_file(what, "--calibrate"), problem);
  // Not JSON: the record reader says why, in the words every command uses for a record file.
  if (doc.is_discarded()) return std::nullopt;
  if (!doc.is_object() || doc.value("schema", "") != step::kStepSchema) return std::nullopt;
  return doc;
}

}  // namespace

CalibrationSources load_calibration_sources(const std::vector<std::string>& whats,
                                            const std::string& db_path) {
  CalibrationSources out;
  for (const std::string& what : whats) {
    const std::string name = "--calibrate " + what;
    if (std::optional<nlohmann::json> doc = step_file(what)) {
      out.steps.push_back(measured_step_from_json(*doc, name));
      continue;
    }
    baseline::Record record = load_record(what, db_path);
    if (!record.step.is_null()) {
      out.steps.push_back(measured_step_from_json(record.step, name));
      continue;
    }
    record = load_comm_record(
        what, db_path,
        "plumb plan --calibrate takes comm measurements (plumb baseline, plumb comm --json, "
        "plumb import), which price the links, or measured steps (plumb step --plan PLAN.json "
        "--save or --json), which fit the efficiencies");
    if (out.comm) {
      throw Error(fmt::format("--calibrate {} and --calibrate {}: both are comm measurements; "
                              "give one (the links of one cluster)",
                              out.comm_what, what));
    }
    out.comm = std::move(record);
    out.comm_what = what;
  }
  return out;
}

}  // namespace plumb::cli
