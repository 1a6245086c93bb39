#include "report/baseline_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/strings.h"

namespace plumb::report {
namespace {

// Every string shown here may come from an imported file: escaped for the terminal.
std::string safe(std::string_view text) { return terminal_safe(text); }

std::string safe_hosts(const std::vector<std::string>& hosts, std::string_view sep) {
  return safe(join(hosts, sep));
}

std::string safe_value(const nlohmann::json& value) {
  return safe(value.is_string() ? value.get<std::string>() : value.dump());
}

}  // namespace

void print_baseline_list(const std::vector<baseline::Entry>& entries, std::ostream& out) {
  fmt::print(out, "{:>6}  {:<20}  {:<16}  {:>6}  {:<24}  {}\n", "id", "created", "label", "rows",
             "source", "hosts");
  for (const baseline::Entry& e : entries) {
    fmt::print(out, "{:>6}  {:<20}  {:<16}  {:>6}  {:<24}  {}\n", e.id, safe(e.created),
               e.label.empty() ? "-" : safe(e.label), e.rows, safe(e.source),
               safe_hosts(e.hosts, ","));
  }
}

void print_baseline_summary(const baseline::Record& r, std::ostream& out) {
  fmt::print(out, "# baseline {} · {} · {}{}\n", r.id, safe(r.created), safe(r.source),
             r.label.empty() ? "" : " · " + safe(r.label));
  fmt::print(out, "# hosts: {}\n", safe_hosts(r.hosts, ", "));
  if (r.env.is_object() && r.env.contains("versions") && r.env["versions"].is_object()) {
    for (const auto& [name, value] : r.env["versions"].items()) {
      if (!value.is_null()) fmt::print(out, "# {:<14} {}\n", safe(name), safe_value(value));
    }
  }
  comm::Result result;
  result.rows = r.rows;
  for (const comm::Summary& s : comm::summarize(result)) {
    if (s.sizes == 0) {
      fmt::print(out, "{} @ {}: no size ≥ 1 MiB\n", safe(s.collective), safe(s.layer));
      continue;
    }
    fmt::print(out, "{} @ {}: avg busbw {:.2f} GB/s over {} size(s) ≥ 1 MiB (slowest group {}: "
                    "{:.2f} GB/s)\n",
               safe(s.collective), safe(s.layer), s.avg_busbw_gbps, s.sizes, safe(s.slowest_group),
               s.slowest_busbw_gbps);
  }
  fmt::print(out, "# {} result row(s); plumb export {} for all of them\n", r.rows.size(), r.id);
}

nlohmann::json baseline_json(const baseline::Record& r) {
  nlohmann::json comm = r.comm.is_object() ? r.comm : nlohmann::json::object();
  comm["results"] = r.rows;
  return {{"schema", kBaselineSchema}, {"id", r.id},     {"created", r.created},
          {"label", r.label},          {"hosts", r.hosts}, {"source", r.source},
          {"topo", r.topo},            {"env", r.env},     {"comm", comm}};
}

}  // namespace plumb::report
