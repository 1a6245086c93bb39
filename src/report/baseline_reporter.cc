#include "report/baseline_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/strings.h"

namespace plumb::report {

void print_baseline_list(const std::vector<baseline::Entry>& entries, std::ostream& out) {
  fmt::print(out, "{:>6}  {:<20}  {:<16}  {:>6}  {:<24}  {}\n", "id", "created", "label", "rows",
             "source", "hosts");
  for (const baseline::Entry& e : entries) {
    fmt::print(out, "{:>6}  {:<20}  {:<16}  {:>6}  {:<24}  {}\n", e.id, e.created,
               e.label.empty() ? "-" : e.label, e.rows, e.source, join(e.hosts, ","));
  }
}

void print_baseline_summary(const baseline::Record& r, std::ostream& out) {
  fmt::print(out, "# baseline {} · {} · {}{}\n", r.id, r.created, r.source,
             r.label.empty() ? "" : " · " + r.label);
  fmt::print(out, "# hosts: {}\n", join(r.hosts, ", "));
  if (r.env.is_object() && r.env.contains("versions")) {
    for (const auto& [name, value] : r.env["versions"].items()) {
      if (!value.is_null()) fmt::print(out, "# {:<14} {}\n", name, value.get<std::string>());
    }
  }
  comm::Result result;
  result.rows = r.rows;
  for (const comm::Summary& s : comm::summarize(result)) {
    if (s.sizes == 0) {
      fmt::print(out, "{} @ {}: no size ≥ 1 MiB\n", s.collective, s.layer);
      continue;
    }
    fmt::print(out, "{} @ {}: avg busbw {:.2f} GB/s over {} size(s) ≥ 1 MiB (slowest group {}: "
                    "{:.2f} GB/s)\n",
               s.collective, s.layer, s.avg_busbw_gbps, s.sizes, s.slowest_group,
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
