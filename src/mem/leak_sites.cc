#include "mem/leak_sites.h"

#include <fmt/format.h>

#include <algorithm>

#include "mem/address_map.h"

namespace plumb::mem {
namespace {

struct LiveBlock {
  uint64_t size = 0;
  uint32_t stack = kNoStack;
};

// Per stack (kNoStack last): live bytes and allocations, sampled at each step start.
struct SiteSamples {
  std::vector<std::vector<uint64_t>> bytes;  // [sample][stack slot]
  std::vector<uint64_t> count_last;          // [stack slot] at the last sample
};

size_t slot(uint32_t stack, size_t stacks) { return stack == kNoStack ? stacks : stack; }

SiteSamples sample(const Trace& t, const std::vector<size_t>& starts) {
  const size_t slots = t.stacks.size() + 1;
  std::vector<uint64_t> bytes(slots, 0), count(slots, 0);
  AddressMap<LiveBlock> live;  // open addressing: a node per allocation made this pass slow
  SiteSamples s;
  size_t next = 0;
  for (size_t i = 0; i <= t.events.size() && next < starts.size(); ++i) {
    while (next < starts.size() && starts[next] == i) {
      s.bytes.push_back(bytes);
      s.count_last = count;
      ++next;
    }
    if (i == t.events.size()) break;
    const Event& e = t.events[i];
    if (e.action == Action::kAlloc) {
      const LiveBlock l{e.size, e.stack < t.stacks.size() ? e.stack : kNoStack};
      live[e.addr] = l;
      bytes[slot(l.stack, t.stacks.size())] += l.size;
      ++count[slot(l.stack, t.stacks.size())];
    } else if (e.action == Action::kFreeRequested) {
      const LiveBlock* l = live.find(e.addr);
      if (l == nullptr) continue;  // allocated before the trace began
      const size_t k = slot(l->stack, t.stacks.size());
      bytes[k] -= l->size;
      --count[k];
      live.erase(e.addr);
    }
  }
  return s;
}

}  // namespace

std::string describe_stack(const Trace& t, uint32_t stack, size_t depth) {
  if (stack == kNoStack || stack >= t.stacks.size() || t.stacks[stack].empty()) {
    return "(no call stack recorded)";
  }
  std::string out;
  for (size_t i = 0; i < t.stacks[stack].size() && i < depth; ++i) {
    const uint32_t f = t.stacks[stack][i];
    if (f >= t.frames.size()) continue;
    const Frame& fr = t.frames[f];
    if (!out.empty()) out += " < ";
    out += fmt::format("{} ({}:{})", fr.name, fr.filename, fr.line);
  }
  return out;
}

std::vector<LeakSite> growing_sites(const Trace& t, const Steps& steps, uint64_t min_rise,
                                    size_t limit) {
  if (steps.starts.size() < 3) return {};
  const SiteSamples s = sample(t, steps.starts);
  std::vector<LeakSite> out;
  const size_t slots = t.stacks.size() + 1;
  std::vector<double> x(s.bytes.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  std::vector<uint64_t> y(s.bytes.size());
  for (size_t k = 0; k < slots; ++k) {
    const uint64_t first = s.bytes.front()[k], last = s.bytes.back()[k];
    if (last < first + min_rise) continue;
    LeakSite site;
    site.stack = k == t.stacks.size() ? kNoStack : static_cast<uint32_t>(k);
    site.where = describe_stack(t, site.stack);
    for (size_t i = 0; i < y.size(); ++i) y[i] = s.bytes[i][k];
    double stderr_slope = 0;
    least_squares(x, y, site.bytes_per_step, stderr_slope);
    site.live_first = first;
    site.live_last = last;
    site.allocations_live = s.count_last[k];
    if (site.bytes_per_step > 0) out.push_back(std::move(site));
  }
  std::sort(out.begin(), out.end(),
            [](const LeakSite& a, const LeakSite& b) { return a.bytes_per_step > b.bytes_per_step; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace plumb::mem
