#include "exporter/train_events.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "comm/bandwidth.h"
#include "comm/collective.h"
#include "common/error.h"
#include "common/json.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "exporter/value_bounds.h"

namespace plumb::exporter {
namespace {

using nlohmann::json;

std::string type_name(const json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_null()) return "null";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "a number";
}

[[noreturn]] void wrong(std::string_view field, const json& value, std::string_view expected) {
  std::string shown = type_name(value);
  if (value.is_number()) shown = "'" + shorten(value.dump()) + "'";
  throw Error(fmt::format("'{}' is {}, expected {}", field, shown, expected));
}

double number(const json& value, std::string_view field) {
  const char* expected = "a number of at least 0";
  if (!value.is_number()) wrong(field, value, expected);
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0) wrong(field, value, expected);
  return v;
}

// A number from `least` to `most` (value_bounds.h): what no measurement can be is malformed.
double between(const json& value, std::string_view field, double least, double most) {
  const std::string expected =
      fmt::format("a number from {} to {}", bound_text(least), bound_text(most));
  if (!value.is_number()) wrong(field, value, expected);
  const double v = value.get<double>();
  if (!(v >= least && v <= most)) wrong(field, value, expected);  // NaN fails too
  return v;
}

int64_t whole(const json& value, std::string_view field, int64_t least, int64_t most) {
  const std::string expected = fmt::format("a whole number from {} to {}", least, most);
  if (!value.is_number_integer()) wrong(field, value, expected);
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(most)) {
    wrong(field, value, expected);
  }
  const int64_t v = value.get<int64_t>();
  if (v < least || v > most) wrong(field, value, expected);
  return v;
}

std::string text(const json& value, std::string_view field) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();  // "rank": 0 and "rank": "0" alike
  wrong(field, value, "a string or a whole number");
}

const json* find(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// `at` names the object holding `key` in the message ("collectives[1]"), "" for the line itself.
const json& require(const json& object, const char* key, const std::string& at = "") {
  const json* value = find(object, key);
  if (!value) throw Error(fmt::format("no '{}{}' (required)", at.empty() ? "" : at + ".", key));
  return *value;
}

void read_memory(const json& memory, TrainEvent& event) {
  if (!memory.is_object()) wrong("memory", memory, "an object");
  if (const json* v = find(memory, "allocated_bytes")) {
    event.allocated_bytes = between(*v, "memory.allocated_bytes", 0, kMaxBytes);
  }
  if (const json* v = find(memory, "reserved_bytes")) {
    event.reserved_bytes = between(*v, "memory.reserved_bytes", 0, kMaxBytes);
  }
  if (const json* v = find(memory, "peak_bytes")) {
    event.peak_bytes = between(*v, "memory.peak_bytes", 0, kMaxBytes);
  }
}

void read_operators(const json& operators, TrainEvent& event) {
  if (!operators.is_object()) wrong("operators", operators, "an object of name: seconds");
  for (const auto& [name, seconds] : operators.items()) {
    event.operators.emplace_back(
        name, between(seconds, "operators." + terminal_safe(shorten(name)), 0, kMaxStepSeconds));
  }
}

// nccl-tests' busbw (doc/PERFORMANCE.md): algbw = bytes / seconds, busbw = algbw × factor(n);
// above what any link or memory moves, the call's time is wrong and the line malformed.
void set_busbw(TrainCollective& c, const comm::Collective& collective, const std::string& at) {
  const double algbw_gbps = comm::algbw_gbps(c.bytes, c.seconds);
  c.busbw_bytes_per_second =
      comm::busbw_gbps(algbw_gbps, collective.bus_factor(c.ranks)) * comm::kBytesPerGB;
  if (const auto problem =
          bandwidth_problem(algbw_gbps * comm::kBytesPerGB, c.busbw_bytes_per_second)) {
    throw Error(fmt::format("'{}': {} bytes in {:g} s over {} ranks is {}", at, c.bytes, c.seconds,
                            c.ranks, *problem));
  }
}

TrainCollective read_collective(const json& item, size_t i) {
  const std::string at = fmt::format("collectives[{}]", i);
  if (!item.is_object()) wrong(at, item, "an object");
  TrainCollective c;
  const json& name = require(item, "collective", at);
  if (!name.is_string()) wrong(at + ".collective", name, "a string");
  const comm::Collective& collective =
      comm::find_collective(name.get<std::string>(), "'" + at + ".collective'");
  c.collective = std::string(collective.name());
  c.bytes = static_cast<uint64_t>(whole(require(item, "bytes", at), at + ".bytes", 0,
                                        static_cast<int64_t>(kMaxBytes)));
  c.seconds = between(require(item, "seconds", at), at + ".seconds", kMinTimedSeconds,
                      kMaxCollectiveSeconds);
  c.ranks = static_cast<int>(whole(require(item, "ranks", at), at + ".ranks", 1, kMaxRanks));
  if (const json* layer = find(item, "layer")) c.layer = text(*layer, at + ".layer");
  if (const auto problem = layer_problem(c.layer, "'" + at + ".layer'")) throw Error(*problem);
  set_busbw(c, collective, at);
  return c;
}

void read_collectives(const json& collectives, TrainEvent& event) {
  if (!collectives.is_array()) wrong("collectives", collectives, "an array");
  for (size_t i = 0; i < collectives.size(); ++i) {
    event.collectives.push_back(read_collective(collectives[i], i));
  }
}

// The two checkpoint events docs/train-events.md names; any other value makes the line malformed.
std::string read_checkpoint(const json& value) {
  constexpr const char* kExpected = "'saved' or 'loaded'";
  if (!value.is_string()) wrong("checkpoint", value, kExpected);
  const std::string v = value.get<std::string>();
  if (v != "saved" && v != "loaded") {
    throw Error(
        fmt::format("'checkpoint' is '{}', expected {}", terminal_safe(shorten(v)), kExpected));
  }
  return v;
}

json parse_object(std::string_view line) {
  std::string problem;
  json doc = parse_json_or_discarded(line, problem);
  if (doc.is_discarded()) throw Error(problem);
  if (!doc.is_object()) wrong("the line", doc, "a JSON object");
  return doc;
}

void read_optional(const json& doc, TrainEvent& event) {
  if (const json* v = find(doc, "time")) event.time = number(*v, "time");
  if (const json* v = find(doc, "tokens")) event.tokens = between(*v, "tokens", 0, kMaxStepTokens);
  if (const json* v = find(doc, "rank")) event.rank = text(*v, "rank");
  if (const json* v = find(doc, "world_size")) {
    event.world_size = whole(*v, "world_size", 1, kMaxRanks);
  }
  if (const json* v = find(doc, "device")) event.device = text(*v, "device");
  if (const json* v = find(doc, "memory")) read_memory(*v, event);
  if (const json* v = find(doc, "operators")) read_operators(*v, event);
  if (const json* v = find(doc, "collectives")) read_collectives(*v, event);
  if (const json* v = find(doc, "checkpoint")) event.checkpoint = read_checkpoint(*v);
}

}  // namespace

TrainEvent parse_train_event(std::string_view line) {
  const json doc = parse_object(line);
  const json& schema = require(doc, "schema");
  if (!schema.is_string() || schema.get<std::string>() != kTrainEventsSchema) {
    if (!schema.is_string()) wrong("schema", schema, fmt::format("'{}'", kTrainEventsSchema));
    throw Error(fmt::format("'schema' is '{}', expected '{}'",
                            terminal_safe(shorten(schema.get<std::string>())), kTrainEventsSchema));
  }
  TrainEvent event;
  event.step = whole(require(doc, "step"), "step", 0, kMaxStep);
  event.step_seconds =
      between(require(doc, "step_seconds"), "step_seconds", kMinTimedSeconds, kMaxStepSeconds);
  read_optional(doc, event);
  return event;
}

}  // namespace plumb::exporter
