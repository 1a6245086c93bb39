// /proc/interrupts read into its vectors, to find a NIC's interrupts by name:
//
//              CPU0       CPU1
//    152:         0     123456  IR-PCI-MSI 31981568-edge      mlx5_comp0@pci:0000:3d:00.0
//    NMI:         0          0  Non-maskable interrupts
//
// Only numbered lines are vectors (NMI, LOC... are per-CPU counters). The layout is the kernel's
// show_interrupts() (kernel/irq/proc.c): the CPU header, then per line "N:", one count per CPU,
// the chip, the hardware IRQ and the action names. docs/check.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

struct InterruptLine {
  int irq = -1;
  double count = 0;          // all CPUs together
  std::string description;   // what follows the counts: chip, hwirq, names
};

// Never throws: lines it cannot read are left out.
std::vector<InterruptLine> parse_interrupts(std::string_view text);

// Does `line` belong to the device at `bdf` with these interface and RDMA names? Its names carry
// the address ("mlx5_comp3@pci:0000:3b:00.0", "hns3-0000:bd:00.0-TxRx-0") or begin with an
// interface name and a dash ("ens1f0-TxRx-3").
bool interrupt_of(const InterruptLine& line, std::string_view bdf,
                  const std::vector<std::string>& names);

}  // namespace plumb::check
