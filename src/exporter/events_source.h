// The training events source: tails a plumb.train-events/1 file (--events FILE) and exports
// each rank's step time with its rolling median and ratio, tokens/s, memory, per-operator
// durations with theirs, and the bus bandwidth of the collectives the job timed
// (docs/train-events.md). A malformed line — a wrong type, or a value no measurement can be
// (value_bounds.h) — is counted, logged (at most once per kLogEverySeconds, malformed_log.h) and
// skipped; it never fails a collect.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "exporter/file_tail.h"
#include "exporter/malformed_log.h"
#include "exporter/source.h"
#include "exporter/train_events.h"

namespace plumb::exporter {

inline constexpr size_t kMaxEventKeys = 2000;   // ranks + operators + collective keys kept

struct EventsSourceOptions {
  std::string host;
  std::string path;
  double interval_seconds = 1;
  int median_window = 100;
  size_t max_keys = kMaxEventKeys;
  std::function<void(const std::string&)> log;  // one line, no newline; default: standard error
  std::function<double()> now;                  // seconds; default: the steady clock
};

// The last `window` values and their median (common/stats.h's percentile 50: the mean of the two
// middle values for an even count).
class RollingMedian {
 public:
  void add(double value, size_t window);
  double last() const { return values_.back(); }
  double median() const;

 private:
  std::deque<double> values_;
};

class EventsSource : public Source {
 public:
  explicit EventsSource(EventsSourceOptions options);
  std::string name() const override { return "events"; }
  double interval_seconds() const override { return options_.interval_seconds; }
  Families collect() override;

 private:
  using CollectiveKey = std::tuple<std::string, std::string, uint64_t>;  // layer, collective, bytes

  struct RankState {
    TrainEvent last;  // operators and collectives cleared: kept in the maps below
    RollingMedian step_seconds;
    std::map<std::string, RollingMedian> operators;
    std::map<CollectiveKey, RollingMedian> busbw;
  };

  void take(const TailLine& line);
  void apply(const TrainEvent& event);
  RollingMedian* slot_for(std::map<std::string, RollingMedian>& map, const std::string& key);
  RollingMedian* slot_for(std::map<CollectiveKey, RollingMedian>& map, const CollectiveKey& key);
  void malformed(int64_t line, const std::string& what);
  void add_training(Families& out) const;
  void add_operators(Families& out) const;
  void add_busbw(Families& out) const;
  void add_counters(Families& out) const;

  EventsSourceOptions options_;
  FileTail tail_;
  std::map<std::pair<std::string, std::string>, RankState> ranks_;  // (rank, device)
  size_t keys_ = 0;
  uint64_t lines_ = 0;
  MalformedLog malformed_;
  uint64_t dropped_ = 0;
};

}  // namespace plumb::exporter
