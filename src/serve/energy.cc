#include "serve/energy.h"

#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"
#include "exporter/device_reading.h"
#include "serve/prom_text.h"
#include "serve/server_metrics.h"
#include "sysinfo/npu_smi.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>

namespace plumb::serve {
namespace {

// Power at `t` on the line through the samples, held flat beyond the first and last.
double power_at(const std::vector<std::pair<double, double>>& s, double t) {
  if (t <= s.front().first) return s.front().second;
  if (t >= s.back().first) return s.back().second;
  auto after = std::upper_bound(s.begin(), s.end(), t,
                                [](double x, const auto& p) { return x < p.first; });
  auto before = after - 1;
  double span = after->first - before->first;
  if (span <= 0) return after->second;
  return before->second + (after->second - before->second) * (t - before->first) / span;
}

std::string url_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// A Prometheus server's instant query answer: data.result[].value = [time, "watts"].
PowerReading read_prometheus_query(std::string_view body, const std::string& url) {
  auto doc = parse_json(body, url);
  PowerReading reading;
  const auto* result = doc.contains("data") && doc["data"].is_object() && doc["data"].contains("result")
                           ? &doc["data"]["result"] : nullptr;
  if (!result || !result->is_array()) throw Error(url + ": expected data.result in the answer");
  for (const auto& item : *result) {
    if (!item.contains("value") || !item["value"].is_array() || item["value"].size() != 2 ||
        !item["value"][1].is_string())
      throw Error(url + ": expected data.result[].value as [time, \"number\"]");
    std::string text = item["value"][1].get<std::string>();
    double watts = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), watts);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(watts))
      throw Error(url + ": expected a number of watts, got \"" + terminal_safe(text) + "\"");
    reading.watts += watts;
    ++reading.cards;
  }
  if (reading.cards == 0) throw Error(url + ": the query gave no series");
  return reading;
}

}  // namespace

void integrate_energy(EnergyReport& report, double duration_s, std::int64_t output_tokens) {
  auto& s = report.watts;
  std::sort(s.begin(), s.end());
  report.joules = report.mean_watts = report.output_tokens_per_joule = 0;
  if (s.empty() || duration_s <= 0) return;
  std::vector<std::pair<double, double>> points = {{0.0, power_at(s, 0.0)}};
  for (const auto& p : s)
    if (p.first > 0 && p.first < duration_s) points.push_back(p);
  points.emplace_back(duration_s, power_at(s, duration_s));
  for (std::size_t i = 1; i < points.size(); ++i)
    report.joules += (points[i].first - points[i - 1].first) *
                     (points[i].second + points[i - 1].second) / 2;
  report.mean_watts = report.joules / duration_s;
  if (report.joules > 0)
    report.output_tokens_per_joule = static_cast<double>(output_tokens) / report.joules;
}

PowerReading read_nvidia_smi_power(std::string_view text) {
  PowerReading reading;
  std::string first;
  for (const auto& line : split_list(text, '\n')) {
    auto field = trim_blanks(line);
    if (first.empty()) first = std::string(field.substr(0, kQuoteMax));
    double watts = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), watts);
    if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(watts)) continue;
    reading.watts += watts;
    ++reading.cards;
  }
  if (reading.cards == 0)
    throw Error("nvidia-smi: no power.draw figure in its output (got '" + terminal_safe(first) + "')");
  return reading;
}

PowerReading read_npu_smi_power(std::string_view text) {
  PowerReading reading;
  for (const auto& chip : sysinfo::parse_npu_smi_info(text).chips) {
    if (!chip.power_watts) continue;  // A3's second chip: its NPU's power is on chip 0
    reading.watts += *chip.power_watts;
    ++reading.cards;
  }
  if (reading.cards == 0) throw Error("npu-smi info: no Power(W) figure in its table");
  return reading;
}

PowerReading read_prometheus_power(std::string_view text, const std::string& series,
                                   const std::string& url) {
  PowerReading reading;
  for (const auto& sample : parse_prom_text(text, url).samples) {
    if (sample.name != series || !std::isfinite(sample.value)) continue;
    reading.watts += sample.value;
    ++reading.cards;
  }
  if (reading.cards == 0) throw Error(url + ": no series named " + series);
  return reading;
}

PowerReader make_power_reader(const std::string& spec, double timeout_s) {
  if (spec == "nvidia-smi")
    return [timeout_s] {
      return read_nvidia_smi_power(exporter::run_device_tool(
          {"nvidia-smi", "--query-gpu=power.draw", "--format=csv,noheader,nounits"}, timeout_s,
          "nvidia-smi"));
    };
  if (spec == "npu-smi")
    return [timeout_s] {
      return read_npu_smi_power(exporter::run_device_tool({"npu-smi", "info"}, timeout_s, "npu-smi"));
    };
  auto space = spec.find(' ');
  if (!spec.starts_with("prometheus:") || space == std::string::npos ||
      trim_blanks(spec.substr(space)).empty())
    throw Error("--power " + spec + ": expected nvidia-smi, npu-smi or prometheus:URL SERIES");
  std::string url = spec.substr(11, space - 11);
  std::string series(trim_blanks(spec.substr(space)));
  if (url.ends_with("/api/v1/query"))
    return [url, series, timeout_s] {
      std::string full = url + "?query=" + url_encode(series);
      return read_prometheus_query(http_get_text(full, timeout_s), full);
    };
  return [url, series, timeout_s] {
    return read_prometheus_power(http_get_text(url, timeout_s), series, url);
  };
}

nlohmann::json energy_json(const EnergyReport& energy) {
  nlohmann::json watts = nlohmann::json::array();
  for (const auto& [t, w] : energy.watts) watts.push_back({t, w});
  nlohmann::json out = {{"source", energy.source},
                        {"cards", energy.cards},
                        {"joules", energy.joules},
                        {"mean_watts", energy.mean_watts},
                        {"output_tokens_per_joule", energy.output_tokens_per_joule},
                        {"watts", watts}};
  if (!energy.problem.empty()) out["problem"] = energy.problem;
  return out;
}

// ---- the sampler ---------------------------------------------------------------------------

PowerSampler::PowerSampler(std::string source, PowerReader reader, double interval_s)
    : source_(std::move(source)), reader_(std::move(reader)), interval_s_(interval_s) {
  report_.source = source_;
}

PowerSampler::~PowerSampler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PowerSampler::sample() {
  {
    std::lock_guard lock(mutex_);
    if (!report_.problem.empty()) return;
  }
  std::string problem;
  PowerReading reading;
  Nanos at = monotonic_ns();
  try {
    reading = reader_();
  } catch (const Error& e) {
    problem = e.what();
  }
  std::lock_guard lock(mutex_);
  if (!problem.empty()) {
    report_.problem = problem;
    return;
  }
  report_.cards = std::max(report_.cards, reading.cards);
  report_.watts.emplace_back(static_cast<double>(at), reading.watts);
}

void PowerSampler::start(Nanos origin_ns) {
  origin_ns_ = origin_ns;
  auto period = std::chrono::duration<double>(interval_s_);
  thread_ = std::thread([this, period] {
    sample();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      sample();
      lock.lock();
    }
  });
}

EnergyReport PowerSampler::finish(double duration_s, std::int64_t output_tokens, Nanos origin_ns) {
  if (origin_ns != kNoTime) origin_ns_ = origin_ns;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sample();
  EnergyReport out = report_;
  for (auto& point : out.watts) point.first = (point.first - static_cast<double>(origin_ns_)) / 1e9;
  if (!out.problem.empty()) {
    out.cards = 0;
    out.watts.clear();
    integrate_energy(out, duration_s, output_tokens);  // all zero
    return out;
  }
  integrate_energy(out, duration_s, output_tokens);
  return out;
}

}  // namespace plumb::serve
