#include "exporter/alertmanager_webhook.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

#include "common/error.h"
#include "common/json.h"
#include "common/number_range.h"

namespace plumb::exporter {
namespace {

using nlohmann::json;

// A payload with thousands of bad alerts gets a message of readable length, not thousands of
// lines.
constexpr size_t kMaxProblems = 20;

// Every problem of one payload, reported together (STYLE.md 8).
class Problems {
 public:
  void add(std::string line) {
    ++count_;
    if (lines_.size() < kMaxProblems) lines_.push_back(std::move(line));
  }
  void throw_if_any() const {
    if (count_ == 0) return;
    std::string message = "Alertmanager webhook payload: ";
    for (size_t i = 0; i < lines_.size(); ++i) message += (i ? "\n" : "") + lines_[i];
    if (count_ > lines_.size()) message += fmt::format("\n... and {} more", count_ - lines_.size());
    throw Error(message);
  }

 private:
  std::vector<std::string> lines_;
  size_t count_ = 0;
};

// A JSON value as a message quotes it: short, on one line.
std::string quoted(const json& value) {
  return value.is_string() ? "'" + shorten(value.get<std::string>()) + "'" : shorten(value.dump());
}

std::string text_field(const json& object, const std::string& path, const char* key, bool required,
                       Problems& problems) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) problems.add(fmt::format("{}{}: missing", path, key));
    return {};
  }
  if (!it->is_string()) {
    problems.add(fmt::format("{}{}: expected a string, got {}", path, key, quoted(*it)));
    return {};
  }
  return it->get<std::string>();
}

// labels, annotations, groupLabels ...: an object of strings. nlohmann's object keeps its keys
// sorted, so the result is sorted by name.
Labels string_map(const json& object, const std::string& path, const char* key, bool required,
                  Problems& problems) {
  Labels out;
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) problems.add(fmt::format("{}{}: missing", path, key));
    return out;
  }
  if (!it->is_object()) {
    problems.add(fmt::format("{}{}: expected an object of strings, got {}", path, key, quoted(*it)));
    return out;
  }
  for (const auto& [name, value] : it->items()) {
    if (value.is_string()) {
      out.emplace_back(name, value.get<std::string>());
    } else {
      problems.add(fmt::format("{}{}.{}: expected a string, got {}", path, key, shorten(name),
                               quoted(value)));
    }
  }
  return out;
}

AlertTime time_field(const json& object, const std::string& path, const char* key, bool required,
                     Problems& problems) {
  const auto it = object.find(key);
  if (it == object.end() && !required) return std::nullopt;
  const std::string text = text_field(object, path, key, true, problems);
  if (text.empty()) return std::nullopt;
  bool ok = false;
  AlertTime time = parse_rfc3339(text, ok);
  if (!ok) {
    problems.add(fmt::format("{}{}: expected an RFC 3339 time, got '{}'", path, key, shorten(text)));
  }
  return time;
}

void check_status(const std::string& status, const std::string& field, Problems& problems) {
  if (status.empty() || status == "firing" || status == "resolved") return;
  problems.add(fmt::format("{}: expected 'firing' or 'resolved', got '{}'", field, shorten(status)));
}

WebhookAlert parse_alert(const json& item, size_t index, Problems& problems) {
  const std::string path = fmt::format("alerts[{}].", index);
  WebhookAlert alert;
  if (!item.is_object()) {
    problems.add(fmt::format("alerts[{}]: expected an object, got {}", index, quoted(item)));
    return alert;
  }
  alert.status = text_field(item, path, "status", true, problems);
  check_status(alert.status, path + "status", problems);
  alert.labels = string_map(item, path, "labels", true, problems);
  alert.annotations = string_map(item, path, "annotations", false, problems);
  alert.starts_at = time_field(item, path, "startsAt", true, problems);
  alert.ends_at = time_field(item, path, "endsAt", false, problems);
  alert.generator_url = text_field(item, path, "generatorURL", false, problems);
  alert.fingerprint = text_field(item, path, "fingerprint", false, problems);
  return alert;
}

int truncated_field(const json& root, Problems& problems) {
  const auto it = root.find("truncatedAlerts");
  if (it == root.end()) return 0;  // payloads before Alertmanager 0.22 have none
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1'000'000'000LL) {
    problems.add(fmt::format("truncatedAlerts: expected a whole number from 0, got {}", quoted(*it)));
    return 0;
  }
  return static_cast<int>(it->get<long long>());
}

void parse_header(const json& root, WebhookPayload& p, Problems& problems) {
  p.version = text_field(root, "", "version", true, problems);
  if (!p.version.empty() && p.version != "4") {
    problems.add(fmt::format("version: expected '4' (Alertmanager's webhook payload version 4), "
                             "got '{}'", shorten(p.version)));
  }
  p.group_key = text_field(root, "", "groupKey", false, problems);
  p.truncated_alerts = truncated_field(root, problems);
  p.status = text_field(root, "", "status", true, problems);
  check_status(p.status, "status", problems);
  p.receiver = text_field(root, "", "receiver", false, problems);
  p.group_labels = string_map(root, "", "groupLabels", false, problems);
  p.common_labels = string_map(root, "", "commonLabels", false, problems);
  p.common_annotations = string_map(root, "", "commonAnnotations", false, problems);
  p.external_url = text_field(root, "", "externalURL", false, problems);
}

// Digits at text[at, at + n) as a number; -1 when they are not all digits.
int digits(std::string_view text, size_t at, size_t n) {
  if (at + n > text.size()) return -1;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + at + n, value);
  if (ec != std::errc() || end != text.data() + at + n || text[at] == '-' || text[at] == '+') {
    return -1;
  }
  return value;
}

bool is_at(std::string_view text, size_t at, char c) { return at < text.size() && text[at] == c; }

// The zone at text[at]: 'Z' or ±HH:MM, as seconds east of UTC; nothing when malformed.
std::optional<int> zone_offset(std::string_view text, size_t at) {
  if (at + 1 == text.size() && (text[at] == 'Z' || text[at] == 'z')) return 0;
  if (at + 6 != text.size() || (text[at] != '+' && text[at] != '-') || text[at + 3] != ':') {
    return std::nullopt;
  }
  const int hours = digits(text, at + 1, 2);
  const int minutes = digits(text, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return std::nullopt;
  const int seconds = hours * 3600 + minutes * 60;
  return text[at] == '-' ? -seconds : seconds;
}

}  // namespace

std::string WebhookAlert::label(std::string_view name) const {
  for (const auto& [k, v] : labels) {
    if (k == name) return v;
  }
  return {};
}

std::string WebhookAlert::annotation(std::string_view name) const {
  for (const auto& [k, v] : annotations) {
    if (k == name) return v;
  }
  return {};
}

AlertTime parse_rfc3339(std::string_view text, bool& ok) {
  namespace ch = std::chrono;
  ok = false;
  const int year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const int hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return std::nullopt;
  if (!is_at(text, 4, '-') || !is_at(text, 7, '-') || !is_at(text, 13, ':') ||
      !is_at(text, 16, ':') || !(is_at(text, 10, 'T') || is_at(text, 10, 't'))) {
    return std::nullopt;
  }
  size_t at = 19;
  if (is_at(text, at, '.')) {
    const size_t first = ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == first) return std::nullopt;
  }
  const std::optional<int> offset = zone_offset(text, at);
  const ch::year_month_day date{ch::year(year), ch::month(static_cast<unsigned>(month)),
                                ch::day(static_cast<unsigned>(day))};
  // Second 60 is RFC 3339's leap second; it is counted as the next second's start.
  if (!offset || !date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  const ch::sys_seconds utc = ch::sys_days(date) + ch::hours(hour) + ch::minutes(minute) +
                             ch::seconds(second) - ch::seconds(*offset);
  // Only what format_rfc3339 can write back (four-digit years in UTC).
  if (utc < ch::sys_days(ch::year(0) / 1 / 1) || utc >= ch::sys_days(ch::year(10000) / 1 / 1)) {
    return std::nullopt;
  }
  ok = true;
  if (utc == ch::sys_days(ch::year(1) / 1 / 1)) return std::nullopt;  // Go's zero time: not set
  return utc;
}

std::string format_rfc3339(std::chrono::sys_seconds time) {
  namespace ch = std::chrono;
  const ch::sys_days day = ch::floor<ch::days>(time);
  const ch::year_month_day date{day};
  const ch::hh_mm_ss clock{time - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     clock.hours().count(), clock.minutes().count(), clock.seconds().count());
}

WebhookPayload parse_alertmanager_webhook(std::string_view body) {
  std::string problem;
  const json root = parse_json_or_discarded(body, problem);
  if (root.is_discarded()) throw Error("Alertmanager webhook payload: " + problem);
  if (!root.is_object()) {
    throw Error("Alertmanager webhook payload: expected a JSON object, got " + quoted(root));
  }
  Problems problems;
  WebhookPayload payload;
  parse_header(root, payload, problems);
  const auto alerts = root.find("alerts");
  if (alerts == root.end()) {
    problems.add("alerts: missing");
  } else if (!alerts->is_array()) {
    problems.add("alerts: expected an array, got " + quoted(*alerts));
  } else {
    for (size_t i = 0; i < alerts->size(); ++i) {
      payload.alerts.push_back(parse_alert((*alerts)[i], i, problems));
    }
  }
  problems.throw_if_any();
  return payload;
}

}  // namespace plumb::exporter
