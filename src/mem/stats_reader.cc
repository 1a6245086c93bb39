#include "mem/stats_reader.h"

#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <utility>

#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"
#include "mem/input.h"

namespace plumb::mem {
namespace {

using nlohmann::json;

// Lines of problems listed before the rest are only counted: a file with one mistake on every
// line still gives a readable message.
constexpr size_t kMaxProblems = 20;
// How much of a file is read to recognise the format: a memory_stats() line is a few KiB.
constexpr size_t kSniffBytes = 1 << 20;
// How much of a bad value a message quotes.
constexpr size_t kMaxQuoted = 40;

struct Field {
  const char* key;
  uint64_t StatsPoint::*member;
};

// The keys read from every dump: all of them are in memory_stats() since PyTorch 1.4.
constexpr Field kFields[] = {
    {"allocated_bytes.all.current", &StatsPoint::allocated},
    {"allocated_bytes.all.peak", &StatsPoint::allocated_peak},
    {"active_bytes.all.current", &StatsPoint::active},
    {"active_bytes.all.peak", &StatsPoint::active_peak},
    {"reserved_bytes.all.current", &StatsPoint::reserved},
    {"reserved_bytes.all.peak", &StatsPoint::reserved_peak},
    {"inactive_split_bytes.all.current", &StatsPoint::inactive_split},
    {"segment.all.current", &StatsPoint::segments},
    {"num_alloc_retries", &StatsPoint::alloc_retries},
    {"num_ooms", &StatsPoint::ooms},
};

std::string quoted(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxQuoted) text = text.substr(0, kMaxQuoted) + "...";
  return text;
}

std::optional<uint64_t> non_negative_integer(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

// The first line that is neither blank nor a '#' comment, with its number (0: none).
std::string_view first_content_line(std::string_view text, size_t& pos, size_t& number) {
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    const size_t first = raw.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && raw[first] != '#') return raw;
  }
  return {};
}

class StatsReader {
 public:
  explicit StatsReader(const std::string& name) { series_.source = name; }

  void line(std::string_view raw, size_t number) {
    std::string why;
    const json j = parse_json_or_discarded(raw, why);
    if (j.is_discarded()) return problem(number, why);
    if (!j.is_object()) return problem(number, "expected a JSON object (one memory_stats() dict per line)");
    StatsPoint p;
    for (const Field& f : kFields) p.*f.member = field(j, f.key, number);
    p.step = step(j, number);
    series_.points.push_back(p);
  }

  StatsSeries finish() {
    if (problems_.empty() && series_.points.empty()) {
      throw Error(fmt::format("{}: no memory_stats() dumps", series_.source));
    }
    if (problems_.empty()) return std::move(series_);
    if (problems_.size() > kMaxProblems) {
      const size_t more = problems_.size() - kMaxProblems;
      problems_.resize(kMaxProblems);
      problems_.push_back(fmt::format("{}: {} more problem(s)", series_.source, more));
    }
    throw Error(join(problems_, "\n"));
  }

 private:
  void problem(size_t number, const std::string& what) {
    problems_.push_back(fmt::format("{}:{}: {}", series_.source, number, what));
  }

  uint64_t field(const json& j, const char* key, size_t number) {
    const auto it = j.find(key);
    if (it == j.end()) {
      problem(number, fmt::format("missing '{}' (a torch.cuda.memory_stats() key)", key));
      return 0;
    }
    const std::optional<uint64_t> v = non_negative_integer(*it);
    if (!v) problem(number, fmt::format("'{}' must be a non-negative integer, got {}", key, quoted(*it)));
    return v.value_or(0);
  }

  // Every dump has a "step" or none has (then the dumps count 1, 2, ...); the first decides.
  uint64_t step(const json& j, size_t number) {
    const auto it = j.find("step");
    if (!first_line_) first_line_ = {number, it != j.end()};
    const auto [first, with_step] = *first_line_;
    if (!with_step) {
      if (it != j.end()) {
        problem(number, fmt::format("'step' given, but the first dump (line {}) has none: give every "
                                    "dump a step or none", first));
      }
      return series_.points.size() + 1;
    }
    if (it == j.end()) {
      problem(number, fmt::format("missing 'step' (the first dump, line {}, has one: give every dump "
                                  "a step or none)", first));
      return 0;
    }
    const std::optional<uint64_t> v = non_negative_integer(*it);
    if (!v) {
      problem(number, fmt::format("'step' must be a non-negative integer, got {}", quoted(*it)));
    } else if (last_step_ && *v <= last_step_->second) {
      problem(number, fmt::format("'step' {} does not follow step {} (line {}): steps must increase", *v,
                                  last_step_->second, last_step_->first));
    } else {
      last_step_ = {number, *v};
    }
    return v.value_or(0);
  }

  StatsSeries series_;
  std::vector<std::string> problems_;
  std::optional<std::pair<size_t, bool>> first_line_;      // line, whether it has a step
  std::optional<std::pair<size_t, uint64_t>> last_step_;   // line, step
};

// The sum of the rises of a counter over the series (the first dump rises from 0, a reset restarts
// it) and the first step where it rose.
void count_rises(const std::vector<StatsPoint>& points, uint64_t StatsPoint::*counter, uint64_t& total,
                 std::optional<uint64_t>& first_step) {
  uint64_t before = 0;
  for (const StatsPoint& p : points) {
    const uint64_t now = p.*counter;
    if (now > before) {
      total += now - before;
      if (!first_step) first_step = p.step;
    }
    before = now;
  }
}

void find_peaks(StatsAnalysis& a) {
  for (const StatsPoint& p : a.timeline) {
    const uint64_t allocated = std::max(p.allocated, p.allocated_peak);
    const uint64_t reserved = std::max(p.reserved, p.reserved_peak);
    if (allocated > a.peak.allocated) {
      a.peak.allocated = allocated;
      a.peak_allocated_step = p.step;
    }
    if (reserved > a.peak.reserved) {
      a.peak.reserved = reserved;
      a.peak_reserved_step = p.step;
    }
    a.peak.active = std::max({a.peak.active, p.active, p.active_peak});
    a.peak.inactive_split = std::max(a.peak.inactive_split, p.inactive_split);
    a.peak.segments = std::max(a.peak.segments, p.segments);
  }
}

// A dump taken at the same point of every step sees the same phase of it: allocated at the dump
// is that step's baseline, and every dump is a complete step (none is cut short, unlike a trace's
// last step). The fit is over the step numbers, so dumps every k steps give bytes per step.
Creep stats_creep(const std::vector<StatsPoint>& points, uint64_t peak_allocated) {
  std::vector<uint64_t> step_min, step_peak;
  std::vector<double> x;
  for (const StatsPoint& p : points) {
    step_min.push_back(p.allocated);
    step_peak.push_back(p.allocated_peak);
    x.push_back(static_cast<double>(p.step));
  }
  return creep_from_minima(std::move(step_min), std::move(step_peak), peak_allocated, x);
}

}  // namespace

bool looks_like_memory_stats(std::string_view text) {
  size_t pos = 0, number = 0;
  const std::string_view line = first_content_line(text, pos, number);
  std::string problem;  // not memory_stats() dumps, whatever it is
  const json j = parse_json_or_discarded(line, problem);
  if (j.is_discarded() || !j.is_object()) return false;
  for (const auto& [key, value] : j.items()) {
    if (std::string_view(key).ends_with(".all.current")) return true;
  }
  return false;
}

bool is_memory_stats(const InputBytes& input) {
  const std::string_view bytes = input.bytes();
  if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) return false;  // a pickle
  return looks_like_memory_stats(bytes.substr(0, kSniffBytes));
}

// Only a regular file is sniffed: a FIFO or a pipe can be read once only (the caller reads it
// with load_input and asks looks_like_memory_stats of its bytes).
bool is_memory_stats_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in || in.peek() == 0x80) return false;  // unreadable, or a pickle
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return looks_like_memory_stats(head);
}

StatsSeries parse_memory_stats(std::string_view text, const std::string& name) {
  StatsReader reader(name);
  size_t pos = 0, number = 0;
  for (;;) {
    const std::string_view line = first_content_line(text, pos, number);
    if (line.empty()) break;
    reader.line(line, number);
  }
  return reader.finish();
}

StatsSeries parse_memory_stats(const InputBytes& input) {
  input.populate();
  return parse_memory_stats(input.bytes(), input.name());
}

StatsSeries read_memory_stats(const std::string& path) { return parse_memory_stats(load_input(path)); }

StatsAnalysis analyze_stats(const StatsSeries& series) {
  if (series.points.empty()) throw Error(fmt::format("{}: no memory_stats() dumps", series.source));
  StatsAnalysis a;
  a.source = series.source;
  a.timeline = series.points;
  find_peaks(a);
  a.fragmentation = a.peak.reserved > 0
                        ? 1 - static_cast<double>(a.peak.active) / static_cast<double>(a.peak.reserved)
                        : 0;
  const StatsPoint& end = a.timeline.back();
  a.end_free = end.reserved > end.active ? end.reserved - end.active : 0;
  a.creep = stats_creep(a.timeline, a.peak.allocated);
  count_rises(a.timeline, &StatsPoint::alloc_retries, a.alloc_retries, a.first_retry_step);
  count_rises(a.timeline, &StatsPoint::ooms, a.ooms, a.first_oom_step);
  return a;
}

}  // namespace plumb::mem
