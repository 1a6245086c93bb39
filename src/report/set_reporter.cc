#include "report/set_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <string>
#include <string_view>

#include "baseline/step_diff.h"
#include "common/strings.h"
#include "report/baseline_reporter.h"
#include "report/memory_baseline_reporter.h"
#include "report/recovery_reporter.h"
#include "report/serve_reporter.h"
#include "report/set_parts.h"
#include "report/step_diff_reporter.h"
#include "supervise/recovery_json.h"

namespace plumb::report {
namespace {

using nlohmann::json;

std::string name_of(const baseline::Record& r) { return fmt::format("baseline {}", r.id); }

// The array at `key`, or an empty one.
const json& array_of(const json& doc, const char* key) {
  static const json kNone = json::array();
  const auto it = doc.is_object() ? doc.find(key) : doc.end();
  return it != doc.end() && it->is_array() ? *it : kNone;
}

// A count of a JSON array, or "?" when the field is not one.
std::string count_of(const json& doc, const char* key) {
  const auto it = doc.is_object() ? doc.find(key) : doc.end();
  return it != doc.end() && it->is_array() ? std::to_string(it->size()) : std::string("?");
}

std::string number_of(const json& doc, const char* key) {
  const auto it = doc.is_object() ? doc.find(key) : doc.end();
  return it != doc.end() && it->is_number_integer() ? std::to_string(it->get<int64_t>()) : "?";
}

std::string text_of(const json& doc, const char* key) {
  const auto it = doc.is_object() ? doc.find(key) : doc.end();
  return it != doc.end() && it->is_string() ? terminal_safe(it->get<std::string>()) : "?";
}

size_t accelerators(const json& host) {
  const auto pci = host.is_object() ? host.find("pci") : host.end();
  if (pci == host.end() || !pci->is_array()) return 0;
  size_t n = 0;
  for (const json& d : *pci) {
    if (d.is_object() && d.value("kind", "") == "accelerator") ++n;
  }
  return n;
}

void print_host(const json& host, std::ostream& out) {
  fmt::print(out, "  {}: {} package(s), {} NUMA node(s), {} core(s) / {} PU(s), {} accelerator(s)\n",
             text_of(host, "host"), number_of(host, "packages"), count_of(host, "numa_nodes"),
             number_of(host, "cores"), number_of(host, "pus"), accelerators(host));
}

void print_warning(const json& w, std::ostream& out) {
  fmt::print(out, "  warning: {}\n", text_of(w, "message"));  // it names the rank and host
}

void show_topo(const baseline::Record& r, std::ostream& out) { print_topology_summary(r.topo, out); }
void show_env(const baseline::Record& r, std::ostream& out) { print_versions(r, out); }

void show_comm(const baseline::Record& r, std::ostream& out) {
  print_comm_summary(r, out);
  fmt::print(out, "# {} result row(s)\n", r.rows.size());
}

void show_step(const baseline::Record& r, std::ostream& out) {
  print_step_summary(baseline::summarize_step(r.step, name_of(r)), out);
}

void show_memory(const baseline::Record& r, std::ostream& out) {
  print_memory_baseline(memory_baseline_from_json(r.memory, name_of(r)), out);
}

void show_recovery(const baseline::Record& r, std::ostream& out) {
  print_recovery_summary(supervise::recovery_from_json(r.recovery, name_of(r)), out);
}

void show_serve(const baseline::Record& r, std::ostream& out) {
  print_serve_console(out, serve_from_json(r.serve, name_of(r)));
}

// How each part is printed, by SetPart::key (report/set_parts.h).
struct PartPrinter {
  const char* key;
  void (*print)(const baseline::Record&, std::ostream&);
};
constexpr PartPrinter kPrinters[] = {
    {"topo", show_topo},   {"env", show_env},       {"comm", show_comm},
    {"step", show_step},   {"memory", show_memory}, {"recovery", show_recovery},
    {"serve", show_serve},
};

void print_part(const baseline::Record& r, const SetPart& part, std::ostream& out) {
  fmt::print(out, "## {}\n", part.title);
  if (!part.held(r)) {
    fmt::print(out, "{}: missing — {}\n", part.title, terminal_safe(missing_reason(r, part)));
    return;
  }
  for (const PartPrinter& p : kPrinters) {
    if (std::string_view(p.key) == part.key) p.print(r, out);
  }
}

}  // namespace

void print_topology_summary(const json& topo, std::ostream& out) {
  fmt::print(out, "{} host(s), {} rank(s), {} binding warning(s)\n", count_of(topo, "hosts"),
             count_of(topo, "ranks"), count_of(topo, "warnings"));
  for (const json& host : array_of(topo, "hosts")) print_host(host, out);
  for (const json& warning : array_of(topo, "warnings")) print_warning(warning, out);
}

void print_set(const baseline::Record& r, std::ostream& out) {
  print_record_header(r, out);
  std::vector<std::string> held;
  for (const SetPart& p : set_parts()) held.push_back((p.held(r) ? "" : "-") + std::string(p.key));
  fmt::print(out, "# a baseline set: {}\n", join(held, " "));
  for (const SetPart& p : set_parts()) print_part(r, p, out);
  fmt::print(out, "# plumb export {} for the whole set; plumb report {} for its page\n", r.id, r.id);
}

}  // namespace plumb::report
