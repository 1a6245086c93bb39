// The version and setting checks of plumb check node (docs/check.md, "Versions and settings"):
// driver, CUDA/CANN, NCCL, the frameworks and NIC firmware against the check file, and the
// environment variables that change results (NCCL_*, HCCL_*, ...).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "check/check.h"
#include "common/error.h"
#include "common/strings.h"
#include "sysinfo/system_info.h"

namespace plumb::check {
namespace {

// What plumb env probes and a fleet must agree on (sysinfo/system_info.h names).
const std::vector<std::string> kVersionItems = {
    "os",           "kernel", "nvidia_driver", "cuda_runtime", "nccl",  "ascend_driver",
    "cann",         "mpi",    "python",        "torch",        "torch_cuda", "torch_npu"};

sysinfo::EnvRecord probe_versions(const NodeContext& ctx) {
  sysinfo::ProbeContext probe;
  probe.root = ctx.root;
  probe.python_timeout_s = ctx.tool_timeout_s;
  return sysinfo::collect_env(probe);
}

// The severity a mismatch gets: `severity: warning` in the section, else `fallback`.
Status severity(const CheckSection& section, Status fallback) {
  static const std::vector<std::string> kSeverities = {"warning", "critical"};
  const std::optional<std::string> s = section.choice("severity", kSeverities);
  if (!s) return fallback;
  return *s == "warning" ? Status::kWarning : Status::kCritical;
}

CheckResult mismatch(Status status, std::vector<std::string> found, std::vector<std::string> want,
                     std::string advice) {
  CheckResult r = status == Status::kWarning ? warning(join(found, "; "), join(want, "; "), advice)
                                             : critical(join(found, "; "), join(want, "; "), advice);
  return r;
}

// One pass over expected `name: value` pairs: the ones whose actual value differs.
template <class Lookup>
CheckResult compare(const std::vector<std::pair<std::string, std::string>>& expected, Lookup actual,
                    Status status, const std::string& advice) {
  std::vector<std::string> found, want, all;
  for (const auto& [name, value] : expected) {
    const std::optional<std::string> have = actual(name);
    all.push_back(fmt::format("{} {}", name, have.value_or("(absent)")));
    if (have == value) continue;
    found.push_back(fmt::format("{} {}", name, have.value_or("(absent)")));
    want.push_back(fmt::format("{} {}", name, value));
  }
  if (found.empty()) return ok(join(all, "; "), "as in the check file");
  return mismatch(status, found, want, advice);
}

// ---- versions.software ------------------------------------------------------------------------

// A node whose driver or NCCL differs from its peers' gives other numbers, and NCCL versions
// that differ across a job can hang it: critical unless the site says otherwise.
CheckResult software(const NodeContext& ctx, const CheckSection& section) {
  const auto expected = section.text_map("expected");
  if (expected.empty()) return skipped("no versions expected in the check file");
  for (const auto& [name, value] : expected) {
    if (std::find(kVersionItems.begin(), kVersionItems.end(), name) == kVersionItems.end()) {
      throw Error(fmt::format("checks.versions.software.expected: unknown version '{}'{}; expected "
                              "one of {}",
                              name, did_you_mean(name, kVersionItems), join(kVersionItems, ", ")));
    }
  }
  const sysinfo::EnvRecord record = probe_versions(ctx);
  return compare(
      expected,
      [&](const std::string& name) -> std::optional<std::string> {
        const sysinfo::Item* item = record.find(name);
        return item ? item->value : std::nullopt;
      },
      severity(section, Status::kCritical),
      "this node runs other versions than its peers: reinstall from the site's image, or "
      "update the check file if the fleet moved (plumb env shows where each came from)");
}

YAML::Node observe_software(const NodeContext& ctx) {
  const sysinfo::EnvRecord record = probe_versions(ctx);
  YAML::Node expected(YAML::NodeType::Map);
  for (const std::string& name : kVersionItems) {
    const sysinfo::Item* item = record.find(name);
    if (item != nullptr && item->value) expected[name] = *item->value;
  }
  YAML::Node section(YAML::NodeType::Map);
  if (expected.size() > 0) section["expected"] = expected;
  return section;
}

// ---- versions.firmware ------------------------------------------------------------------------

std::map<std::string, std::string> hca_firmware(const NodeContext& ctx) {
  std::map<std::string, std::string> fw;
  for (const std::string& hca : ctx.list("/sys/class/infiniband")) {
    if (const auto v = ctx.read_value("/sys/class/infiniband/" + hca + "/fw_ver")) fw[hca] = *v;
  }
  return fw;
}

CheckResult firmware(const NodeContext& ctx, const CheckSection& section) {
  const auto expected = section.text_map("expected");
  const std::map<std::string, std::string> fw = hca_firmware(ctx);
  if (fw.empty()) return skipped("no RDMA device in /sys/class/infiniband");
  if (expected.empty()) return skipped("no firmware expected in the check file");
  return compare(
      expected,
      [&](const std::string& hca) -> std::optional<std::string> {
        const auto it = fw.find(hca);
        return it == fw.end() ? std::nullopt : std::optional(it->second);
      },
      severity(section, Status::kWarning),
      "NIC firmware differs from the fleet's: flash it (mlxfwmanager) or update the check file");
}

YAML::Node observe_firmware(const NodeContext& ctx) {
  YAML::Node section(YAML::NodeType::Map);
  YAML::Node expected(YAML::NodeType::Map);
  for (const auto& [hca, version] : hca_firmware(ctx)) expected[hca] = version;
  if (expected.size() > 0) section["expected"] = expected;
  return section;
}

// ---- versions.env -----------------------------------------------------------------------------

// NCCL reads its settings from the environment first, then NCCL_CONF_FILE or ~/.nccl.conf, then
// /etc/nccl.conf (NCCL's documentation, "Environment Variables"): a site that sets them in
// /etc/nccl.conf sets them for every job of the node.
std::map<std::string, std::string> nccl_conf(const NodeContext& ctx) {
  std::map<std::string, std::string> vars;
  const std::optional<std::string> text = ctx.read("/etc/nccl.conf");
  if (!text) return vars;
  for (const std::string& line : split_list(*text, '\n')) {
    const size_t eq = line.find('=');
    if (line.front() == '#' || eq == std::string::npos) continue;
    vars[std::string(trim_blanks(line.substr(0, eq)))] = std::string(trim_blanks(line.substr(eq + 1)));
  }
  return vars;
}

std::optional<std::string> setting(const NodeContext& ctx, const std::map<std::string, std::string>& conf,
                                   const std::string& name) {
  if (const auto it = ctx.environment.find(name); it != ctx.environment.end()) return it->second;
  if (const auto it = conf.find(name); it != conf.end()) return it->second;
  return std::nullopt;
}

bool recorded(const std::string& name) {
  for (const std::string_view prefix : sysinfo::env_prefixes()) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The Ascend bring-up team left HCCL_ALGO at ring where tree was faster at 128 nodes: a setting
// that is not the site's is a warning (the job runs, at another speed).
CheckResult env(const NodeContext& ctx, const CheckSection& section) {
  const auto expected = section.text_map("expected");
  const std::vector<std::string> absent = section.text_list("absent");
  if (expected.empty() && absent.empty()) return skipped("no settings expected in the check file");
  const std::map<std::string, std::string> conf = nccl_conf(ctx);
  const Status status = severity(section, Status::kWarning);
  const std::string advice =
      "a setting that changes results differs from the site's: check the job's environment, "
      "/etc/nccl.conf and the launcher's exports";
  std::vector<std::string> found, want;
  for (const std::string& name : absent) {
    if (const auto have = setting(ctx, conf, name)) {
      found.push_back(fmt::format("{}={}", name, *have));
      want.push_back(name + " unset");
    }
  }
  CheckResult r = compare(
      expected, [&](const std::string& name) { return setting(ctx, conf, name); }, status, advice);
  if (found.empty()) return r;
  if (r.status != Status::kOk) {
    found.insert(found.begin(), r.value);
    want.insert(want.begin(), r.expected);
  }
  return mismatch(status, found, want, advice);
}

YAML::Node observe_env(const NodeContext& ctx) {
  YAML::Node expected(YAML::NodeType::Map);
  std::map<std::string, std::string> vars = nccl_conf(ctx);
  for (const auto& [name, value] : ctx.environment) vars[name] = value;
  for (const auto& [name, value] : vars) {
    if (recorded(name) && name.rfind("MASTER_", 0) != 0) expected[name] = value;
  }
  YAML::Node section(YAML::NodeType::Map);
  if (expected.size() > 0) section["expected"] = expected;
  return section;
}

}  // namespace

std::vector<CheckSpec> version_checks() {
  return {
      {"versions.software",
       "driver, CUDA runtime, NCCL, Ascend driver, CANN, MPI, torch as the check file expects",
       {"expected", "severity"}, software, observe_software},
      {"versions.firmware", "RDMA NIC firmware (/sys/class/infiniband/*/fw_ver) as expected",
       {"expected", "severity"}, firmware, observe_firmware},
      {"versions.env",
       "NCCL_*, HCCL_*, ... in the environment and /etc/nccl.conf as expected; `absent` ones unset",
       {"expected", "absent", "severity"}, env, observe_env},
  };
}

}  // namespace plumb::check
