#include "report/html_context.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string_view>
#include <vector>

#include "common/strings.h"
#include "report/html_escape.h"
#include "report/html_out.h"
#include "report/html_topology.h"

namespace plumb::report {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 4;
constexpr size_t kMaxListItems = 64;
constexpr std::string_view kAbsent = "(absent)";

void append_value(const json& v, fmt::memory_buffer& out, int depth);

void append_scalar(const json& v, fmt::memory_buffer& out) {
  if (v.is_null()) return put(out, "—");
  if (v.is_string()) return append_escaped(out, v.get_ref<const std::string&>());
  if (v.is_number_float()) {
    fmt::format_to(std::back_inserter(out), "{:.6g}", v.get<double>());
    return;
  }
  append_escaped(out, v.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool all_objects(const json& array) {
  for (const json& item : array) {
    if (!item.is_object()) return false;
  }
  return !array.empty();
}

void append_more(size_t shown, size_t total, fmt::memory_buffer& out) {
  if (total > shown) {
    fmt::format_to(std::back_inserter(out),
                   "<p class=\"note\">… and {} more (plumb export has them all)</p>",
                   total - shown);
  }
}

// An array of objects: one row per item, one column per key (in first-seen order).
void append_object_rows(const json& array, fmt::memory_buffer& out, int depth) {
  std::vector<std::string> columns;
  for (const json& item : array) {
    for (const auto& [key, value] : item.items()) {
      if (std::find(columns.begin(), columns.end(), key) == columns.end()) columns.push_back(key);
    }
  }
  put(out, "<table class=\"rows\"><tr>");
  for (const std::string& c : columns) {
    put(out, "<th>");
    append_escaped(out, c);
    put(out, "</th>");
  }
  put(out, "</tr>");
  const size_t shown = std::min(array.size(), kMaxTableRows);
  for (size_t i = 0; i < shown; ++i) {
    put(out, "<tr>");
    for (const std::string& c : columns) {
      put(out, "<td>");
      if (array[i].contains(c)) append_value(array[i][c], out, depth + 1);
      put(out, "</td>");
    }
    put(out, "</tr>");
  }
  put(out, "</table>");
  append_more(shown, array.size(), out);
}

void append_list(const json& array, fmt::memory_buffer& out, int depth) {
  const size_t shown = std::min(array.size(), kMaxListItems);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) put(out, ", ");
    append_value(array[i], out, depth + 1);
  }
  if (array.size() > shown) {
    fmt::format_to(std::back_inserter(out), " … and {} more", array.size() - shown);
  }
}

void append_object(const json& object, fmt::memory_buffer& out, int depth, std::string_view skip) {
  put(out, "<table class=\"kv\">");
  for (const auto& [key, value] : object.items()) {
    if (depth == 0 && (key == "schema" || key == skip)) continue;
    put(out, "<tr><th>");
    append_escaped(out, key);
    put(out, "</th><td>");
    append_value(value, out, depth + 1);
    put(out, "</td></tr>");
  }
  put(out, "</table>");
}

void append_value(const json& v, fmt::memory_buffer& out, int depth) {
  if (depth > kMaxDepth && (v.is_object() || v.is_array())) {
    return append_escaped(out, v.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  if (v.is_object()) return v.empty() ? put(out, "—") : append_object(v, out, depth, "");
  if (!v.is_array()) return append_scalar(v, out);
  if (v.empty()) return put(out, "—");
  if (all_objects(v)) return append_object_rows(v, out, depth);
  append_list(v, out, depth);
}

void append_heading(std::string_view text, const baseline::Record& r, char letter,
                    fmt::memory_buffer& out) {
  fmt::format_to(std::back_inserter(out), "<h3>{} — ", text);
  append_escaped(out, baseline_name(letter, r));
  put(out, "</h3>");
}

void append_warnings(const json& topo, fmt::memory_buffer& out) {
  if (!topo.contains("warnings") || !topo["warnings"].is_array() || topo["warnings"].empty()) {
    return;
  }
  put(out, "<ul class=\"warnings\">");
  const json& warnings = topo["warnings"];
  for (size_t i = 0; i < std::min(warnings.size(), kMaxListItems); ++i) {
    const json& w = warnings[i];
    put(out, "<li>");
    // plumb.topo/1 warnings are {"message", ...} (topo/topo_json): the sentence is what a reader
    // needs, not the table of its fields.
    if (w.is_object() && w.contains("message") && w["message"].is_string()) {
      append_escaped(out, w["message"].get_ref<const std::string&>());
    } else {
      append_value(w, out, 1);
    }
    put(out, "</li>");
  }
  if (warnings.size() > kMaxListItems) {
    fmt::format_to(std::back_inserter(out),
                   "<li>… and {} more (the ranks table marks each rank)</li>",
                   warnings.size() - kMaxListItems);
  }
  put(out, "</ul>");
}

void append_topology(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  append_heading("Topology", r, letter, out);
  if (!r.topo.is_object()) {
    put(out, "<p class=\"note\">No topology in this baseline (plumb topo was not run).</p>");
    return;
  }
  append_warnings(r.topo, out);
  if (!append_topology_tables(r.topo, out)) append_json_table(r.topo, out, "warnings");
}

// "world: 1 group of 8 ranks" or "rail: skipped (every group has a single rank)".
std::string layer_line(const json& layer) {
  const std::string name = layer.value("name", "?");
  const std::string skipped = layer.contains("skipped") && layer["skipped"].is_string()
                                  ? layer["skipped"].get<std::string>()
                                  : "";
  if (!skipped.empty()) return fmt::format("{}: skipped ({})", name, skipped);
  const json groups = layer.value("groups", json::array());
  const size_t ranks =
      groups.empty() || !groups[0].is_object() ? 0 : groups[0].value("ranks", json::array()).size();
  return fmt::format("{}: {} group{} of {} ranks", name, groups.size(),
                     groups.size() == 1 ? "" : "s", ranks);
}

// The run's settings: plumb.comm/1 without its rows and the parts other sections show (the
// variables are in Environment, the summary in Summary) or that grow with the rank count.
json run_document(const baseline::Record& r) {
  json doc = json::object();
  doc["source"] = r.source;
  doc["hosts"] = r.hosts;
  doc["result rows"] = r.rows.size();
  if (!r.comm.is_object()) return doc;
  for (const auto& [key, value] : r.comm.items()) {
    if (key == "layers" && value.is_array()) {
      for (const json& layer : value) {
        doc["layers"].push_back(layer.is_object() ? json(layer_line(layer)) : layer);
      }
    } else if (key != "results" && key != "hosts" && key != "placement" && key != "summary" &&
               key != "env") {
      doc[key] = value;
    }
  }
  return doc;
}

void append_run(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  append_heading("Run", r, letter, out);
  append_json_table(run_document(r), out);
}

// name -> (value, source) of one plumb.env/1 object ("versions" or "env").
struct Cell {
  std::string value;
  std::string source;
};
using EnvColumn = std::map<std::string, Cell>;

EnvColumn env_column(const json& env, const char* key) {
  EnvColumn out;
  if (!env.is_object() || !env.contains(key) || !env[key].is_object()) return out;
  const json* sources =
      env.contains("sources") && env["sources"].is_object() ? &env["sources"] : nullptr;
  for (const auto& [name, value] : env[key].items()) {
    Cell& cell = out[name];
    cell.value = value.is_null()     ? "not found"
                 : value.is_string() ? value.get<std::string>()
                                     : value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (sources != nullptr && sources->contains(name) && (*sources)[name].is_string()) {
      cell.source = (*sources)[name].get<std::string>();
    }
  }
  return out;
}

void append_cell(const EnvColumn& column, const std::string& name, fmt::memory_buffer& out) {
  const auto it = column.find(name);
  if (it == column.end()) return put(out, "<td class=\"absent\">(absent)</td>");
  put(out, "<td title=\"");
  append_escaped(out, it->second.source);
  put(out, "\">");
  append_escaped(out, it->second.value);
  put(out, "</td>");
}

std::string value_of(const EnvColumn& column, const std::string& name) {
  const auto it = column.find(name);
  return it == column.end() ? std::string(kAbsent) : it->second.value;
}

// name | A | B, the rows whose values differ marked; one value column with one baseline.
void append_compare_table(std::string_view title, const EnvColumn& a, const EnvColumn* b,
                          fmt::memory_buffer& out) {
  std::map<std::string, int> names;
  for (const auto& [name, cell] : a) names[name];
  if (b != nullptr) {
    for (const auto& [name, cell] : *b) names[name];
  }
  fmt::format_to(std::back_inserter(out), "<h3>{}</h3>", title);
  if (names.empty()) return put(out, "<p class=\"note\">None recorded.</p>");
  put(out, b != nullptr ? "<table class=\"rows\"><tr><th>name</th><th>A</th><th>B</th></tr>"
                        : "<table class=\"rows\"><tr><th>name</th><th>value</th></tr>");
  for (const auto& [name, unused] : names) {
    const bool differs = b != nullptr && value_of(a, name) != value_of(*b, name);
    put(out, differs ? "<tr class=\"differs\"><th>" : "<tr><th>");
    append_escaped(out, name);
    put(out, "</th>");
    append_cell(a, name, out);
    if (b != nullptr) append_cell(*b, name, out);
    put(out, "</tr>");
  }
  put(out, "</table>");
}

void append_env_origin(char letter, const baseline::Record& r, fmt::memory_buffer& out) {
  put(out, "<p class=\"note\">");
  append_escaped(out, baseline_name(letter, r));
  if (!r.env.is_object()) return put(out, ": no environment recorded (plumb env was not run).</p>");
  for (const char* key : {"host", "created"}) {
    if (r.env.contains(key) && r.env[key].is_string()) {
      fmt::format_to(std::back_inserter(out), " · {} ", key);
      append_escaped(out, r.env[key].get_ref<const std::string&>());
    }
  }
  put(out, "</p>");
}

void append_environment(const baseline::Record& a, const baseline::Record* b,
                        fmt::memory_buffer& out) {
  put(out, "<section id=\"environment\"><h2>Environment</h2>");
  append_environment_tables(a, b, out);
  put(out, "</section>");
}

}  // namespace

void append_environment_tables(const baseline::Record& a, const baseline::Record* b,
                               fmt::memory_buffer& out) {
  append_env_origin('A', a, out);
  if (b != nullptr) append_env_origin('B', *b, out);
  const EnvColumn va = env_column(a.env, "versions");
  const EnvColumn ea = env_column(a.env, "env");
  if (b == nullptr) {
    append_compare_table("Versions", va, nullptr, out);
    append_compare_table("Variables", ea, nullptr, out);
  } else {
    const EnvColumn vb = env_column(b->env, "versions");
    const EnvColumn eb = env_column(b->env, "env");
    append_compare_table("Versions", va, &vb, out);
    append_compare_table("Variables", ea, &eb, out);
  }
}

void append_topology_of(const baseline::Record& r, char letter, fmt::memory_buffer& out) {
  append_topology(r, letter, out);
}

std::string baseline_name(char letter, const baseline::Record& r) {
  std::vector<std::string> parts;
  if (r.id > 0) parts.push_back(fmt::format("id {}", r.id));
  if (!r.label.empty()) parts.push_back(r.label);
  if (!r.created.empty()) parts.push_back(r.created);
  if (parts.empty()) parts.push_back(r.source);
  return fmt::format("{}: {}", letter, join(parts, " · "));
}

void append_json_table(const json& doc, fmt::memory_buffer& out, const std::string& skip_key) {
  if (doc.is_object()) return append_object(doc, out, 0, skip_key);
  append_value(doc, out, 0);
}

void append_context_sections(const baseline::Record& a, const baseline::Record* b,
                             fmt::memory_buffer& out) {
  put(out, "<section id=\"run\"><h2>Run</h2>");
  append_run(a, 'A', out);
  if (b != nullptr) append_run(*b, 'B', out);
  put(out, "</section><section id=\"topology\"><h2>Topology</h2>");
  append_topology(a, 'A', out);
  if (b != nullptr) append_topology(*b, 'B', out);
  put(out, "</section>");
  append_environment(a, b, out);
}

}  // namespace plumb::report
