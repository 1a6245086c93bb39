// The network checks of plumb check node (docs/check.md): net.ports (every NIC port up at the
// expected rate: /sys/class/net and /sys/class/infiniband), net.roce (roce_check.cc) and
// host.nic_irq (nic_irq_check.cc).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "check/check.h"
#include "check/findings.h"
#include "check/network_parts.h"
#include "check/probe_text.h"
#include "common/error.h"

namespace plumb::check {
namespace {

// 10 Mb/s to 1.6 Tb/s: the Ethernet and InfiniBand port rates in use (IEEE 802.3, IBTA XDR).
constexpr NumberRange kRateRange{0.01, 1600};
// /sys/class/net/<if>/speed is in Mb/s.
constexpr double kMbPerGb = 1000;

struct Port {
  std::string name;    // "ens1f0np0" or "mlx5_0/1"
  bool rdma = false;   // an /sys/class/infiniband port
  bool up = false;
  std::string state;   // "up", "down", "ACTIVE", "INIT", ...
  bool physical_up = false;  // InfiniBand: phys_state LinkUp
  std::optional<double> rate_gbps;
};

// "4: ACTIVE" -> "ACTIVE"
std::string after_colon(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string_view rest = colon == std::string::npos ? std::string_view(text)
                                                           : std::string_view(text).substr(colon + 1);
  const std::vector<std::string_view> w = words(rest);
  return w.empty() ? std::string() : std::string(w.front());
}

std::optional<Port> net_port(const NodeContext& c, const std::string& name) {
  const std::string dir = "/sys/class/net/" + name;
  if (!c.link(dir + "/device")) return std::nullopt;  // virtual: lo, bonds, bridges, veths
  Port p;
  p.name = name;
  p.state = c.read_value(dir + "/operstate").value_or("unknown");
  p.up = p.state == "up";
  const std::optional<long> mbps = to_long(c.read_value(dir + "/speed").value_or(""));
  if (mbps && *mbps > 0) p.rate_gbps = static_cast<double>(*mbps) / kMbPerGb;
  return p;
}

Port rdma_port(const NodeContext& c, const std::string& hca, const std::string& port) {
  const std::string dir = fmt::format("/sys/class/infiniband/{}/ports/{}", hca, port);
  Port p;
  p.name = hca + "/" + port;
  p.rdma = true;
  p.state = after_colon(c.read_value(dir + "/state").value_or("unknown"));
  p.up = p.state == "ACTIVE";
  p.physical_up = after_colon(c.read_value(dir + "/phys_state").value_or("")) == "LinkUp";
  const std::optional<double> rate = leading_number(c.read_value(dir + "/rate").value_or(""));
  if (rate && *rate > 0) p.rate_gbps = rate;
  return p;
}

std::vector<Port> read_ports(const NodeContext& c) {
  std::vector<Port> ports;
  for (const std::string& name : c.list("/sys/class/net")) {
    if (std::optional<Port> p = net_port(c, name)) ports.push_back(std::move(*p));
  }
  for (const std::string& hca : c.list("/sys/class/infiniband")) {
    for (const std::string& port : c.list("/sys/class/infiniband/" + hca + "/ports")) {
      ports.push_back(rdma_port(c, hca, port));
    }
  }
  return ports;
}

std::string rate_text(double gbps) { return fmt::format("{:g} Gb/s", gbps); }

std::string port_hint(const Port& p) {
  const std::string tool = p.rdma ? "ibstat " + p.name.substr(0, p.name.find('/')) : "ethtool " + p.name;
  return "check the cable, the transceiver and the switch port; " + tool;
}

std::optional<Finding> expected_port_finding(const Port* p, const std::string& name, double want) {
  const std::string expected = "up at " + rate_text(want);
  if (p == nullptr) {
    return Finding{Status::kCritical, name + " missing", expected,
                   "the driver did not create it: dmesg | grep -i " + name};
  }
  if (!p->up) return Finding{Status::kCritical, fmt::format("{} {}", p->name, p->state), expected, port_hint(*p)};
  if (p->rate_gbps && *p->rate_gbps < want) {
    return Finding{Status::kCritical, fmt::format("{} {} at {}", p->name, p->state, rate_text(*p->rate_gbps)),
                   expected, port_hint(*p)};
  }
  return std::nullopt;
}

// Without expectations only a state that is wrong on any node is judged: an InfiniBand port whose
// physical link is up but that no subnet manager has made ACTIVE.
std::optional<Finding> default_port_finding(const Port& p) {
  if (!p.rdma || p.up || !p.physical_up) return std::nullopt;
  return Finding{Status::kWarning, fmt::format("{} {} (physical link up)", p.name, p.state), "ACTIVE",
                 "no subnet manager has configured the port: check opensm; " +
                     std::string("ibstat ") + p.name.substr(0, p.name.find('/'))};
}

std::vector<Finding> port_findings(const std::vector<Port>& ports, const CheckSection& s) {
  std::vector<Finding> findings;
  for (const auto& [name, rate] : s.text_map("ports")) {
    const std::optional<double> want = leading_number(rate);
    if (!want || *want < kRateRange.least || *want > kRateRange.most) {
      throw Error(fmt::format("{}: '{}' must map to the port's rate in Gb/s (0.01 to 1600), got '{}'",
                              s.at("ports"), name, rate));
    }
    const std::string& port = name;  // clang 14 cannot capture a structured binding
    const auto it = std::find_if(ports.begin(), ports.end(), [&](const Port& p) { return p.name == port; });
    if (auto f = expected_port_finding(it == ports.end() ? nullptr : &*it, name, *want)) findings.push_back(*f);
  }
  if (!s.has("ports")) {
    for (const Port& p : ports) {
      if (auto f = default_port_finding(p)) findings.push_back(*f);
    }
  }
  return findings;
}

CheckResult run_ports(const NodeContext& c, const CheckSection& s) {
  const std::vector<Port> ports = read_ports(c);
  if (ports.empty() && !s.has("ports")) return skipped("no NIC port in /sys/class/net or /sys/class/infiniband");
  const auto up = std::count_if(ports.begin(), ports.end(), [](const Port& p) { return p.up; });
  const std::string value = fmt::format("{} of {} ports up", up, ports.size());
  const std::string note = s.has("ports") ? "" : "no expected ports: plumb check genconf records them";
  return fold_findings(port_findings(ports, s),
                       ok(value, s.has("ports") ? "the check file's ports up at their rate" : "", note));
}

YAML::Node observe_ports(const NodeContext& c) {
  YAML::Node out(YAML::NodeType::Map);
  YAML::Node ports(YAML::NodeType::Map);
  for (const Port& p : read_ports(c)) {
    if (p.up && p.rate_gbps) ports[p.name] = *p.rate_gbps;
  }
  if (ports.size() > 0) out["ports"] = ports;
  return out;
}

}  // namespace

CheckSpec net_ports_check() {
  return {"net.ports",
          "NIC ports (/sys/class/net, /sys/class/infiniband) up at the check file's rate in Gb/s",
          {"ports"}, run_ports, observe_ports};
}

std::vector<CheckSpec> network_checks() { return {net_ports_check(), net_roce_check(), nic_irq_check()}; }

}  // namespace plumb::check
