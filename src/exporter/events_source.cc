#include "exporter/events_source.h"

#include <fmt/format.h>

#include <vector>

#include "common/error.h"
#include "common/stats.h"
#include "exporter/series.h"

namespace plumb::exporter {
namespace {

constexpr double kMedianPercentile = 50;

Labels rank_labels(const std::string& host, const std::pair<std::string, std::string>& key) {
  return {{series::kHost, host}, {"rank", key.first}, {series::kDevice, key.second}};
}

Labels with(Labels labels, const char* name, std::string value) {
  labels.emplace_back(name, std::move(value));
  return labels;
}

// Families in a fixed order, created on first use; the empty ones are dropped at the end.
struct FamilySet {
  Families& out;
  Family& get(const char* name, const char* help, const char* type = "gauge") {
    for (Family& f : out) {
      if (f.name == name) return f;
    }
    out.push_back({name, help, type, {}});
    return out.back();
  }
};

}  // namespace

void RollingMedian::add(double value, size_t window) {
  values_.push_back(value);
  while (values_.size() > window) values_.pop_front();
}

double RollingMedian::median() const {
  const std::vector<double> values(values_.begin(), values_.end());
  return percentile(values, kMedianPercentile);
}

EventsSource::EventsSource(EventsSourceOptions options)
    : options_(std::move(options)),
      tail_(options_.path),
      malformed_("malformed line(s)", options_.log, options_.now) {}

Families EventsSource::collect() {
  for (const TailLine& line : tail_.poll()) take(line);
  malformed_.flush();
  Families out;
  add_training(out);
  add_operators(out);
  add_busbw(out);
  add_counters(out);
  return out;
}

void EventsSource::take(const TailLine& line) {
  ++lines_;
  if (line.too_long) return malformed(line.number, "longer than 1 MiB, skipped");
  if (line.text.find_first_not_of(" \t") == std::string::npos) return;  // blank: not counted
  try {
    apply(parse_train_event(line.text));
  } catch (const Error& e) {
    malformed(line.number, e.what());
  }
}

RollingMedian* EventsSource::slot_for(std::map<std::string, RollingMedian>& map,
                                      const std::string& key) {
  const auto it = map.find(key);
  if (it != map.end()) return &it->second;
  if (keys_ >= options_.max_keys) return ++dropped_, nullptr;
  ++keys_;
  return &map[key];
}

RollingMedian* EventsSource::slot_for(std::map<CollectiveKey, RollingMedian>& map,
                                      const CollectiveKey& key) {
  const auto it = map.find(key);
  if (it != map.end()) return &it->second;
  if (keys_ >= options_.max_keys) return ++dropped_, nullptr;
  ++keys_;
  return &map[key];
}

void EventsSource::apply(const TrainEvent& event) {
  const std::pair<std::string, std::string> key{event.rank, event.device};
  auto it = ranks_.find(key);
  if (it == ranks_.end()) {
    if (keys_ >= options_.max_keys) return void(++dropped_);
    ++keys_;
    it = ranks_.emplace(key, RankState{}).first;
  }
  RankState& state = it->second;
  const size_t window = static_cast<size_t>(options_.median_window);
  state.last = event;
  state.last.operators.clear();
  state.last.collectives.clear();
  state.step_seconds.add(event.step_seconds, window);
  for (const auto& [name, seconds] : event.operators) {
    if (RollingMedian* slot = slot_for(state.operators, name)) slot->add(seconds, window);
  }
  for (const TrainCollective& c : event.collectives) {
    RollingMedian* slot = slot_for(state.busbw, CollectiveKey{c.layer, c.collective, c.bytes});
    if (slot) slot->add(c.busbw_bytes_per_second, window);
  }
}

void EventsSource::malformed(int64_t line, const std::string& what) {
  malformed_.add(fmt::format("events {}:{}: {}", tail_.path(), line, what));
}

void EventsSource::add_training(Families& out) const {
  FamilySet set{out};
  for (const auto& [key, state] : ranks_) {
    const Labels labels = rank_labels(options_.host, key);
    const TrainEvent& e = state.last;
    const double median = state.step_seconds.median();
    set.get(series::kStep, "Last step number the job reported").samples.push_back(
        {labels, static_cast<double>(e.step), ""});
    set.get(series::kStepSeconds, "Last step's time, seconds").samples.push_back(
        {labels, e.step_seconds, ""});
    set.get(series::kStepMedian, "Median step time over the last --median-window steps, seconds")
        .samples.push_back({labels, median, ""});
    set.get(series::kStepRatio, "Last step time / its rolling median").samples.push_back(
        {labels, e.step_seconds / median, ""});
    if (e.tokens) {
      set.get(series::kTokensPerSecond, "Last step's tokens / its step time").samples.push_back(
          {labels, *e.tokens / e.step_seconds, ""});
    }
    if (e.allocated_bytes) {
      set.get(series::kMemAllocated, "Device memory allocated by tensors at the step's end, bytes")
          .samples.push_back({labels, *e.allocated_bytes, ""});
    }
    if (e.reserved_bytes) {
      set.get(series::kMemReserved, "Device memory reserved by the allocator, bytes")
          .samples.push_back({labels, *e.reserved_bytes, ""});
    }
    if (e.peak_bytes) {
      set.get(series::kMemPeak, "Peak device memory allocated in the step, bytes")
          .samples.push_back({labels, *e.peak_bytes, ""});
    }
  }
}

void EventsSource::add_operators(Families& out) const {
  FamilySet set{out};
  for (const auto& [key, state] : ranks_) {
    for (const auto& [name, rolling] : state.operators) {
      const Labels labels = with(rank_labels(options_.host, key), "operator", name);
      const double median = rolling.median();
      set.get(series::kOpSeconds, "Operator's duration in the last step it ran, seconds")
          .samples.push_back({labels, rolling.last(), ""});
      set.get(series::kOpMedian, "Operator's median duration over the last --median-window steps")
          .samples.push_back({labels, median, ""});
      if (median > 0) {
        set.get(series::kOpRatio, "Operator's last duration / its rolling median")
            .samples.push_back({labels, rolling.last() / median, ""});
      }
    }
  }
}

void EventsSource::add_busbw(Families& out) const {
  FamilySet set{out};
  for (const auto& [key, state] : ranks_) {
    for (const auto& [ckey, rolling] : state.busbw) {
      const auto& [layer, collective, bytes] = ckey;
      Labels labels{{series::kHost, options_.host}, {"rank", key.first}, {"layer", layer},
                    {"collective", collective}, {"bytes", std::to_string(bytes)},
                    {"source", "events"}};
      set.get(series::kBusbw,
              "Bus bandwidth of a collective (nccl-tests busbw), bytes per second; events: the "
              "median over the last --median-window calls")
          .samples.push_back({std::move(labels), rolling.median(), ""});
    }
  }
}

void EventsSource::add_counters(Families& out) const {
  const Labels labels{{series::kHost, options_.host}};
  out.push_back({series::kEventLines, "Lines read from the --events file", "counter",
                 {{labels, static_cast<double>(lines_), ""}}});
  out.push_back({series::kEventMalformed, "Lines of the --events file skipped as malformed",
                 "counter", {{labels, static_cast<double>(malformed_.count()), ""}}});
  out.push_back({series::kEventDropped,
                 "Events values not kept: a new rank, operator or collective past the key limit",
                 "counter", {{labels, static_cast<double>(dropped_), ""}}});
}

}  // namespace plumb::exporter
