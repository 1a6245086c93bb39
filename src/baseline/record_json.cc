#include "baseline/record_json.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "baseline/importers/table_helpers.h"
#include "comm/sweep.h"
#include "common/error.h"
#include "common/json.h"
#include "common/input_file.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

std::string schema_of(const json& doc) {
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string()) return "";
  return doc["schema"].get<std::string>();
}

// Every field of a record document read with its type checked; each error names the file and
// the JSON path ("x.json: results[3].busbw_gbps: expected a number, got \"fast\"").
class RecordReader : JsonFields {
 public:
  explicit RecordReader(const std::string& origin) : JsonFields(origin) {}

  Record from_comm(const json& doc) const;
  Record from_baseline(const json& doc) const;

 private:
  std::string optional_text(const json& doc, const char* key) const {
    return doc.contains(key) ? text(doc, "", key) : "";
  }
  std::vector<std::string> hosts(const json& doc) const;
  std::vector<comm::Row> rows(const json& parent, const std::string& path) const;
  comm::Row row(const json& entry, const std::string& path) const;
  void names(const json& entry, const std::string& path, comm::Row& r) const;
  void check(const comm::Row& r, const std::string& path) const;
};

std::vector<std::string> RecordReader::hosts(const json& doc) const {
  if (!doc.contains("hosts")) return {};
  const json& list = array(doc, "", "hosts");
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) fail(fmt::format("hosts[{}]", i), "expected a string, got " + shown(list[i]));
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

std::vector<comm::Row> RecordReader::rows(const json& parent, const std::string& path) const {
  const json& results = array(parent, path, "results");
  const std::string at_results = at(path, "results");
  std::vector<comm::Row> out;
  out.reserve(results.size());
  ProblemList problems;  // every bad row of the file, in one pass
  for (size_t i = 0; i < results.size(); ++i) {
    problems.attempt([&] { out.push_back(row(results[i], fmt::format("{}[{}]", at_results, i))); });
  }
  problems.throw_if_any();
  return out;
}

// The names a row carries: the collective and element type must be ones plumb knows.
void RecordReader::names(const json& entry, const std::string& path, comm::Row& r) const {
  r.layer = text(entry, path, "layer");
  r.group = text(entry, path, "group");
  const std::string collective = text(entry, path, "collective");
  r.collective = known_collective(collective, fmt::format("{}: {}.collective", file(), path));
  const std::string dtype = text(entry, path, "dtype");
  const auto plumb_name = plumb_dtype(dtype);
  if (!plumb_name) throw Error(unknown_dtype(fmt::format("{}: {}.dtype", file(), path), dtype));
  r.dtype = *plumb_name;
  r.op = known_op(text(entry, path, "op"), fmt::format("{}: {}.op", file(), path));
}

comm::Row RecordReader::row(const json& entry, const std::string& path) const {
  if (!entry.is_object()) fail(path, "expected an object, got " + shown(entry));
  comm::Row r;
  names(entry, path, r);
  r.group_ranks = static_cast<int>(integer(entry, path, "group_ranks", 0, kMaxInt));
  r.root = static_cast<int>(integer(entry, path, "root", -1, kMaxInt));
  r.requested_bytes = whole(entry, path, "requested_bytes");
  r.bytes = whole(entry, path, "bytes");
  r.count = whole(entry, path, "count");
  r.time_us = number(entry, path, "time_us");
  r.algbw_gbps = number(entry, path, "algbw_gbps");
  r.busbw_gbps = number(entry, path, "busbw_gbps");
  // null when not checked; imported rows have no p50/p99/max: null, NaN here.
  r.wrong = member(entry, path, "wrong").is_null()
                ? -1
                : integer(entry, path, "wrong", 0, std::numeric_limits<int64_t>::max());
  r.p50_us = number_or_null(entry, path, "p50_us");
  r.p99_us = number_or_null(entry, path, "p99_us");
  r.max_us = number_or_null(entry, path, "max_us");
  r.straggler = static_cast<int>(integer(entry, path, "straggler_rank", -1, kMaxInt));
  r.straggler_share = number(entry, path, "straggler_share");
  // Optional: records written before --rounds existed have no such field.
  r.busbw_spread = entry.contains("busbw_spread") ? number_or_null(entry, path, "busbw_spread")
                                                  : std::numeric_limits<double>::quiet_NaN();
  check(r, path);
  return r;
}

// The importers' checks (table_helpers.h row_problem): no impossible time, size or bandwidth.
void RecordReader::check(const comm::Row& r, const std::string& path) const {
  const auto problem = row_problem(r);
  if (!problem) return;
  constexpr std::array<const char*, kFieldCount> kKeys = {
      "bytes", "count", "time_us", "algbw_gbps", "busbw_gbps", "p50_us", "p99_us", "max_us",
      "wrong", "busbw_spread"};
  fail(at(path, kKeys[static_cast<size_t>(problem->field)]), problem->what);
}

// plumb.comm/1: the record of one `plumb comm` run, without store fields.
Record RecordReader::from_comm(const json& doc) const {
  Record r;
  r.created = optional_text(doc, "created");
  r.hosts = hosts(doc);
  r.source = "plumb comm " + file();
  r.rows = rows(doc, "");
  check_rounds_setting(doc, file(), "");
  r.validity = validity_of(doc, file());
  r.comm = doc;
  r.comm.erase("results");
  r.comm.erase("validity");
  r.env = doc.contains("env") ? json{{"env", doc["env"]}} : json(nullptr);
  return r;
}

Record RecordReader::from_baseline(const json& doc) const {
  Record r;
  r.id = doc.contains("id") ? integer(doc, "", "id", 0, std::numeric_limits<int64_t>::max()) : 0;
  r.created = optional_text(doc, "created");
  r.label = optional_text(doc, "label");
  r.hosts = hosts(doc);
  r.source = optional_text(doc, "source");
  r.topo = doc.contains("topo") ? doc["topo"] : json(nullptr);
  r.env = doc.contains("env") ? doc["env"] : json(nullptr);
  // A baseline set whose comm part was not taken has "comm": null (its reason in "missing").
  if (!(doc.contains("comm") && doc["comm"].is_null() && doc.contains("missing"))) {
    const json& comm = object(doc, "", "comm");
    r.rows = rows(comm, "comm");
    check_rounds_setting(comm, file(), "comm");
    r.comm = comm;
    r.comm.erase("results");
  }
  r.validity = validity_of(doc, file());
  // A step record (plumb step --save), checked field by field when plumb diff reads it.
  if (doc.contains("step") && !doc["step"].is_null()) r.step = object(doc, "", "step");
  // A recovery record (plumb run --save), likewise checked when plumb diff or show reads it.
  if (doc.contains("recovery") && !doc["recovery"].is_null()) {
    r.recovery = object(doc, "", "recovery");
  }
  // A serving record (plumb serve --store, or a set's serving part), checked when read.
  if (doc.contains("serve") && !doc["serve"].is_null()) r.serve = object(doc, "", "serve");
  // A baseline set's memory part and the parts it could not take, each reason a string.
  if (doc.contains("memory") && !doc["memory"].is_null()) r.memory = object(doc, "", "memory");
  if (doc.contains("missing") && !doc["missing"].is_null()) {
    const json& missing = object(doc, "", "missing");
    for (const auto& [part, reason] : missing.items()) {
      if (!reason.is_string()) fail(at("missing", part.c_str()), "expected a string, got " + shown(reason));
    }
    r.missing = missing;
  }
  return r;
}

}  // namespace

Record record_from_json(const json& doc, const std::string& origin) {
  const std::string schema = schema_of(doc);
  if (schema == "plumb.baseline/1") return RecordReader(origin).from_baseline(doc);
  if (schema == "plumb.comm/1") return RecordReader(origin).from_comm(doc);
  throw Error(fmt::format("{}: schema '{}' is not a baseline; expected plumb.baseline/1 (plumb "
                          "export) or plumb.comm/1 (plumb comm --json)",
                          origin, schema));
}

void check_rounds_setting(const json& comm, const std::string& origin, const std::string& path) {
  if (!comm.is_object() || !comm.contains("settings")) return;
  const JsonFields fields(origin);
  const json& settings = fields.object(comm, path, "settings");
  if (settings.contains("rounds")) {
    fields.integer(settings, JsonFields::at(path, "settings"), "rounds", 1, comm::kMaxRounds);
  }
}

Validity validity_of(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("validity")) return {};
  const JsonFields fields(origin);
  const json& validity = fields.object(doc, "", "validity");
  return validity_from_json(fields.array(validity, "validity", "issues"), origin,
                            "validity.issues");
}

Record read_record_file(const std::string& path) {
  const std::string whole =
      read_whole_file(path, "a plumb.baseline/1 or plumb.comm/1 JSON file");
  const std::string_view body = without_bom(whole);
  return record_from_json(parse_json(body, path), path);
}

}  // namespace plumb::baseline
