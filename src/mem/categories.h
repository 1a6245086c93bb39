// What an allocation is for, from its call stack: parameters, gradients, optimizer state,
// activations, communication buffers, or other. Rules are tried in order on each frame, innermost
// first; the first rule matching any frame decides. Defaults cover PyTorch, Megatron-LM,
// DeepSpeed, torch_npu and NCCL/HCCL names; --category-rules replaces them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/regex.h"
#include "mem/trace.h"

namespace plumb::mem {

inline constexpr const char* kCategories[] = {"parameters",    "gradients", "optimizer",
                                              "activations",   "communication", "other"};

struct CategoryRule {
  std::string category;
  std::string pattern;  // an RE2 pattern (common/regex.h), searched in "function filename"
  Regex regex;
};

std::vector<CategoryRule> default_category_rules();

// Reads "category = regex" lines ('#' comments); errors name the file and line, a pattern RE2
// refuses with RE2's reason: "rules.txt:3: 'kv(': not a valid regular expression (missing ):
// kv()".
std::vector<CategoryRule> read_category_rules(const std::string& path);

class Categorizer {
 public:
  Categorizer(const Trace& trace, std::vector<CategoryRule> rules);
  // The category of an event's stack ("other" without a stack or a match); cached per stack.
  const std::string& category(uint32_t stack) const;

 private:
  const Trace& trace_;
  std::vector<CategoryRule> rules_;
  mutable std::vector<int> cache_;  // per stack: rule index, −1 other, −2 not yet known
};

// Live bytes by category just after event `index` (index = SIZE_MAX: before any event). Blocks
// allocated before the trace began count as "before the trace".
std::map<std::string, uint64_t> live_by_category(const Trace& t, const Categorizer& c, size_t index);

}  // namespace plumb::mem
