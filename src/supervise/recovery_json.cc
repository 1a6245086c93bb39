#include "supervise/recovery_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "common/json.h"
#include "common/problem_list.h"
#include "common/stats.h"

namespace plumb::supervise {
namespace {

using nlohmann::json;
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> median_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return percentile(v, 50);
}

std::optional<double> max_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  return *std::max_element(v.begin(), v.end());
}

json step_json(const RecoveryStepTiming& s) {
  return {{"name", s.name}, {"seconds", s.seconds}, {"ok", s.ok}, {"detail", s.detail}};
}

json recovery_json(const Recovery& r) {
  json steps = json::array();
  for (const RecoveryStepTiming& s : r.steps) steps.push_back(step_json(s));
  return {{"attempt", r.attempt},
          {"kind", r.kind},
          {"detail", r.detail},
          {"detect_seconds", r.detect_seconds},
          {"steps", steps},
          {"recovery_seconds", r.recovery_seconds()},
          {"backoff_seconds", r.backoff_seconds},
          {"restart_to_first_step_seconds", or_null(r.restart_to_first_step_seconds)},
          {"downtime_seconds", or_null(r.downtime_seconds)},
          {"last_step", or_null(r.last_step)},
          {"checkpoint_step", or_null(r.checkpoint_step)},
          {"first_step_after", or_null(r.first_step_after)},
          {"steps_lost", or_null(r.steps_lost)},
          {"resumed_after_checkpoint", or_null(r.resumed_after_checkpoint)}};
}

json totals_json(const RecoveryTotals& t) {
  return {{"failures", t.failures},
          {"restarts", t.restarts},
          {"detect_seconds_median", or_null(t.detect_median)},
          {"detect_seconds_max", or_null(t.detect_max)},
          {"recovery_seconds_median", or_null(t.recovery_median)},
          {"recovery_seconds_max", or_null(t.recovery_max)},
          {"downtime_seconds_median", or_null(t.downtime_median)},
          {"downtime_seconds_max", or_null(t.downtime_max)},
          {"steps_lost", t.steps_lost},
          {"resumed_after_checkpoint_ratio", or_null(t.resumed_ratio)}};
}

// Every field read with its type checked; errors name the record and the JSON path.
class RecoveryReader : JsonFields {
 public:
  explicit RecoveryReader(const std::string& what) : JsonFields(what) {}

  RecoveryBaseline read(const json& doc) const {
    if (!doc.is_object()) fail("plumb.recovery/1", "expected an object, got " + shown(doc));
    const std::string schema = text(doc, "", "schema");
    if (schema != kRecoverySchema) {
      fail("schema", fmt::format("expected \"{}\", got {}", kRecoverySchema, shown(json(schema))));
    }
    RecoveryBaseline b;
    b.command = strings(doc, "command");
    b.host = text(doc, "", "host");
    b.started = text(doc, "", "started");
    b.wall_seconds = number(doc, "", "wall_seconds");
    b.attempts = static_cast<int>(integer(doc, "", "attempts", 0, kMaxInt));
    b.result = text(doc, "", "result");
    b.drill = boolean(doc, "", "drill");
    b.faults_injected = static_cast<int>(integer(doc, "", "faults_injected", 0, kMaxInt));
    const json& kinds = object(doc, "", "failures_by_kind");
    for (const auto& [kind, n] : kinds.items()) {
      b.failures_by_kind[kind] =
          static_cast<int>(integer(kinds, "failures_by_kind", kind.c_str(), 0, kMaxInt));
    }
    const json& list = array(doc, "", "recoveries");
    for (size_t i = 0; i < list.size(); ++i) {
      b.recoveries.push_back(recovery(list[i], fmt::format("recoveries[{}]", i)));
    }
    return b;
  }

 private:
  bool boolean(const json& parent, const std::string& path, const char* key) const {
    const json& v = member(parent, path, key);
    if (!v.is_boolean()) fail(at(path, key), "expected true or false, got " + shown(v));
    return v.get<bool>();
  }

  std::vector<std::string> strings(const json& doc, const char* key) const {
    const json& list = array(doc, "", key);
    std::vector<std::string> out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) {
        fail(fmt::format("{}[{}]", key, i), "expected a string, got " + shown(list[i]));
      }
      out.push_back(list[i].get<std::string>());
    }
    return out;
  }

  std::optional<double> seconds_or_null(const json& e, const std::string& path,
                                        const char* key) const {
    if (member(e, path, key).is_null()) return std::nullopt;
    return number(e, path, key);
  }

  std::optional<int64_t> step_or_null(const json& e, const std::string& path,
                                      const char* key) const {
    if (member(e, path, key).is_null()) return std::nullopt;
    return integer(e, path, key, kLowest, kHighest);
  }

  std::optional<bool> boolean_or_null(const json& e, const std::string& path,
                                      const char* key) const {
    if (member(e, path, key).is_null()) return std::nullopt;
    return boolean(e, path, key);
  }

  RecoveryStepTiming step(const json& e, const std::string& path) const {
    if (!e.is_object()) fail(path, "expected an object, got " + shown(e));
    return {text(e, path, "name"), number(e, path, "seconds"), boolean(e, path, "ok"),
            text(e, path, "detail")};
  }

  Recovery recovery(const json& e, const std::string& path) const {
    if (!e.is_object()) fail(path, "expected an object, got " + shown(e));
    Recovery r;
    r.attempt = static_cast<int>(integer(e, path, "attempt", 0, kMaxInt));
    r.kind = text(e, path, "kind");
    r.detail = text(e, path, "detail");
    r.detect_seconds = number(e, path, "detect_seconds");
    const json& steps = array(e, path, "steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      r.steps.push_back(step(steps[i], fmt::format("{}.steps[{}]", path, i)));
    }
    r.backoff_seconds = number(e, path, "backoff_seconds");
    r.restart_to_first_step_seconds = seconds_or_null(e, path, "restart_to_first_step_seconds");
    r.downtime_seconds = seconds_or_null(e, path, "downtime_seconds");
    r.last_step = step_or_null(e, path, "last_step");
    r.checkpoint_step = step_or_null(e, path, "checkpoint_step");
    r.first_step_after = step_or_null(e, path, "first_step_after");
    r.steps_lost = step_or_null(e, path, "steps_lost");
    r.resumed_after_checkpoint = boolean_or_null(e, path, "resumed_after_checkpoint");
    return r;
  }
};

}  // namespace

RecoveryTotals recovery_totals(const RecoveryBaseline& b) {
  RecoveryTotals t;
  t.failures = static_cast<int>(b.recoveries.size());
  t.restarts = std::max(0, b.attempts - 1);
  std::vector<double> detect;
  std::vector<double> recovery;
  std::vector<double> downtime;
  int resumed = 0;
  int resumed_known = 0;
  for (const Recovery& r : b.recoveries) {
    detect.push_back(r.detect_seconds);
    recovery.push_back(r.recovery_seconds());
    if (r.downtime_seconds) downtime.push_back(*r.downtime_seconds);
    if (r.steps_lost) t.steps_lost += *r.steps_lost;
    if (r.resumed_after_checkpoint) {
      ++resumed_known;
      resumed += *r.resumed_after_checkpoint ? 1 : 0;
    }
  }
  t.detect_median = median_of(detect);
  t.detect_max = max_of(detect);
  t.recovery_median = median_of(recovery);
  t.recovery_max = max_of(recovery);
  t.downtime_median = median_of(downtime);
  t.downtime_max = max_of(downtime);
  if (resumed_known > 0) t.resumed_ratio = static_cast<double>(resumed) / resumed_known;
  return t;
}

nlohmann::json recovery_to_json(const RecoveryBaseline& b) {
  json recoveries = json::array();
  for (const Recovery& r : b.recoveries) recoveries.push_back(recovery_json(r));
  json kinds = json::object();
  for (const auto& [kind, n] : b.failures_by_kind) kinds[kind] = n;
  json doc = {{"schema", kRecoverySchema},
          {"command", b.command},
          {"host", b.host},
          {"started", b.started},
          {"wall_seconds", b.wall_seconds},
          {"attempts", b.attempts},
          {"result", b.result},
          {"drill", b.drill},
          {"faults_injected", b.faults_injected},
          {"failures_by_kind", kinds},
          {"recoveries", recoveries},
          {"totals", totals_json(recovery_totals(b))}};
  if (b.job) doc["job"] = sysinfo::slurm_job_json(*b.job);
  return doc;
}

RecoveryBaseline recovery_from_json(const nlohmann::json& doc, const std::string& what) {
  return RecoveryReader(what).read(doc);
}

}  // namespace plumb::supervise
