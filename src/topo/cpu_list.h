// CPU sets in the Linux "cpulist" form that /sys, taskset -c and numactl use: "0-3,8,10-11".
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace plumb::topo {

// OS indices of logical CPUs (hwloc's PUs), ascending.
using CpuSet = std::set<int>;

// The highest CPU index a list may name: Linux's largest NR_CPUS is 8192; this leaves room.
inline constexpr int kMaxCpu = 65535;

// "0-3,8,10-11": ascending, runs of 2 or more as ranges; "" for the empty set.
std::string format_cpu_list(const CpuSet& cpus);

// Reads what format_cpu_list writes, and any order, overlap or spaces around items. Throws
// plumb::Error naming `what` (where the text came from) on anything else: "what: expected a CPU
// list such as 0-3,8, got 'x'".
CpuSet parse_cpu_list(std::string_view text, std::string_view what);

}  // namespace plumb::topo
