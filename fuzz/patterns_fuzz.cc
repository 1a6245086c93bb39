// libFuzzer target: any bytes as a user's pattern (the first line: plumb step's and plumb mem's
// --step-regex, a category rule, a HyperNode's regexMatch all compile through plumb::Regex) and a
// line of text (the rest), and the text through the fixed patterns outside plumb run: plumb mem's
// category rules, the exporter's durations and alert templates, SLURM_TASKS_PER_NODE. plumb run's
// own patterns and line scanner are fuzz_run_patterns' (supervise/). Compiling must succeed or
// throw plumb::Error; matching must return (RE2: linear in the text, no recursion per
// character), and a match's groups must lie inside the text.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/regex.h"
#include "exporter/rules.h"
#include "mem/categories.h"
#include "sysinfo/slurm_job.h"

namespace {

void check_groups(std::string_view text, const std::array<std::string_view, 4>& groups) {
  for (std::string_view g : groups) {
    if (g.data() == nullptr) continue;
    if (g.data() < text.data() || g.data() + g.size() > text.data() + text.size()) std::abort();
  }
}

void user_pattern(std::string_view pattern, std::string_view text) {
  try {
    const plumb::Regex re(pattern, "fuzz");
    std::array<std::string_view, 4> groups;
    if (re.search(text, groups)) check_groups(text, groups);
    if (re.match(text, groups)) check_groups(text, groups);
  } catch (const plumb::Error&) {
    // refused with RE2's reason: fine
  }
}

void fixed_patterns(std::string_view text) {
  static const std::vector<plumb::mem::CategoryRule> kRules = plumb::mem::default_category_rules();
  for (const plumb::mem::CategoryRule& rule : kRules) (void)rule.regex.search(text);
  (void)plumb::exporter::duration_seconds(text);
  (void)plumb::exporter::expand_template(text, {{"host", "node-1"}}, 1.5);
  try {
    (void)plumb::sysinfo::total_tasks(std::string(text));
  } catch (const plumb::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t newline = all.find('\n');
  const std::string_view pattern = all.substr(0, newline);
  const std::string_view text = newline == std::string_view::npos ? all : all.substr(newline + 1);
  user_pattern(pattern, text);
  fixed_patterns(text);
  return 0;
}
