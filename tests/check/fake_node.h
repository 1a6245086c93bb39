// A node's sysfs/procfs tree in a temporary folder, for the node checks to read through
// NodeContext (--root), and stand-in tools on PATH. Builders for the usual pieces: PCI devices
// with their link attributes and names, NUMA nodes, network and RDMA ports, interrupts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "check/node_context.h"

namespace plumb::check::test {

struct FakePci {
  std::string bdf;
  std::string vendor;   // "0x15b3"
  std::string klass;    // "0x020000"
  int width = 16;
  int max_width = 16;
  std::string speed = "16.0 GT/s PCIe";
  std::string max_speed = "16.0 GT/s PCIe";
  int numa_node = 0;
  std::vector<std::string> net;  // interface names
  std::vector<std::string> ib;   // RDMA device names
};

class FakeNode {
 public:
  explicit FakeNode(const std::string& name);

  const std::string& root() const { return root_; }
  // A context reading under root(), tools with `timeout_s`.
  NodeContext context(double timeout_s = 2.0) const;

  // Writes ROOT + `absolute`, creating its folders.
  void write(const std::string& absolute, const std::string& text) const;
  void symlink(const std::string& absolute, const std::string& target) const;

  void add_pci(const FakePci& device) const;
  void add_numa_node(int node, const std::string& cpulist) const;
  // /sys/class/net/<name> with a device link, operstate and speed (Mb/s).
  void add_net(const std::string& name, const std::string& bdf, const std::string& operstate,
               long speed_mbps) const;
  // /sys/class/infiniband/<hca>/ports/<port>: state "4: ACTIVE", phys_state "5: LinkUp", rate,
  // link_layer.
  void add_ib_port(const std::string& hca, int port, const std::string& state,
                   const std::string& phys_state, const std::string& rate,
                   const std::string& link_layer) const;
  void set_irq_affinity(int irq, const std::string& cpulist) const;

  // A stand-in tool: an executable shell script named `name` in the tools folder.
  void add_tool(const std::string& name, const std::string& script_body) const;
  const std::string& tools() const { return tools_; }

 private:
  std::string root_;
  std::string tools_;
};

// Puts `dir` first on PATH for the life of the object.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& dir);
  ~ScopedPath();
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::string old_;
};

// tests/fixtures/check/<tool>/<file>
std::string fixture(const std::string& tool, const std::string& file);

}  // namespace plumb::check::test

namespace plumb::check::test {

// /proc/interrupts of the NVIDIA node below: mlx5_0's async vector 150 and completion vectors
// 151-152, mlx5_1's completion vector 160 (format of kernel/irq/proc.c show_interrupts()).
extern const char* const kNvidiaInterrupts;

// A healthy 8x-CPU, 2-socket NVIDIA node: NUMA node 0 = CPUs 0-3, node 1 = CPUs 4-7; GPUs
// 0000:18:00.0 (node 0, x16 32 GT/s) and 0000:98:00.0 (node 1, idle: 2.5 GT/s of 32); ConnectX
// NICs mlx5_0 = ens1f0np0 at 0000:3b:00.0 (node 0) and mlx5_1 = ens2f0np0 at 0000:bb:00.0
// (node 1), x16 16 GT/s, RoCE ports ACTIVE at 400 Gb/s, interrupts pinned to their node.
void build_nvidia_node(const FakeNode& node);

// A healthy Ascend node: NPUs 0000:c1:00.0 and 0000:c2:00.0 (Huawei, class 0x1200), 1 NUMA node.
void build_ascend_node(const FakeNode& node);

}  // namespace plumb::check::test
