#include "report/baseline_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

#include "baseline/record_kind.h"
#include "baseline/step_diff.h"
#include "baseline/validity.h"
#include "common/strings.h"
#include "report/set_parts.h"

namespace plumb::report {
namespace {

// Every string shown here may come from an imported file: escaped for the terminal.

std::string safe_hosts(const std::vector<std::string>& hosts, std::string_view sep) {
  return terminal_safe(join(hosts, sep));
}

std::string safe_value(const nlohmann::json& value) {
  return terminal_safe(value.is_string() ? value.get<std::string>() : value.dump());
}

std::string counted(int64_t n, std::string_view what) {
  return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

// What a record holds, for plumb list: "comm 42 rows", "step 8 ranks × 3 steps" (a record of
// plumb step --save), "recovery 2 failures, down 245.0 s" (plumb run --save: the failures and
// their median downtime), each it holds.
std::string holdings(const baseline::Entry& e) {
  std::vector<std::string> parts;
  // A set that skipped comm holds no comm part: its holdings do not claim "comm 0 rows".
  const bool no_comm = std::find(e.missing.begin(), e.missing.end(), "comm") != e.missing.end();
  if (e.rows > 0 || (!e.step && !e.recovery && !e.serve && !no_comm)) {
    parts.push_back("comm " + counted(e.rows, "row"));
  }
  if (e.step) {
    parts.push_back(fmt::format("step {} × {}", counted(e.step_ranks, "rank"),
                                counted(e.step_steps, "step")));
  }
  if (e.recovery) {
    parts.push_back(fmt::format("recovery {}{}", counted(e.recovery_failures, "failure"),
                                std::isnan(e.recovery_downtime_median)
                                    ? ""
                                    : fmt::format(", down {:.1f} s", e.recovery_downtime_median)));
  }
  if (e.serve) parts.push_back("serve " + counted(e.serve_runs, "run"));
  // What makes the record not valid: "WRONG RESULTS", "INCOMPLETE: sweep ended at 4 MiB of 1 GiB".
  for (const std::string& mark : baseline::summarize_validity(e.validity, e.wrong_rows).marks) {
    parts.push_back(mark);
  }
  return join(parts, " · ");
}

// One line of the list; no trailing blanks when the last columns are empty.
template <typename... Columns>
void print_list_line(std::ostream& out, const Columns&... columns) {
  std::string line = fmt::format("{:>6}  {:<20}  {:<16}  {:<35}  {:<22}  {:<18}  {}", columns...);
  line.erase(line.find_last_not_of(' ') + 1);
  fmt::print(out, "{}\n", line);
}

}  // namespace

void print_baseline_list(const std::vector<baseline::Entry>& entries, std::ostream& out) {
  print_list_line(out, "id", "created", "label", "parts", "holds", "source", "hosts");
  for (const baseline::Entry& e : entries) {
    print_list_line(out, e.id, terminal_safe(e.created),
                    e.label.empty() ? "-" : terminal_safe(e.label), parts_text(e), holdings(e),
                    terminal_safe(e.source), safe_hosts(e.hosts, ","));
  }
}

std::string job_summary(const nlohmann::json& part) {
  if (!part.is_object() || !part.contains("job") || !part["job"].is_object()) return "";
  const nlohmann::json& j = part["job"];
  const auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? terminal_safe(j[key].get<std::string>()) : "";
  };
  const auto count = [&](const char* key) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
  };
  const std::string nodes = text("node_list").empty() ? "?" : text("node_list");
  std::string line =
      fmt::format("Slurm job {} on {} ({} node(s))", text("job_id"), nodes, count("nodes"));
  if (!text("step").empty()) {
    line += fmt::format(", step {}: {} task(s)", text("step"), count("step_tasks"));
  }
  if (!text("mpi").empty()) line += fmt::format(", srun --mpi={}", text("mpi"));
  return line;
}

void print_validity(const baseline::Record& r, std::ostream& out) {
  const baseline::ValiditySummary v = baseline::summarize_validity(r.validity, r.rows);
  if (v.valid()) return;
  fmt::print(out, "{}\n", join(v.marks, " · "));
  for (const std::string& line : v.lines) fmt::print(out, "  {}\n", terminal_safe(line));
}

void print_record_header(const baseline::Record& r, std::ostream& out) {
  fmt::print(out, "# baseline {} · {} · {}{}\n", r.id, terminal_safe(r.created),
             terminal_safe(r.source), r.label.empty() ? "" : " · " + terminal_safe(r.label));
  print_validity(r, out);
  fmt::print(out, "# hosts: {}\n", safe_hosts(r.hosts, ", "));
  if (const std::string job = job_summary(r.comm); !job.empty()) fmt::print(out, "# {}\n", job);
}

void print_versions(const baseline::Record& r, std::ostream& out) {
  if (!r.env.is_object() || !r.env.contains("versions") || !r.env["versions"].is_object()) return;
  for (const auto& [name, value] : r.env["versions"].items()) {
    if (!value.is_null()) fmt::print(out, "# {:<14} {}\n", terminal_safe(name), safe_value(value));
  }
}

void print_comm_summary(const baseline::Record& r, std::ostream& out) {
  for (const comm::Summary& s : comm::summarize(r.rows)) {
    if (s.sizes == 0) {
      fmt::print(out, "{} @ {}: no size ≥ 1 MiB\n", terminal_safe(s.collective),
                 terminal_safe(s.layer));
      continue;
    }
    fmt::print(out,
               "{} @ {}: avg busbw {:.2f} GB/s over {} size(s) ≥ 1 MiB (slowest group {}: "
               "{:.2f} GB/s)\n",
               terminal_safe(s.collective), terminal_safe(s.layer), s.avg_busbw_gbps, s.sizes,
               terminal_safe(s.slowest_group), s.slowest_busbw_gbps);
  }
}

void print_baseline_summary(const baseline::Record& r, std::ostream& out) {
  print_record_header(r, out);
  print_versions(r, out);
  print_comm_summary(r, out);
  fmt::print(out, "# {} result row(s); plumb export {} for all of them\n", r.rows.size(), r.id);
}

nlohmann::json baseline_json(const baseline::Record& r) {
  // A step record has no comm part: an empty one, {"results": []}, which claims no measurement
  // and keeps the document one that record_from_json reads back.
  nlohmann::json comm = r.comm.is_object() ? r.comm : nlohmann::json::object();
  comm["results"] = r.rows;
  // The summary from the rows, never a stored copy (a combined round's rows have their own).
  if (!r.rows.empty()) comm["summary"] = comm::summary_json(comm::summarize(r.rows));
  nlohmann::json doc = {{"schema", kBaselineSchema}, {"id", r.id},     {"created", r.created},
                        {"label", r.label},          {"hosts", r.hosts}, {"source", r.source},
                        {"topo", r.topo},            {"env", r.env},     {"comm", comm}};
  // What makes the record not valid, for scripts (marks, the rows with wrong elements) and for
  // record_from_json (issues).
  const baseline::ValiditySummary validity = baseline::summarize_validity(r.validity, r.rows);
  doc["validity"] = {{"valid", validity.valid()},
                     {"marks", validity.marks},
                     {"wrong_rows", std::count_if(r.rows.begin(), r.rows.end(),
                                                  [](const comm::Row& row) { return row.wrong > 0; })},
                     {"issues", baseline::validity_json(r.validity)}};
  if (baseline::holds_step(r)) doc["step"] = r.step;  // plumb.step/1, read back by plumb diff
  if (baseline::holds_recovery(r)) doc["recovery"] = r.recovery;  // plumb.recovery/1, likewise
  if (baseline::holds_serve(r)) doc["serve"] = r.serve;           // plumb.serve/1, likewise
  if (baseline::holds_set(r)) {
    // A baseline set: all seven parts, a part not taken null beside its reason in "missing".
    if (r.rows.empty() && r.comm.is_null()) doc["comm"] = nullptr;
    doc["step"] = r.step;
    doc["memory"] = r.memory;
    doc["recovery"] = r.recovery;
    doc["serve"] = r.serve;
    doc["missing"] = r.missing.is_object() ? r.missing : nlohmann::json::object();
  }
  return doc;
}

}  // namespace plumb::report
