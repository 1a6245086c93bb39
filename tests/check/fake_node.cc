#include "check/fake_node.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/subprocess.h"

namespace plumb::check::test {
namespace fs = std::filesystem;

FakeNode::FakeNode(const std::string& name)
    : root_(plumb::test::temp_dir("fake-node-" + name) + "/root"),
      tools_(fs::path(root_).parent_path().string() + "/tools") {
  fs::create_directories(root_);
  fs::create_directories(tools_);
}

NodeContext FakeNode::context(double timeout_s) const {
  NodeContext c;
  c.root = root_;
  c.tool_timeout_s = timeout_s;
  c.host = "node7";
  return c;
}

void FakeNode::write(const std::string& absolute, const std::string& text) const {
  const fs::path path = root_ + absolute;
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

void FakeNode::symlink(const std::string& absolute, const std::string& target) const {
  const fs::path path = root_ + absolute;
  fs::create_directories(path.parent_path());
  fs::create_symlink(target, path);
}

void FakeNode::add_pci(const FakePci& d) const {
  const std::string dir = "/sys/bus/pci/devices/" + d.bdf;
  write(dir + "/vendor", d.vendor + "\n");
  write(dir + "/class", d.klass + "\n");
  write(dir + "/current_link_width", std::to_string(d.width) + "\n");
  write(dir + "/max_link_width", std::to_string(d.max_width) + "\n");
  write(dir + "/current_link_speed", d.speed + "\n");
  write(dir + "/max_link_speed", d.max_speed + "\n");
  write(dir + "/numa_node", std::to_string(d.numa_node) + "\n");
  for (const std::string& n : d.net) fs::create_directories(root_ + dir + "/net/" + n);
  for (const std::string& n : d.ib) fs::create_directories(root_ + dir + "/infiniband/" + n);
}

void FakeNode::add_numa_node(int node, const std::string& cpulist) const {
  write(fmt::format("/sys/devices/system/node/node{}/cpulist", node), cpulist + "\n");
}

void FakeNode::add_net(const std::string& name, const std::string& bdf, const std::string& operstate,
                       long speed_mbps) const {
  const std::string dir = "/sys/class/net/" + name;
  write(dir + "/operstate", operstate + "\n");
  write(dir + "/speed", std::to_string(speed_mbps) + "\n");
  symlink(dir + "/device", "../../../devices/pci0000:00/" + bdf);
}

void FakeNode::add_ib_port(const std::string& hca, int port, const std::string& state,
                           const std::string& phys_state, const std::string& rate,
                           const std::string& link_layer) const {
  const std::string dir = fmt::format("/sys/class/infiniband/{}/ports/{}", hca, port);
  write(dir + "/state", state + "\n");
  write(dir + "/phys_state", phys_state + "\n");
  write(dir + "/rate", rate + "\n");
  write(dir + "/link_layer", link_layer + "\n");
}

void FakeNode::set_irq_affinity(int irq, const std::string& cpulist) const {
  write(fmt::format("/proc/irq/{}/smp_affinity_list", irq), cpulist + "\n");
}

void FakeNode::add_tool(const std::string& name, const std::string& script_body) const {
  const std::string path = tools_ + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << script_body << "\n";
  ::chmod(path.c_str(), 0755);
}

ScopedPath::ScopedPath(const std::string& dir) {
  const char* old = std::getenv("PATH");
  old_ = old == nullptr ? "" : old;
  ::setenv("PATH", (dir + ":" + old_).c_str(), 1);
}

ScopedPath::~ScopedPath() { ::setenv("PATH", old_.c_str(), 1); }

std::string fixture(const std::string& tool, const std::string& file) {
  return std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/check/" + tool + "/" + file;
}

}  // namespace plumb::check::test

namespace plumb::check::test {

const char* const kNvidiaInterrupts =
    "            CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7\n"
    "   0:         44          0          0          0          0          0          0          0"
    "   IO-APIC   2-edge      timer\n"
    " 150:          0          0          0          0          0          0          0          0"
    "  IR-PCI-MSI 31981568-edge      mlx5_async0@pci:0000:3b:00.0\n"
    " 151:     123456          0          0          0          0          0          0          0"
    "  IR-PCI-MSI 31981569-edge      mlx5_comp0@pci:0000:3b:00.0\n"
    " 152:          0      98765          0          0          0          0          0          0"
    "  IR-PCI-MSI 31981570-edge      mlx5_comp1@pci:0000:3b:00.0\n"
    " 160:          0          0          0          0      55555          0          0          0"
    "  IR-PCI-MSI 98566144-edge      mlx5_comp0@pci:0000:bb:00.0\n"
    " NMI:          0          0          0          0          0          0          0          0"
    "   Non-maskable interrupts\n";

void build_nvidia_node(const FakeNode& node) {
  node.add_numa_node(0, "0-3");
  node.add_numa_node(1, "4-7");
  const std::string gen5 = "32.0 GT/s PCIe";
  node.add_pci({"0000:18:00.0", "0x10de", "0x030200", 16, 16, gen5, gen5, 0, {}, {}});
  node.add_pci({"0000:98:00.0", "0x10de", "0x030200", 16, 16, "2.5 GT/s PCIe", gen5, 1, {}, {}});
  node.add_pci({"0000:3b:00.0", "0x15b3", "0x020000", 16, 16, "16.0 GT/s PCIe", "16.0 GT/s PCIe", 0,
                {"ens1f0np0"}, {"mlx5_0"}});
  node.add_pci({"0000:bb:00.0", "0x15b3", "0x020000", 16, 16, "16.0 GT/s PCIe", "16.0 GT/s PCIe", 1,
                {"ens2f0np0"}, {"mlx5_1"}});
  node.add_net("ens1f0np0", "0000:3b:00.0", "up", 400000);
  node.add_net("ens2f0np0", "0000:bb:00.0", "up", 400000);
  for (const char* hca : {"mlx5_0", "mlx5_1"}) {
    node.add_ib_port(hca, 1, "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "Ethernet");
  }
  node.write("/proc/interrupts", kNvidiaInterrupts);
  node.set_irq_affinity(0, "0-7");
  node.set_irq_affinity(150, "0-3");
  node.set_irq_affinity(151, "0");
  node.set_irq_affinity(152, "1");
  node.set_irq_affinity(160, "4");
}

void build_ascend_node(const FakeNode& node) {
  node.add_numa_node(0, "0-7");
  node.add_pci({"0000:c1:00.0", "0x19e5", "0x120000", 16, 16, "16.0 GT/s PCIe", "16.0 GT/s PCIe", 0, {}, {}});
  node.add_pci({"0000:c2:00.0", "0x19e5", "0x120000", 16, 16, "16.0 GT/s PCIe", "16.0 GT/s PCIe", 0, {}, {}});
}

}  // namespace plumb::check::test
