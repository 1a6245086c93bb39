#include "report/step_json_reporter.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/problem_list.h"
#include "common/error.h"
#include "step/classify.h"

namespace plumb::report {
namespace {

using nlohmann::json;
using step::CollectiveKind;

constexpr CollectiveKind kKinds[] = {
    CollectiveKind::kUnknown,   CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
    CollectiveKind::kAllGather, CollectiveKind::kAllToAll,  CollectiveKind::kSendRecv,
    CollectiveKind::kBroadcast, CollectiveKind::kReduce,    CollectiveKind::kBarrier};
constexpr step::Activity kActivities[] = {step::Activity::kCompute, step::Activity::kCommunication,
                                          step::Activity::kMemory};
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxStep = std::numeric_limits<int64_t>::max();

// NaN (unknown) as null; nlohmann would write null too, but a document kept in memory (the store)
// must say null as well.
json or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json step_json(const step::StepBreakdown& s) {
  return json{{"step", s.step},
              {"step_time_us", or_null(s.step_time_us)},
              {"compute_us", or_null(s.compute_us)},
              {"communication_us", or_null(s.communication_us)},
              {"exposed_communication_us", or_null(s.exposed_communication_us)},
              {"overlapped_us", or_null(s.overlapped_us)},
              {"memory_us", or_null(s.memory_us)},
              {"idle_us", or_null(s.idle_us)},
              {"preparing_us", or_null(s.preparing_us)},
              {"free_us", or_null(s.free_us)},
              {"stage_us", or_null(s.stage_us)},
              {"bubble_us", or_null(s.bubble_us)}};
}

json matching_json(const step::MatchSummary& m) {
  return json{{"instances", m.instances},
              {"matched", m.matched},
              {"partial", m.partial},
              {"unaligned", m.unaligned},
              {"resyncs", m.resyncs},
              {"by_sequence_number", m.by_sequence_number},
              {"by_call_order", m.by_call_order}};
}

json ranks_json(const std::vector<step::RankSteps>& ranks) {
  json out = json::array();
  for (const step::RankSteps& r : ranks) {
    json steps = json::array();
    for (const step::StepBreakdown& s : r.steps) steps.push_back(step_json(s));
    out.push_back({{"rank", r.rank},
                   {"source", r.source},
                   {"format", r.format},
                   {"steps", std::move(steps)}});
  }
  return out;
}

json collective_json(const step::CollectiveInstance& c) {
  return json{{"step", c.step},
              {"kind", step::kind_name(c.kind)},
              {"group", c.group},
              {"group_ranks", c.group_ranks},
              {"ranks_seen", c.ranks_seen},
              {"bytes", c.bytes},
              {"first_rank", c.first_rank},
              {"last_rank", c.last_rank},
              {"start_skew_us", or_null(c.start_skew_us)},
              {"waited_us", or_null(c.waited_us)},
              {"duration_us", or_null(c.duration_us)},
              {"busbw_gbps", or_null(c.busbw_gbps)},
              {"baseline_busbw_gbps", or_null(c.baseline_busbw_gbps)},
              {"baseline_layer", c.baseline_layer},
              {"exposed_us", or_null(c.exposed_us)},
              {"name", c.name}};
}

json step_plan_json(const std::vector<step::PlanRow>& plan) {
  json out = json::array();
  for (const step::PlanRow& p : plan) {
    out.push_back(
        {{"component", p.component},
         {"measured_us", or_null(p.measured_us)},
         {"predicted_us", or_null(p.predicted_us)},
         {"ratio", or_null(p.predicted_us > 0 ? p.measured_us / p.predicted_us : step::kNaN)}});
  }
  return out;
}

json swimlane_json(const step::StepResult& r) {
  json lanes = json::array();
  for (const step::Lane& lane : r.swimlane) {
    json intervals = json::array();
    for (const step::Lane::Interval& i : lane.intervals) {
      intervals.push_back({{"start_us", or_null(i.start_us)},
                           {"end_us", or_null(i.end_us)},
                           {"activity", activity_name(i.activity)}});
    }
    lanes.push_back({{"rank", lane.rank}, {"intervals", std::move(intervals)}});
  }
  return json{{"step", r.swimlane_step}, {"lanes", std::move(lanes)}};
}

// Every field read with its type checked; errors name the source and the JSON path
// (JsonFields, as the store's record reader).
class StepReader : JsonFields {
 public:
  explicit StepReader(std::string_view source) : JsonFields(source) {}
  step::StepResult read(const json& doc) const;

 private:
  // Each element of the list at parent.key, read by fn(element, "key[i]").
  template <typename T, typename Fn>
  std::vector<T> list(const json& parent, const std::string& path, const char* key, Fn fn) const {
    const json& items = array(parent, path, key);
    std::vector<T> out;
    out.reserve(items.size());
    ProblemList problems;  // every bad element, in one pass
    for (size_t i = 0; i < items.size(); ++i) {
      problems.attempt([&] {
        const std::string at_i = fmt::format("{}[{}]", at(path, key), i);
        if (!items[i].is_object()) fail(at_i, "expected an object, got " + shown(items[i]));
        out.push_back(fn(items[i], at_i));
      });
    }
    problems.throw_if_any();
    return out;
  }
  std::vector<std::string> texts(const json& parent, const char* key) const;
  std::vector<int> ints(const json& parent, const std::string& path, const char* key) const;
  int rank(const json& e, const std::string& path, const char* key) const {
    return static_cast<int>(integer(e, path, key, -1, kMaxInt));
  }
  int64_t step_number(const json& e, const std::string& path) const {
    return integer(e, path, "step", -1, kMaxStep);
  }
  step::StepBreakdown breakdown(const json& e, const std::string& path) const;
  step::RankSteps rank_steps(const json& e, const std::string& path) const;
  step::CollectiveInstance collective(const json& e, const std::string& path) const;
  step::Lane lane(const json& e, const std::string& path) const;
  CollectiveKind kind(const json& e, const std::string& path) const;
  step::Activity activity(const json& e, const std::string& path) const;
  void swimlane(const json& doc, step::StepResult& r) const;
  step::MatchSummary matching(const json& doc) const;
};

std::vector<std::string> StepReader::texts(const json& parent, const char* key) const {
  const json& items = array(parent, "", key);
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) {
      fail(fmt::format("{}[{}]", key, i), "expected a string, got " + shown(items[i]));
    }
    out.push_back(items[i].get<std::string>());
  }
  return out;
}

std::vector<int> StepReader::ints(const json& parent, const std::string& path,
                                  const char* key) const {
  const json& items = array(parent, path, key);
  std::vector<int> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& v = items[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxInt) {
      fail(fmt::format("{}[{}]", at(path, key), i),
           fmt::format("expected a whole number from 0 to {}, got {}", kMaxInt, shown(v)));
    }
    out.push_back(v.get<int>());
  }
  return out;
}

step::StepBreakdown StepReader::breakdown(const json& e, const std::string& path) const {
  step::StepBreakdown s;
  s.step = step_number(e, path);
  s.step_time_us = number_or_null(e, path, "step_time_us");
  s.compute_us = number_or_null(e, path, "compute_us");
  s.communication_us = number_or_null(e, path, "communication_us");
  s.exposed_communication_us = number_or_null(e, path, "exposed_communication_us");
  s.overlapped_us = number_or_null(e, path, "overlapped_us");
  s.memory_us = number_or_null(e, path, "memory_us");
  s.idle_us = number_or_null(e, path, "idle_us");
  // Added after the first records were stored: optional.
  if (e.contains("preparing_us")) s.preparing_us = number_or_null(e, path, "preparing_us");
  if (e.contains("free_us")) s.free_us = number_or_null(e, path, "free_us");
  if (e.contains("stage_us")) s.stage_us = number_or_null(e, path, "stage_us");
  if (e.contains("bubble_us")) s.bubble_us = number_or_null(e, path, "bubble_us");
  return s;
}

step::RankSteps StepReader::rank_steps(const json& e, const std::string& path) const {
  step::RankSteps r;
  r.rank = rank(e, path, "rank");
  r.source = text(e, path, "source");
  r.format = text(e, path, "format");
  r.steps = list<step::StepBreakdown>(
      e, path, "steps", [&](const json& s, const std::string& p) { return breakdown(s, p); });
  return r;
}

CollectiveKind StepReader::kind(const json& e, const std::string& path) const {
  const std::string name = text(e, path, "kind");
  std::string known;
  for (CollectiveKind k : kKinds) {
    if (step::kind_name(k) == name) return k;
    known += (known.empty() ? "" : ", ") + std::string(step::kind_name(k));
  }
  fail(at(path, "kind"), fmt::format("expected one of {}, got {}", known, shown(e["kind"])));
}

step::CollectiveInstance StepReader::collective(const json& e, const std::string& path) const {
  step::CollectiveInstance c;
  c.step = step_number(e, path);
  c.kind = kind(e, path);
  c.group = text(e, path, "group");
  c.group_ranks = ints(e, path, "group_ranks");
  c.ranks_seen = static_cast<int>(integer(e, path, "ranks_seen", 0, kMaxInt));
  c.bytes = whole(e, path, "bytes");
  c.first_rank = rank(e, path, "first_rank");
  c.last_rank = rank(e, path, "last_rank");
  c.start_skew_us = number_or_null(e, path, "start_skew_us");
  c.waited_us = number_or_null(e, path, "waited_us");
  c.duration_us = number_or_null(e, path, "duration_us");
  c.busbw_gbps = number_or_null(e, path, "busbw_gbps");
  c.baseline_busbw_gbps = number_or_null(e, path, "baseline_busbw_gbps");
  c.baseline_layer = text(e, path, "baseline_layer");
  c.exposed_us = number_or_null(e, path, "exposed_us");
  c.name = text(e, path, "name");
  return c;
}

step::Activity StepReader::activity(const json& e, const std::string& path) const {
  const std::string name = text(e, path, "activity");
  for (step::Activity a : kActivities) {
    if (activity_name(a) == name) return a;
  }
  fail(at(path, "activity"),
       "expected one of compute, communication, memory, got " + shown(e["activity"]));
}

step::Lane StepReader::lane(const json& e, const std::string& path) const {
  step::Lane l;
  l.rank = rank(e, path, "rank");
  l.intervals = list<
      step::Lane::Interval>(e, path, "intervals", [&](const json& i, const std::string& p) {
    return step::Lane::Interval{number(i, p, "start_us"), number(i, p, "end_us"), activity(i, p)};
  });
  return l;
}

step::StepResult StepReader::read(const json& doc) const {
  step::StepResult r;
  ProblemList problems;  // every bad field of the document, in one pass
  const auto field = [&](auto fn) { problems.attempt(fn); };
  field([&] { r.world_size = static_cast<int>(integer(doc, "", "world_size", -1, kMaxInt)); });
  field([&] {
    r.ranks = list<step::RankSteps>(
        doc, "", "ranks", [&](const json& e, const std::string& p) { return rank_steps(e, p); });
  });
  field([&] {
    r.collectives = list<step::CollectiveInstance>(
        doc, "", "collectives",
        [&](const json& e, const std::string& p) { return collective(e, p); });
  });
  field([&] {
    r.stragglers =
        list<step::Straggler>(doc, "", "stragglers", [&](const json& e, const std::string& p) {
          return step::Straggler{step_number(e, p), rank(e, p, "rank"),
                                 number_or_null(e, p, "waited_on_us")};
        });
  });
  field([&] {
    r.plan = list<step::PlanRow>(doc, "", "plan", [&](const json& e, const std::string& p) {
      return step::PlanRow{text(e, p, "component"), number_or_null(e, p, "measured_us"),
                           number_or_null(e, p, "predicted_us")};
    });
  });
  field([&] { r.notes = texts(doc, "notes"); });
  field([&] { r.baseline = text(doc, "", "baseline"); });
  field([&] { r.plan_source = text(doc, "", "plan_source"); });
  // Added with plumb plan --calibrate STEP_RECORD: optional, an object or null.
  if (doc.contains("plan_run") && doc["plan_run"].is_object()) r.plan_run = doc["plan_run"].dump();
  field([&] { swimlane(doc, r); });
  // Added after the first records were stored: optional.
  if (doc.contains("matching")) field([&] { r.matching = matching(doc); });
  problems.throw_if_any();
  return r;
}

step::MatchSummary StepReader::matching(const json& doc) const {
  const json& m = object(doc, "", "matching");
  const auto count = [&](const char* key) { return integer(m, "matching", key, 0, kMaxStep); };
  step::MatchSummary out;
  out.instances = count("instances");
  out.matched = count("matched");
  out.partial = count("partial");
  out.unaligned = count("unaligned");
  out.resyncs = count("resyncs");
  out.by_sequence_number = count("by_sequence_number");
  out.by_call_order = count("by_call_order");
  return out;
}

void StepReader::swimlane(const json& doc, step::StepResult& r) const {
  const json& swimlane = object(doc, "", "swimlane");
  r.swimlane_step = step_number(swimlane, "swimlane");
  r.swimlane = list<step::Lane>(swimlane, "swimlane", "lanes",
                                [&](const json& e, const std::string& p) { return lane(e, p); });
}

}  // namespace

std::string_view activity_name(step::Activity activity) {
  switch (activity) {
    case step::Activity::kCompute: return "compute";
    case step::Activity::kCommunication: return "communication";
    case step::Activity::kMemory: return "memory";
  }
  return "compute";
}

nlohmann::json step_to_json(const step::StepResult& r) {
  json collectives = json::array();
  for (const step::CollectiveInstance& c : r.collectives) collectives.push_back(collective_json(c));
  json stragglers = json::array();
  for (const step::Straggler& s : r.stragglers) {
    stragglers.push_back(
        {{"step", s.step}, {"rank", s.rank}, {"waited_on_us", or_null(s.waited_on_us)}});
  }
  return json{{"schema", step::kStepSchema},
              {"world_size", r.world_size},
              {"ranks", ranks_json(r.ranks)},
              {"collectives", std::move(collectives)},
              {"matching", matching_json(r.matching)},
              {"stragglers", std::move(stragglers)},
              {"plan", step_plan_json(r.plan)},
              {"notes", r.notes},
              {"baseline", r.baseline},
              {"plan_source", r.plan_source},
              {"plan_run", r.plan_run.empty() ? json() : json::parse(r.plan_run)},
              {"swimlane", swimlane_json(r)}};
}

step::StepResult step_from_json(const nlohmann::json& doc, std::string_view source) {
  const bool has_schema = doc.is_object() && doc.contains("schema") && doc["schema"].is_string();
  const std::string schema = has_schema ? doc["schema"].get<std::string>() : "";
  if (schema != step::kStepSchema) {
    throw Error(fmt::format("{}: schema '{}' is not a step record; expected {} (plumb step --json)",
                            source, schema, step::kStepSchema));
  }
  return StepReader(source).read(doc);
}

void StepJsonReporter::report(const step::StepResult& result, std::ostream& out) const {
  // Trace file names and kernel names are not always UTF-8: replace bad bytes, never fail.
  out << step_to_json(result).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace plumb::report
