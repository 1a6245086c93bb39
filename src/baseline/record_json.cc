#include "baseline/record_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

std::string schema_of(const json& doc) {
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string()) return "";
  return doc["schema"].get<std::string>();
}

std::vector<comm::Row> rows_of(const json& results, const std::string& origin) {
  if (!results.is_array()) throw Error(fmt::format("{}: results: expected an array", origin));
  std::vector<comm::Row> rows;
  rows.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    try {
      rows.push_back(results[i].get<comm::Row>());
    } catch (const json::exception& e) {
      throw Error(fmt::format("{}: results[{}]: {}", origin, i, e.what()));
    }
  }
  return rows;
}

// plumb.comm/1: the record of one `plumb comm` run, without store fields.
Record from_comm(const json& doc, const std::string& origin) {
  Record r;
  r.created = doc.value("created", "");
  r.hosts = doc.value("hosts", std::vector<std::string>{});
  r.source = "plumb comm " + origin;
  r.comm = doc;
  r.comm.erase("results");
  r.env = doc.contains("env") ? json{{"env", doc["env"]}} : json(nullptr);
  r.rows = rows_of(doc.contains("results") ? doc["results"] : json(), origin);
  return r;
}

Record from_baseline(const json& doc, const std::string& origin) {
  Record r;
  r.id = doc.value("id", int64_t{0});
  r.created = doc.value("created", "");
  r.label = doc.value("label", "");
  r.hosts = doc.value("hosts", std::vector<std::string>{});
  r.source = doc.value("source", "");
  r.topo = doc.value("topo", json(nullptr));
  r.env = doc.value("env", json(nullptr));
  json comm = doc.value("comm", json::object());
  r.rows = rows_of(comm.contains("results") ? comm["results"] : json(), origin);
  comm.erase("results");
  r.comm = comm;
  return r;
}

}  // namespace

Record record_from_json(const json& doc, const std::string& origin) {
  const std::string schema = schema_of(doc);
  try {
    if (schema == "plumb.baseline/1") return from_baseline(doc, origin);
    if (schema == "plumb.comm/1") return from_comm(doc, origin);
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: {}", origin, e.what()));
  }
  throw Error(fmt::format("{}: schema '{}' is not a baseline; expected plumb.baseline/1 (plumb "
                          "export) or plumb.comm/1 (plumb comm --json)",
                          origin, schema));
}

Record read_record_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) throw Error(fmt::format("{}: not valid JSON", path));
  return record_from_json(doc, path);
}

}  // namespace plumb::baseline
