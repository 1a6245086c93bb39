// plumb check node: one table of checks (node_checks.cc), each a small strategy that probes the
// node through a NodeContext, judges what it found against its section of the check file, and
// says what to look at first. docs/check.md lists every check, its source and its default.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "check/node_context.h"
#include "check/status.h"
#include "common/number_range.h"

namespace plumb::check {

// One check's verdict: plumb.check/1's checks[] entry.
struct CheckResult {
  std::string name;      // the check's table name ("pcie.link"); filled by the runner
  Status status = Status::kUnknown;
  std::string value;     // what was found: "mlx5_0 (0000:3b:00.0) at x8, 16.0 GT/s"
  std::string expected;  // what the check file (or the default) asks for: "x16, 16.0 GT/s"
  std::string detail;    // critical/warning/unknown: the one line to check first; ok: may be empty
  bool skipped = false;  // does not apply here (no NVIDIA device, no RoCE NIC): detail says why
  double seconds = 0;    // how long the check took; filled by the runner
};

// Shorthands for a check's return.
CheckResult ok(std::string value, std::string expected = {}, std::string detail = {});
CheckResult warning(std::string value, std::string expected, std::string detail);
CheckResult critical(std::string value, std::string expected, std::string detail);
CheckResult unknown(std::string detail, std::string expected = {});
CheckResult skipped(std::string why);

// One check's section of the check file (`checks: {pcie.link: {...}}`): its expected values and
// thresholds. Absent keys read as nothing; a value of the wrong kind throws plumb::Error naming
// the file, line and key: "site.yaml:12: checks.accel.temperature.critical: must be a number in
// [0, 200], got 'hot'".
class CheckSection {
 public:
  CheckSection() = default;
  CheckSection(YAML::Node node, std::string source, std::string where);

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  bool has(std::string_view key) const;
  std::optional<double> number(std::string_view key, const NumberRange& range) const;
  std::optional<std::string> text(std::string_view key) const;
  std::optional<bool> flag(std::string_view key) const;
  // One of `allowed` ("warning", "critical"), else plumb::Error "...: must be one of warning,
  // critical, got 'high'".
  std::optional<std::string> choice(std::string_view key, std::span<const std::string> allowed) const;
  // A list of scalars ("[ens1f0, ens1f1]"); empty when absent.
  std::vector<std::string> text_list(std::string_view key) const;
  // A map of scalars ("{NCCL_IB_HCA: mlx5, HCCL_ALGO: ...}"), in file order; empty when absent.
  std::vector<std::pair<std::string, std::string>> text_map(std::string_view key) const;
  const YAML::Node& node() const { return node_; }
  // "site.yaml:12: checks.<name>.<key>": where a value a check refuses came from.
  std::string at(std::string_view key) const;

 private:
  YAML::Node value(std::string_view key) const;

  YAML::Node node_;
  std::string source_;
  std::string where_;
};

// One row of the table.
struct CheckSpec {
  std::string name;      // "host.irqbalance": category, a dot, the check
  std::string summary;   // one line: what it checks and against what
  std::vector<std::string> keys;  // the keys its section may hold, besides "enabled"
  std::function<CheckResult(const NodeContext&, const CheckSection&)> run;
  // plumb check genconf: this node's values as the section's map (the expected values a later run
  // compares against); a null node writes no section. May be empty (nothing to record).
  std::function<YAML::Node(const NodeContext&)> observe;
};

// The whole table, in the order checks are shown: accelerators, PCIe, network, host, versions.
std::span<const CheckSpec> node_checks();

// The table's groups, one file each (so that each area's checks live together).
std::vector<CheckSpec> accelerator_checks();  // accelerator_checks.cc
std::vector<CheckSpec> pcie_checks();         // pcie_checks.cc
std::vector<CheckSpec> network_checks();      // network_checks.cc
std::vector<CheckSpec> host_checks();         // host_checks.cc
std::vector<CheckSpec> version_checks();      // version_checks.cc

// The check named `name`, or nullptr.
const CheckSpec* find_check(std::string_view name);

}  // namespace plumb::check
