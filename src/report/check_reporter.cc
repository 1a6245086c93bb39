#include "report/check_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/console.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace plumb::report {
namespace {

using check::CheckResult;
using check::NodeReport;
using check::Status;

// The name column of the console; a longer name pushes its line out, never cuts it.
constexpr size_t kNameWidth = 20;
constexpr const char* kIndent = "                                ";  // under the value column

std::string upper(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// "pcie.link: mlx5_0 at x8 (expected x16)"
std::string finding(const CheckResult& c) {
  std::string text = c.name + ": " + (c.value.empty() ? c.detail : c.value);
  if (!c.expected.empty()) text += fmt::format(" (expected {})", c.expected);
  return text;
}

// "  critical  pcie.link            mlx5_0 at x8  [expected x16]" and, when not ok, the line to
// check first under it.
void print_row(const CheckResult& c, std::ostream& out) {
  const std::string expected = c.expected.empty() ? "" : "  [expected " + c.expected + "]";
  fmt::print(out, "  {:<9} {:<{}} {}{}\n", check::status_name(c.status), c.name, kNameWidth,
             c.value.empty() ? "-" : c.value, expected);
  if (c.status != Status::kOk && !c.detail.empty()) {
    fmt::print(out, "{}check first: {}\n", kIndent, c.detail);
  }
}

size_t ran(const NodeReport& r) {
  return static_cast<size_t>(std::count_if(r.checks.begin(), r.checks.end(),
                                           [](const CheckResult& c) { return !c.skipped; }));
}

nlohmann::json result_json(const CheckResult& c) {
  return {{"name", c.name},         {"status", check::status_name(c.status)},
          {"value", c.value},       {"expected", c.expected},
          {"detail", c.detail},     {"seconds", c.seconds}};
}

std::string category(const std::string& name) { return name.substr(0, name.find('.')); }

std::string label_value(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\\' || ch == '"') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}

}  // namespace

std::string check_summary_line(const NodeReport& report) {
  const std::vector<const CheckResult*> worst = report.worst();
  std::vector<std::string> findings;
  for (const CheckResult* c : worst) findings.push_back(finding(*c));
  const std::string what = findings.empty()
                               ? fmt::format("{} check{} passed", ran(report), ran(report) == 1 ? "" : "s")
                               : join(findings, "; ");
  return fmt::format("CHECK {} - {}: {}", upper(check::status_name(report.status())), report.host, what);
}

void print_check_console(const NodeReport& report, std::ostream& out) {
  fmt::print(out, "plumb check {}: {}, {}{}: {} checks in {:.1f} s\n", report.command, report.host,
             report.check_file, report.sku.empty() ? "" : " (" + report.sku + ")", ran(report),
             report.seconds);
  // Skipped checks grouped by their reason, in table order: "accel.count, accel.ecc (no ...)".
  std::vector<std::pair<std::string, std::vector<std::string>>> skipped;
  for (const CheckResult& c : report.checks) {
    if (!c.skipped) {
      print_row(c, out);
      continue;
    }
    auto same = std::find_if(skipped.begin(), skipped.end(), [&](const auto& g) { return g.first == c.detail; });
    if (same == skipped.end()) same = skipped.insert(skipped.end(), {c.detail, {}});
    same->second.push_back(c.name);
  }
  std::vector<std::string> groups;
  for (const auto& [reason, names] : skipped) groups.push_back(fmt::format("{} ({})", join(names, ", "), reason));
  if (!groups.empty()) fmt::print(out, "not applicable here: {}\n", join(groups, "; "));
  fmt::print(out, "{}\n", check_summary_line(report));
}

nlohmann::json check_json(const NodeReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  nlohmann::json skipped = nlohmann::json::array();
  for (const CheckResult& c : report.checks) {
    if (c.skipped) {
      skipped.push_back({{"name", c.name}, {"reason", c.detail}});
    } else {
      checks.push_back(result_json(c));
    }
  }
  return {{"schema", check::kCheckSchema}, {"host", report.host},
          {"created", report.created},     {"root", report.root},
          {"check_file", report.check_file}, {"sku", report.sku},
          {"seconds", report.seconds},     {"status", check::status_name(report.status())},
          {"checks", checks},              {"skipped", skipped}};
}

check::NodeReport check_from_json(const nlohmann::json& doc, std::string_view source) {
  const JsonFields f(source);
  if (!doc.is_object() || f.text(doc, "", "schema") != check::kCheckSchema) {
    f.fail("schema", fmt::format("expected \"{}\"", check::kCheckSchema));
  }
  NodeReport r;
  r.host = f.text(doc, "", "host");
  r.created = f.text(doc, "", "created");
  r.root = f.text(doc, "", "root");
  r.check_file = f.text(doc, "", "check_file");
  r.sku = f.text(doc, "", "sku");
  r.seconds = f.number(doc, "", "seconds");
  const nlohmann::json& checks = f.array(doc, "", "checks");
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::string path = fmt::format("checks[{}]", i);
    CheckResult c;
    c.name = f.text(checks[i], path, "name");
    const std::string status = f.text(checks[i], path, "status");
    const std::optional<Status> s = check::parse_status(status);
    if (!s) f.fail(JsonFields::at(path, "status"), "expected ok, warning, critical or unknown");
    c.status = *s;
    c.value = f.text(checks[i], path, "value");
    c.expected = f.text(checks[i], path, "expected");
    c.detail = f.text(checks[i], path, "detail");
    c.seconds = f.number(checks[i], path, "seconds");
    r.checks.push_back(std::move(c));
  }
  const nlohmann::json& skipped = f.array(doc, "", "skipped");
  for (size_t i = 0; i < skipped.size(); ++i) {
    const std::string path = fmt::format("skipped[{}]", i);
    CheckResult c = check::skipped(f.text(skipped[i], path, "reason"));
    c.name = f.text(skipped[i], path, "name");
    r.checks.push_back(std::move(c));
  }
  return r;
}

void write_check_textfile(const NodeReport& report, std::ostream& out) {
  out << "# HELP plumb_check_status A plumb node check's status: 0 ok, 1 warning, 2 critical, "
         "3 unknown.\n# TYPE plumb_check_status gauge\n";
  for (const CheckResult& c : report.checks) {
    if (c.skipped) continue;
    fmt::print(out, "plumb_check_status{{check=\"{}\",category=\"{}\"}} {}\n", label_value(c.name),
               label_value(category(c.name)), check::exit_code(c.status));
  }
  fmt::print(out,
             "# HELP plumb_check_node_status The node's worst check status (0 ok, 1 warning, 2 "
             "critical, 3 unknown).\n# TYPE plumb_check_node_status gauge\n"
             "plumb_check_node_status {}\n",
             check::exit_code(report.status()));
  fmt::print(out,
             "# HELP plumb_check_duration_seconds How long the node check pass took.\n"
             "# TYPE plumb_check_duration_seconds gauge\nplumb_check_duration_seconds {:.3f}\n",
             report.seconds);
}

void print_check_list(const std::vector<baseline::CheckEntry>& entries, std::ostream& out) {
  size_t host_width = 4;
  for (const baseline::CheckEntry& e : entries) host_width = std::max(host_width, e.host.size());
  fmt::print(out, "{:<6} {:<20} {:<{}} {:<8} {:<9} {}\n", "CHECK", "CREATED", "HOST", host_width,
             "KIND", "STATUS", "FAILING");
  for (const baseline::CheckEntry& e : entries) {
    fmt::print(out, "{:<6} {:<20} {:<{}} {:<8} {:<9} {}\n", e.id, e.created, terminal_safe(e.host, false),
               host_width, e.kind, e.status, e.failing.empty() ? "-" : join(e.failing, ", "));
  }
}

}  // namespace plumb::report
