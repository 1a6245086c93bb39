// net.roce (docs/check.md): the RoCE settings that decide whether collective traffic is
// lossless and separated from the rest, against the site's expected values.
//   Ascend NPUs: hccn_tool -i <dev> -link -g, -net_health -g, -pfc -g, -dscp_to_tc -g dscp <d>.
//   NVIDIA/Mellanox RoCE ports: mlnx_qos -i <interface> (trust mode, PFC, DSCP -> priority).
// Each device or port is probed on a thread of its own, and a device whose tool hangs gets no
// further calls, so the check ends within about one tool timeout.
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>

#include "check/check.h"
#include "check/findings.h"
#include "check/hccn_tool.h"
#include "check/mlnx_qos.h"
#include "check/network_parts.h"
#include "check/probe_text.h"
#include "check/sysfs_pci.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// What the check file expects; empty/absent fields are not judged.
struct RoceExpected {
  std::vector<int> devices;                 // Ascend logical ids (default: one per NPU found)
  std::vector<std::string> interfaces;      // mlnx_qos interfaces (default: Mellanox RoCE ports)
  std::optional<std::string> trust;
  std::optional<std::vector<int>> pfc;
  std::map<int, int> dscp_to_tc;
  std::map<int, int> dscp_to_prio;
};

constexpr int kMaxDevices = 4096;

int small_int(const std::string& text, int most, const CheckSection& s, const std::string& key) {
  const std::optional<long> v = to_long(text);
  if (!v || *v < 0 || *v > most) {
    throw Error(fmt::format("{}: must hold whole numbers from 0 to {}, got '{}'", s.at(key), most, text));
  }
  return static_cast<int>(*v);
}

std::map<int, int> int_map(const CheckSection& s, const std::string& key, int most_value) {
  std::map<int, int> out;
  for (const auto& [k, v] : s.text_map(key)) out[small_int(k, kMaxDscp, s, key)] = small_int(v, most_value, s, key);
  return out;
}

std::vector<int> int_list(const CheckSection& s, const std::string& key, int most) {
  std::vector<int> out;
  for (const std::string& item : s.text_list(key)) out.push_back(small_int(item, most, s, key));
  std::sort(out.begin(), out.end());
  return out;
}

RoceExpected read_expected(const CheckSection& s) {
  RoceExpected e;
  e.devices = int_list(s, "devices", kMaxDevices);
  e.interfaces = s.text_list("interfaces");
  e.trust = s.text("trust");
  if (s.has("pfc_priorities")) e.pfc = int_list(s, "pfc_priorities", kMaxPriority);
  e.dscp_to_tc = int_map(s, "dscp_to_tc", kMaxPriority);
  e.dscp_to_prio = int_map(s, "dscp_to_prio", kMaxPriority);
  return e;
}

// One device's or port's probes: its findings, and a few words for the healthy summary.
struct Probe {
  std::vector<Finding> findings;
  bool tool_missing = false;
};

Finding tool_problem(const std::string& who, const ToolRun& run) {
  return Finding{Status::kUnknown, fmt::format("{}: {}", who, run.problem()), "", run.problem()};
}

Finding unexpected(const std::string& who, const std::string& command, const ToolRun& run) {
  const std::string what = fmt::format("{}: unexpected output '{}'", command, output_excerpt(run.output));
  return Finding{Status::kUnknown, who + ": " + what, "", what};
}

// ---- Ascend: hccn_tool ------------------------------------------------------------------------

struct HccnCall {
  const NodeContext& c;
  int device;
  Probe& probe;
  std::string who() const { return fmt::format("NPU {}", device); }
  std::string command(const std::string& what) const { return fmt::format("hccn_tool -i {} {}", device, what); }
  // The tool's output, or nothing with the problem recorded.
  std::optional<std::string> run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"hccn_tool", "-i", std::to_string(device)};
    argv.insert(argv.end(), args.begin(), args.end());
    const ToolRun r = c.tool(argv);
    if (r.ok()) return r.output;
    probe.tool_missing = r.state == ToolRun::State::kNotFound;
    probe.findings.push_back(tool_problem(who(), r));
    return std::nullopt;
  }
  void unexpected_output(const std::string& what, const std::string& output) {
    ToolRun r;
    r.output = output;
    probe.findings.push_back(unexpected(who(), command(what), r));
  }
};

// false when the device cannot be probed further (tool missing or hung, link down).
bool hccn_state(HccnCall& call, const std::string& flag, const std::string& want,
                std::optional<std::string> (*parse)(std::string_view), const std::string& label,
                const std::string& hint) {
  const std::optional<std::string> out = call.run({flag, "-g"});
  if (!out) return false;
  const std::optional<std::string> got = parse(*out);
  if (!got) {
    call.unexpected_output(flag + " -g", *out);
    return false;
  }
  if (*got == want) return true;
  call.probe.findings.push_back({Status::kCritical, fmt::format("{} {} {}", call.who(), label, *got), want,
                                 fmt::format(fmt::runtime(hint), call.device)});
  return false;
}

std::string pfc_bitmap(const std::vector<int>& on) {
  std::string bits;
  for (int p = 0; p <= kMaxPriority; ++p) {
    bits += (p ? "," : "") + std::string(std::count(on.begin(), on.end(), p) ? "1" : "0");
  }
  return bits;
}

void hccn_pfc(HccnCall& call, const std::vector<int>& want) {
  const std::optional<std::string> out = call.run({"-pfc", "-g"});
  if (!out) return;
  const std::optional<std::vector<int>> got = parse_hccn_pfc(*out);
  if (!got) return call.unexpected_output("-pfc -g", *out);
  if (*got == want) return;
  call.probe.findings.push_back(
      {Status::kCritical, fmt::format("{} PFC on priorities {}", call.who(), priority_list(*got)),
       "PFC on " + priority_list(want),
       fmt::format("the switch's lossless queue must match: hccn_tool -i {} -pfc -s bitmap {}", call.device,
                   pfc_bitmap(want))});
}

bool hccn_dscp(HccnCall& call, int dscp, int tc) {
  const std::optional<std::string> out = call.run({"-dscp_to_tc", "-g", "dscp", std::to_string(dscp)});
  if (!out) return false;
  const std::map<int, int> got = parse_hccn_dscp_to_tc(*out);
  const auto it = got.find(dscp);
  if (it == got.end()) {
    call.unexpected_output(fmt::format("-dscp_to_tc -g dscp {}", dscp), *out);
    return false;
  }
  if (it->second != tc) {
    call.probe.findings.push_back(
        {Status::kCritical, fmt::format("{} DSCP {} -> TC {}", call.who(), dscp, it->second),
         fmt::format("DSCP {} -> TC {}", dscp, tc),
         fmt::format("hccn_tool -i {} -dscp_to_tc -s dscp {} tc {}; the switch must queue DSCP {} the same",
                     call.device, dscp, tc, dscp)});
  }
  return true;
}

Probe probe_npu(const NodeContext& c, int device, const RoceExpected& e) {
  Probe probe;
  HccnCall call{c, device, probe};
  if (!hccn_state(call, "-link", "UP", parse_hccn_link, "link",
                  "check the NPU's optical module and fibre: hccn_tool -i {} -optical -g")) {
    return probe;  // link down: -pfc -g and -dscp_to_tc -g refuse ("Link status is down")
  }
  if (!hccn_state(call, "-net_health", "Success", parse_hccn_net_health, "net health",
                  "the NPU cannot reach its detect address: hccn_tool -i {} -netdetect -g")) {
    if (probe.findings.empty() || probe.findings.back().status == Status::kUnknown) return probe;
  }
  if (e.pfc) hccn_pfc(call, *e.pfc);
  for (const auto& [dscp, tc] : e.dscp_to_tc) {
    if (!hccn_dscp(call, dscp, tc)) break;
  }
  return probe;
}

// ---- NVIDIA/Mellanox: mlnx_qos ----------------------------------------------------------------

std::vector<std::string> mlnx_roce_interfaces(const NodeContext& c, const std::vector<PciDevice>& nics) {
  std::vector<std::string> out;
  for (const PciDevice& d : nics) {
    if (d.vendor_id != topo::kVendorMellanox || d.ib_names.empty() || d.net_names.empty()) continue;
    const std::string layer =
        c.read_value("/sys/class/infiniband/" + d.ib_names.front() + "/ports/1/link_layer").value_or("");
    if (layer == "Ethernet") out.push_back(d.net_names.front());
  }
  return out;
}

void mlnx_compare(Probe& probe, const std::string& iface, const MlnxQos& q, const RoceExpected& e) {
  if (e.trust && q.trust != *e.trust) {
    probe.findings.push_back({Status::kCritical, fmt::format("{} trust {}", iface, q.trust.empty() ? "unknown" : q.trust),
                              "trust " + *e.trust, fmt::format("mlnx_qos -i {} --trust {}", iface, *e.trust)});
  }
  if (e.pfc && q.pfc_priorities && *q.pfc_priorities != *e.pfc) {
    probe.findings.push_back({Status::kCritical, fmt::format("{} PFC on priorities {}", iface, priority_list(*q.pfc_priorities)),
                              "PFC on " + priority_list(*e.pfc),
                              fmt::format("mlnx_qos -i {} --pfc {}", iface, pfc_bitmap(*e.pfc))});
  }
  for (const auto& [dscp, prio] : e.dscp_to_prio) {
    const auto it = q.dscp_to_prio.find(dscp);
    if (it != q.dscp_to_prio.end() && it->second == prio) continue;
    const std::string found = it == q.dscp_to_prio.end() ? "unmapped" : fmt::format("priority {}", it->second);
    probe.findings.push_back({Status::kCritical, fmt::format("{} DSCP {} -> {}", iface, dscp, found),
                              fmt::format("DSCP {} -> priority {}", dscp, prio),
                              fmt::format("mlnx_qos -i {} --dscp2prio set,{},{}", iface, dscp, prio)});
  }
}

Probe probe_mlnx(const NodeContext& c, const std::string& iface, const RoceExpected& e) {
  Probe probe;
  const ToolRun r = c.tool({"mlnx_qos", "-i", iface});
  if (!r.ok()) {
    probe.tool_missing = r.state == ToolRun::State::kNotFound;
    probe.findings.push_back(tool_problem(iface, r));
    return probe;
  }
  const std::optional<MlnxQos> q = parse_mlnx_qos(r.output);
  if (!q) {
    probe.findings.push_back(unexpected(iface, "mlnx_qos -i " + iface, r));
    return probe;
  }
  mlnx_compare(probe, iface, *q, e);
  return probe;
}

// ---- the check ----------------------------------------------------------------------------------

bool ascend_expected(const RoceExpected& e) { return !e.devices.empty() || !e.dscp_to_tc.empty(); }
bool mlnx_expected(const RoceExpected& e) {
  return !e.interfaces.empty() || e.trust || !e.dscp_to_prio.empty();
}

template <typename Target, typename Fn>
std::vector<Probe> probe_all(const std::vector<Target>& targets, Fn fn) {
  std::vector<std::future<Probe>> running;
  for (const Target& t : targets) running.push_back(std::async(std::launch::async, fn, t));
  std::vector<Probe> out;
  for (auto& f : running) out.push_back(f.get());
  return out;
}

// A part whose tool is missing everywhere and that nothing expects is not judged.
bool drop_if_untooled(std::vector<Probe>& probes, bool expected) {
  const bool missing = !probes.empty() && std::all_of(probes.begin(), probes.end(),
                                                      [](const Probe& p) { return p.tool_missing; });
  if (missing && !expected) probes.clear();
  return missing && !expected;
}

std::vector<int> default_devices(const std::vector<PciDevice>& devices) {
  std::vector<int> ids;
  for (const PciDevice& d : devices) {
    if (d.accelerator() && d.vendor_id == topo::kVendorHuawei) ids.push_back(static_cast<int>(ids.size()));
  }
  return ids;
}

CheckResult run_roce(const NodeContext& c, const CheckSection& s) {
  const RoceExpected e = read_expected(s);
  const std::vector<PciDevice> devices = read_pci_devices(c);
  const std::vector<int> npus = e.devices.empty() ? default_devices(devices) : e.devices;
  const std::vector<std::string> ifaces = e.interfaces.empty() ? mlnx_roce_interfaces(c, nics_of(devices)) : e.interfaces;
  if (npus.empty() && ifaces.empty()) {
    return skipped("no RoCE NIC: no Ascend NPU and no Mellanox port with an Ethernet link layer");
  }
  std::vector<Probe> ascend = probe_all(npus, [&](int d) { return probe_npu(c, d, e); });
  std::vector<Probe> mlnx = probe_all(ifaces, [&](const std::string& i) { return probe_mlnx(c, i, e); });
  std::vector<std::string> untooled;
  if (drop_if_untooled(ascend, ascend_expected(e) || e.pfc.has_value())) untooled.push_back("hccn_tool");
  if (drop_if_untooled(mlnx, mlnx_expected(e) || e.pfc.has_value())) untooled.push_back("mlnx_qos");
  if (ascend.empty() && mlnx.empty()) {
    return skipped(fmt::format("{} not found on PATH and nothing expected", join(untooled, ", ")));
  }
  std::vector<Finding> findings;
  for (std::vector<Probe>* part : {&ascend, &mlnx}) {
    for (Probe& p : *part) findings.insert(findings.end(), p.findings.begin(), p.findings.end());
  }
  const std::string value = fmt::format("{} NPUs, {} RoCE ports as expected", ascend.size(), mlnx.size());
  return fold_findings(std::move(findings), ok(value, "link up, net health Success, QoS as the check file"));
}

YAML::Node observe_roce(const NodeContext& c) {
  YAML::Node out(YAML::NodeType::Map);
  const std::vector<PciDevice> devices = read_pci_devices(c);
  const std::vector<std::string> ifaces = mlnx_roce_interfaces(c, nics_of(devices));
  if (!ifaces.empty()) {
    const ToolRun r = c.tool({"mlnx_qos", "-i", ifaces.front()});
    const std::optional<MlnxQos> q = r.ok() ? parse_mlnx_qos(r.output) : std::nullopt;
    if (q && !q->trust.empty()) out["trust"] = q->trust;
    if (q && q->pfc_priorities) out["pfc_priorities"] = *q->pfc_priorities;
    return out;
  }
  if (!default_devices(devices).empty()) {
    const ToolRun r = c.tool({"hccn_tool", "-i", "0", "-pfc", "-g"});
    const std::optional<std::vector<int>> pfc = r.ok() ? parse_hccn_pfc(r.output) : std::nullopt;
    if (pfc) out["pfc_priorities"] = *pfc;
  }
  return out;
}

}  // namespace

CheckSpec net_roce_check() {
  return {"net.roce",
          "RoCE settings: Ascend hccn_tool link, net health, PFC, DSCP->TC; Mellanox mlnx_qos trust, "
          "PFC, DSCP->priority; against the check file",
          {"devices", "interfaces", "trust", "pfc_priorities", "dscp_to_tc", "dscp_to_prio"}, run_roce,
          observe_roce};
}

}  // namespace plumb::check
