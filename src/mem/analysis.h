// `plumb mem analyze`: everything the analyses say of one trace, as plain data for the reporters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mem/categories.h"
#include "mem/leak_sites.h"
#include "mem/oom.h"
#include "mem/steps.h"
#include "mem/timeline.h"
#include "mem/trace.h"

namespace plumb::mem {

struct AnalyzeOptions {
  std::optional<std::string> step_regex;  // --step-regex, an RE2 pattern (common/regex.h)
  std::vector<CategoryRule> rules = default_category_rules();
  // The analyses that do not need each other run on this many threads (1 or 2; 1: one after the
  // other). The result is the same either way.
  int threads = 2;
};

// Fragmentation at one moment: reserved bytes the program does not hold, and how scattered.
struct Fragmentation {
  uint64_t reserved = 0;
  uint64_t allocated = 0;
  uint64_t free = 0;                 // reserved − live blocks
  uint64_t largest_free_block = 0;
  double scattered = 0;              // 1 − largest free block / free (0: one block)

  bool operator==(const Fragmentation&) const = default;
};

struct StepFigures {
  size_t first_event = 0;
  uint64_t min_allocated = 0;
  uint64_t peak_allocated = 0;
  uint64_t peak_reserved = 0;

  bool operator==(const StepFigures&) const = default;
};

struct Analysis {
  std::string source;
  size_t events = 0;
  bool has_time = false;
  Timeline timeline;
  Steps steps;
  std::vector<StepFigures> per_step;
  Creep creep;
  std::vector<LeakSite> grew;                    // with a leak verdict: the sites that grew
  std::map<std::string, uint64_t> live_at_peak;  // category → bytes at the allocated peak
  Fragmentation at_peak;                         // at the reserved peak
  Fragmentation at_end;
  double fragmentation = 0;                      // 1 − peak active / peak reserved
  std::vector<Oom> ooms;

  bool operator==(const Analysis&) const = default;
};

Analysis analyze(const Trace& t, const AnalyzeOptions& o);

}  // namespace plumb::mem
