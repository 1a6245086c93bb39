#include "mem/train_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "common/error.h"
#include "common/input_file.h"
#include "common/problem_list.h"
#include "exporter/train_events.h"

namespace plumb::mem {
namespace {

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

std::optional<int64_t> whole_number(const std::string& text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Rank 2 before rank 10; names that are not whole numbers after them, as text.
bool rank_before(const RankSeries& a, const RankSeries& b) {
  const auto x = whole_number(a.rank), y = whole_number(b.rank);
  if (x && y) return *x < *y;
  if (x || y) return x.has_value();
  return a.rank < b.rank;
}

class TrainMemoryReader {
 public:
  explicit TrainMemoryReader(std::string name) { series_.source = std::move(name); }

  void line(std::string_view text, size_t number, bool torn) {
    try {
      add(exporter::parse_train_event(text), number);
    } catch (const Error& e) {
      if (!torn) problems_.add(fmt::format("{}:{}: {}", series_.source, number, e.what()));
    }
  }

  MemorySeries finish() {
    problems_.throw_if_any();
    if (series_.lines == 0) {
      throw Error(fmt::format("{}: no plumb.train-events/1 lines (docs/train-events.md)",
                              series_.source));
    }
    if (by_rank_.empty()) {
      throw Error(fmt::format("{}: none of its {} line(s) has memory.allocated_bytes: the memory "
                              "baseline needs \"memory\": {{\"allocated_bytes\": ...}} on every "
                              "step (docs/train-events.md)", series_.source, series_.lines));
    }
    for (auto& [rank, points] : by_rank_) series_.ranks.push_back({rank, std::move(points)});
    std::sort(series_.ranks.begin(), series_.ranks.end(), rank_before);
    return std::move(series_);
  }

 private:
  void add(const exporter::TrainEvent& e, size_t number) {
    ++series_.lines;
    if (!e.allocated_bytes) {
      ++series_.without_memory;
      if (!e.checkpoint.empty()) ++series_.unmarked_checkpoints;
      return;
    }
    by_rank_[e.rank].push_back(
        {e.step, *e.allocated_bytes, e.reserved_bytes, e.peak_bytes, e.checkpoint, number});
  }

  MemorySeries series_;
  std::map<std::string, std::vector<MemoryPoint>> by_rank_;
  ProblemList problems_;
};

}  // namespace

MemorySeries parse_memory_series(std::string_view text, const std::string& name) {
  TrainMemoryReader reader(name);
  size_t pos = 0, number = 0;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const bool torn = end == std::string_view::npos;
    const std::string_view line = text.substr(pos, torn ? std::string_view::npos : end - pos);
    ++number;
    if (!blank(line)) reader.line(line, number, torn);
    pos = torn ? text.size() : end + 1;
  }
  return reader.finish();
}

MemorySeries read_memory_series(const std::string& path) {
  return parse_memory_series(read_whole_file(path, "plumb.train-events/1 lines"), path);
}

}  // namespace plumb::mem
