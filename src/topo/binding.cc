#include "topo/binding.h"

#include <fmt/format.h>
#include <sched.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>

#include "common/strings.h"

namespace plumb::topo {
namespace {

std::optional<int> parse_index(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

const std::string* find(const Environment& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? nullptr : &it->second;
}

// The first visible-devices variable that is set: its name, and its value.
std::optional<std::pair<std::string, std::string>> visible_devices(const Environment& env) {
  for (const char* name : kVisibleDeviceVariables) {
    if (const std::string* value = find(env, name)) return std::pair{std::string(name), *value};
  }
  return std::nullopt;
}

// Entry `n` of a visible-devices list, as an accelerator index.
AcceleratorChoice pick_entry(const std::string& variable, const std::string& list, size_t n,
                             AcceleratorChoice choice) {
  const std::vector<std::string> entries = split_list(list);
  if (n >= entries.size()) {
    choice.problem =
        fmt::format("{} lists {} device(s), none at position {}", variable, entries.size(), n);
  } else if (std::optional<int> index = parse_index(entries[n])) {
    choice.index = *index;
  } else {
    choice.problem = fmt::format(
        "{} names device '{}', not an index (a UUID?): the accelerator "
        "cannot be mapped to a PCI device",
        variable, entries[n]);
  }
  return choice;
}

AcceleratorChoice without_local_rank(const Environment& env) {
  const auto visible = visible_devices(env);
  if (!visible || split_list(visible->second).size() != 1) return {};
  AcceleratorChoice choice;
  choice.named_by = fmt::format("{}={}", visible->first, visible->second);
  return pick_entry(visible->first, visible->second, 0, choice);
}

}  // namespace

AcceleratorChoice choose_accelerator(const Environment& env) {
  const std::string* local = find(env, kLocalRankVariable);
  if (local == nullptr) return without_local_rank(env);
  AcceleratorChoice choice;
  choice.named_by = fmt::format("{}={}", kLocalRankVariable, *local);
  const std::optional<int> n = parse_index(*local);
  if (!n) {
    choice.problem = fmt::format("{}={} is not a rank number", kLocalRankVariable, *local);
    return choice;
  }
  const auto visible = visible_devices(env);
  if (!visible) {
    choice.index = *n;
    return choice;
  }
  choice.named_by += fmt::format(", {}={}", visible->first, visible->second);
  return pick_entry(visible->first, visible->second, static_cast<size_t>(*n), choice);
}

Environment accelerator_environment() {
  Environment env;
  if (const char* v = std::getenv(kLocalRankVariable)) env[kLocalRankVariable] = v;
  for (const char* name : kVisibleDeviceVariables) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  return env;
}

std::vector<int> numa_nodes_of(const Topology& topo, const CpuSet& cpus) {
  std::vector<int> out;
  for (const NumaNode& node : topo.numa_nodes) {
    for (int cpu : node.cpus) {
      if (cpus.contains(cpu)) {
        out.push_back(node.os_index);
        break;
      }
    }
  }
  return out;
}

RankBinding make_binding(const Topology& topo, int rank, int local_rank, const CpuSet& cpus,
                         const Environment& env) {
  RankBinding b;
  b.host = topo.host;
  b.rank = rank;
  b.local_rank = local_rank;
  b.cpus = cpus;
  b.numa_nodes = numa_nodes_of(topo, cpus);
  b.accelerator = choose_accelerator(env);
  if (b.accelerator.index < 0) return b;
  const std::vector<const PciDevice*> accelerators = topo.accelerators();
  if (static_cast<size_t>(b.accelerator.index) >= accelerators.size()) {
    b.accelerator.problem = fmt::format("accelerator {} is named but {} shows {} accelerator(s)",
                                        b.accelerator.index, topo.host, accelerators.size());
    b.accelerator.index = -1;
    return b;
  }
  b.accelerator_bus_id = accelerators[static_cast<size_t>(b.accelerator.index)]->bus_id;
  b.accelerator_numa = accelerators[static_cast<size_t>(b.accelerator.index)]->numa_node;
  return b;
}

namespace {

// The node a rank spread over several should use: its accelerator's, else one by local rank.
int suggested_node(const Topology& topo, const RankBinding& b) {
  if (topo.numa(b.accelerator_numa) != nullptr) return b.accelerator_numa;
  std::vector<int> with_cpus;
  for (const NumaNode& node : topo.numa_nodes) {
    if (!node.cpus.empty()) with_cpus.push_back(node.os_index);
  }
  return with_cpus[static_cast<size_t>(b.local_rank) % with_cpus.size()];
}

std::string node_list(const std::vector<int>& nodes) {
  std::vector<std::string> items;
  for (int n : nodes) items.push_back(std::to_string(n));
  return join(items, ",");
}

}  // namespace

std::optional<BindingWarning> check_binding(const Topology& topo, const RankBinding& b) {
  BindingWarning w{b.rank, b.host, "", 0, {}};
  if (b.numa_nodes.size() > 1) {
    w.numa_node = suggested_node(topo, b);
    w.cpus = topo.numa(w.numa_node)->cpus;
    w.text = fmt::format(
        "rank {} on {} is bound to cpus {}, across NUMA nodes {}; bind it to NUMA "
        "node {} (cpus {}), e.g. mpirun --bind-to numa or numactl --cpunodebind={}",
        b.rank, b.host, format_cpu_list(b.cpus), node_list(b.numa_nodes), w.numa_node,
        format_cpu_list(w.cpus), w.numa_node);
    return w;
  }
  const NumaNode* target = topo.numa(b.accelerator_numa);
  if (b.numa_nodes.size() != 1 || target == nullptr || b.numa_nodes[0] == b.accelerator_numa) {
    return std::nullopt;
  }
  w.numa_node = target->os_index;
  w.cpus = target->cpus;
  w.text = fmt::format(
      "rank {} on {} uses accelerator {} on NUMA node {} but is bound to NUMA node "
      "{}; bind it to cpus {} (NUMA node {})",
      b.rank, b.host, b.accelerator.index, w.numa_node, b.numa_nodes[0], format_cpu_list(w.cpus),
      w.numa_node);
  return w;
}

CpuSet current_affinity() {
  for (int n = 1024; n <= kMaxCpu + 1; n *= 2) {
    const std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(n),
                                                               [](cpu_set_t* s) { CPU_FREE(s); });
    const size_t size = CPU_ALLOC_SIZE(n);
    if (sched_getaffinity(0, size, set.get()) != 0) {
      if (errno == EINVAL) continue;  // the kernel's mask is larger: try a larger one
      return {};
    }
    CpuSet cpus;
    for (int cpu = 0; cpu < n; ++cpu) {
      if (CPU_ISSET_S(static_cast<size_t>(cpu), size, set.get())) cpus.insert(cpus.end(), cpu);
    }
    return cpus;
  }
  return {};
}

}  // namespace plumb::topo
