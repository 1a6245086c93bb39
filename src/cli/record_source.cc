#include "cli/record_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "baseline/record_json.h"
#include "baseline/record_kind.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::cli {
namespace {

bool looks_like_id(const std::string& what) {
  return what == "latest" ||
         (!what.empty() && std::all_of(what.begin(), what.end(),
                                       [](unsigned char c) { return std::isdigit(c) != 0; }));
}

bool is_file(const std::string& what) {
  std::error_code ec;
  return std::filesystem::is_regular_file(what, ec);
}

// A plumb.comm/1 file that says "complete": false is the partial form plumb comm writes while it
// measures (docs/outputs.md): taken as a result, its missing sizes would read as a finished sweep.
baseline::Record read_finished_record(const std::string& path) {
  baseline::Record record = baseline::read_record_file(path);
  const nlohmann::json& comm = record.comm;
  if (comm.is_object() && comm.contains("complete") && comm.at("complete") == false) {
    throw Error(fmt::format("{}: says \"complete\": false: the partial file of a plumb comm sweep "
                            "that did not finish (the rows it measured, no summary), which no "
                            "command takes as a result; use the --json file a finished sweep "
                            "writes",
                            path));
  }
  return record;
}

}  // namespace

baseline::Record load_record(const std::string& what, const std::string& db_path) {
  if (is_file(what)) return read_finished_record(what);
  if (!looks_like_id(what)) {
    throw Error(fmt::format("'{}': no such file, and not a baseline id (a number or 'latest')",
                            what));
  }
  baseline::Store store(baseline::store_location(db_path),
                        baseline::StoreMode::kReadOnly);
  return store.load(store.resolve(what));
}

baseline::Record load_comm_record(const std::string& what, const std::string& db_path,
                                  std::string_view use) {
  baseline::Record record = load_record(what, db_path);
  // A baseline set's comm part is comm measurements like any other.
  if (baseline::holds_set(record) && !record.rows.empty()) return record;
  if (const baseline::RecordKind kind = baseline::kind_of(record); kind != baseline::RecordKind::kComm) {
    const baseline::RecordKindInfo& info = baseline::kind_info(kind);
    throw Error(fmt::format("{} holds {} ({}), not comm measurements: {}",
                            record_name(what, record), info.held, info.made_by, use));
  }
  return record;
}

std::vector<NamedPath> record_inputs(std::initializer_list<std::string_view> whats,
                                     const std::string& db_path) {
  std::vector<NamedPath> inputs;
  std::error_code ec;
  for (std::string_view what : whats) {
    if (!what.empty() && std::filesystem::exists(what, ec)) inputs.push_back({"a record read", std::string(what)});
  }
  try {
    inputs.push_back({"the store", baseline::store_location(db_path)});
  } catch (const Error&) {
    // No default store can be placed: nothing to protect; a load from it says why.
  }
  return inputs;
}

std::string describe_record(const baseline::Record& record) {
  std::vector<std::string> parts;
  if (record.id > 0) {
    parts.push_back(fmt::format("baseline {}", record.id));
  } else if (!record.source.empty()) {
    parts.push_back(record.source);
  }
  if (!record.created.empty()) parts.push_back(record.created);
  if (!record.label.empty()) parts.push_back(record.label);
  if (parts.empty()) return "baseline";
  return join(parts, " · ");
}

std::string record_name(const std::string& what, const baseline::Record& record) {
  if (is_file(what)) return "file " + what;
  return record.id > 0 ? fmt::format("baseline {}", record.id) : what;
}

}  // namespace plumb::cli
