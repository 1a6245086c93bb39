#include "mem/categories.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/input_file.h"
#include "mem/address_map.h"

namespace plumb::mem {
namespace {

const std::string kOther = "other";

CategoryRule rule(const std::string& category, const std::string& pattern,
                  std::string_view what = "category pattern") {
  return {category, pattern, Regex(pattern, what)};
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  const size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<CategoryRule> default_category_rules() {
  // Communication first: a collective's buffer is allocated inside whatever step called it.
  return {
      rule("communication",
           R"(nccl|hccl|ProcessGroup|c10d|all_reduce|allreduce|all_gather|allgather|reduce_scatter|all_to_all|alltoall|broadcast|_coalescing)"),
      rule("optimizer", R"(optimizer|[Aa]dam|_multi_tensor|_single_tensor|zero_grad|step\b|_init_group|DistributedOptimizer)"),
      rule("gradients", R"(backward|autograd|grad_accum|main_grad|_allreduce_grads|grad_buffer|reduce_gradients)"),
      rule("parameters", R"(load_state_dict|_apply|\bto\b|\bcuda\b|\bnpu\b|init_weights|_initialize|reset_parameters|Parameter|param_buffer|__init__)"),
      rule("activations", R"(forward|_call_impl|checkpoint|recompute|attention|\bmlp\b|flash_attn)"),
  };
}

std::vector<CategoryRule> read_category_rules(const std::string& path) {
  // Rules files are a few lines: 1 MiB is plenty, and /dev/zero ends in a message.
  std::istringstream in(read_whole_file(path, "a category rules file", uint64_t{1} << 20));
  std::vector<CategoryRule> rules;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      throw Error(fmt::format("{}:{}: expected 'category = regex', got '{}'", path, n, line));
    }
    const std::string category = trim(line.substr(0, eq));
    const std::string pattern = trim(line.substr(eq + 1));
    rules.push_back(rule(category, pattern, fmt::format("{}:{}:", path, n)));
  }
  return rules;
}

Categorizer::Categorizer(const Trace& trace, std::vector<CategoryRule> rules)
    : trace_(trace), rules_(std::move(rules)), cache_(trace.stacks.size(), -2) {}

const std::string& Categorizer::category(uint32_t stack) const {
  if (stack == kNoStack || stack >= cache_.size()) return kOther;
  int& hit = cache_[stack];
  if (hit == -2) {
    hit = -1;
    for (uint32_t f : trace_.stacks[stack]) {
      if (f >= trace_.frames.size()) continue;
      const std::string text = trace_.frames[f].name + " " + trace_.frames[f].filename;
      for (size_t r = 0; r < rules_.size() && hit < 0; ++r) {
        if (rules_[r].regex.search(text)) hit = static_cast<int>(r);
      }
      if (hit >= 0) break;
    }
  }
  return hit >= 0 ? rules_[hit].category : kOther;
}

std::map<std::string, uint64_t> live_by_category(const Trace& t, const Categorizer& c, size_t index) {
  // Open addressing (address_map.h): one node allocation per event made this pass slow.
  AddressMap<std::pair<uint64_t, uint32_t>> live;  // addr → size, stack
  AddressSet allocated_in_trace;
  for (const Event& e : t.events) {
    if (e.action == Action::kAlloc) allocated_in_trace.insert(e.addr);
  }
  std::map<std::string, uint64_t> bytes;
  // Live at the end and never allocated in the trace: there from the start.
  for (const Segment& seg : t.segments) {
    for (const Block& b : seg.blocks) {
      if (b.state == BlockState::kActiveAllocated && !allocated_in_trace.contains(b.addr)) {
        bytes["before the trace"] += b.size;
      }
    }
  }
  const size_t end = index == SIZE_MAX ? 0 : std::min(index + 1, t.events.size());
  for (size_t i = 0; i < end; ++i) {
    const Event& e = t.events[i];
    if (e.action == Action::kAlloc) live[e.addr] = {e.size, e.stack};
    if (e.action == Action::kFreeRequested) live.erase(e.addr);
  }
  // Freed later by the trace without having been allocated in it: live since before it began.
  for (size_t i = end; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.action == Action::kFreeRequested && !allocated_in_trace.contains(e.addr)) {
      bytes["before the trace"] += e.size;
    }
  }
  live.for_each([&](uint64_t, const std::pair<uint64_t, uint32_t>& block) {
    bytes[c.category(block.second)] += block.first;
  });
  return bytes;
}

}  // namespace plumb::mem
