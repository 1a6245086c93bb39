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

namespace plumb::exporter {
namespace {

using nlohmann::json;

constexpr double kBytesPerGB = 1.0e9;  // comm::algbw_gbps's unit

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

double number(const json& value, std::string_view field, bool positive) {
  const char* expected = positive ? "a number above 0" : "a number of at least 0";
  if (!value.is_number()) wrong(field, value, expected);
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < 0 || (positive && v == 0)) wrong(field, value, expected);
  return v;
}

int64_t whole(const json& value, std::string_view field, int64_t least) {
  const std::string expected = fmt::format("a whole number of at least {}", least);
  if (!value.is_number_integer()) wrong(field, value, expected);
  if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX}) {
    wrong(field, value, expected);
  }
  const int64_t v = value.get<int64_t>();
  if (v < least) wrong(field, value, expected);
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
    event.allocated_bytes = number(*v, "memory.allocated_bytes", false);
  }
  if (const json* v = find(memory, "reserved_bytes")) {
    event.reserved_bytes = number(*v, "memory.reserved_bytes", false);
  }
  if (const json* v = find(memory, "peak_bytes")) {
    event.peak_bytes = number(*v, "memory.peak_bytes", false);
  }
}

void read_operators(const json& operators, TrainEvent& event) {
  if (!operators.is_object()) wrong("operators", operators, "an object of name: seconds");
  for (const auto& [name, seconds] : operators.items()) {
    event.operators.emplace_back(name, number(seconds, "operators." + terminal_safe(shorten(name)), false));
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
  c.bytes = static_cast<uint64_t>(whole(require(item, "bytes", at), at + ".bytes", 0));
  c.seconds = number(require(item, "seconds", at), at + ".seconds", true);
  c.ranks = static_cast<int>(std::min<int64_t>(whole(require(item, "ranks", at), at + ".ranks", 1),
                                               INT32_MAX));
  if (const json* layer = find(item, "layer")) c.layer = text(*layer, at + ".layer");
  // nccl-tests' busbw (doc/PERFORMANCE.md): algbw = bytes / seconds, busbw = algbw × factor(n).
  c.busbw_bytes_per_second =
      comm::busbw_gbps(comm::algbw_gbps(c.bytes, c.seconds), collective.bus_factor(c.ranks)) *
      kBytesPerGB;
  return c;
}

void read_collectives(const json& collectives, TrainEvent& event) {
  if (!collectives.is_array()) wrong("collectives", collectives, "an array");
  for (size_t i = 0; i < collectives.size(); ++i) {
    event.collectives.push_back(read_collective(collectives[i], i));
  }
}

json parse_object(std::string_view line) {
  std::string problem;
  json doc = parse_json_or_discarded(line, problem);
  if (doc.is_discarded()) throw Error(problem);
  if (!doc.is_object()) wrong("the line", doc, "a JSON object");
  return doc;
}

void read_optional(const json& doc, TrainEvent& event) {
  if (const json* v = find(doc, "time")) event.time = number(*v, "time", false);
  if (const json* v = find(doc, "tokens")) event.tokens = number(*v, "tokens", false);
  if (const json* v = find(doc, "rank")) event.rank = text(*v, "rank");
  if (const json* v = find(doc, "world_size")) event.world_size = whole(*v, "world_size", 1);
  if (const json* v = find(doc, "device")) event.device = text(*v, "device");
  if (const json* v = find(doc, "memory")) read_memory(*v, event);
  if (const json* v = find(doc, "operators")) read_operators(*v, event);
  if (const json* v = find(doc, "collectives")) read_collectives(*v, event);
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
  event.step = whole(require(doc, "step"), "step", 0);
  event.step_seconds = number(require(doc, "step_seconds"), "step_seconds", true);
  read_optional(doc, event);
  return event;
}

}  // namespace plumb::exporter
