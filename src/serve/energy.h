// Tokens per joule: the cards' power sampled during a run (nvidia-smi, npu-smi, or a Prometheus
// series such as plumb exporter's or dcgm-exporter's), integrated over the run (docs/serve.md,
// "Cost and energy").
#pragma once

#include "serve/request.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::serve {

struct EnergyReport {
  std::string source;  // "nvidia-smi", "npu-smi", "prometheus:<url> <series>"
  int cards = 0;       // devices whose power was summed
  double joules = 0;   // the integral of the summed power over the run
  double mean_watts = 0;
  double output_tokens_per_joule = 0;
  std::vector<std::pair<double, double>> watts;  // (seconds from the run's start, summed watts)
  std::string problem;  // one line when power could not be read; the figures are then 0
};

nlohmann::json energy_json(const EnergyReport& energy);

// One reading of every card: the summed watts and how many cards gave a figure.
struct PowerReading {
  double watts = 0;
  int cards = 0;
};

// The figures of `report.watts` over [0, duration_s]: power is taken as linear between samples
// and held flat before the first and after the last (trapezoid rule); joules = its integral,
// mean_watts = joules / duration_s, output_tokens_per_joule = output_tokens / joules.
void integrate_energy(EnergyReport& report, double duration_s, std::int64_t output_tokens);

// The readers, one per source, from the tools' own output.
// `nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits`: a number per GPU ("[N/A]"
// and the like are skipped). Throws plumb::Error "nvidia-smi: no power.draw figure in its
// output (got '...')" when no line is a number.
PowerReading read_nvidia_smi_power(std::string_view text);
PowerReading read_npu_smi_power(std::string_view text);  // `npu-smi info`: Power(W) per chip
// A Prometheus page: the sum of every sample named `series` (one per card).
PowerReading read_prometheus_power(std::string_view text, const std::string& series,
                                   const std::string& url);

// A --power value: "nvidia-smi", "npu-smi" or "prometheus:URL SERIES" (URL a /metrics page, or a
// Prometheus server's /api/v1/query: then SERIES is the query). Throws plumb::Error
// "--power X: expected nvidia-smi, npu-smi or prometheus:URL SERIES".
using PowerReader = std::function<PowerReading()>;
PowerReader make_power_reader(const std::string& spec, double timeout_s);

// Reads power every `interval_s` on a thread of its own from start() to finish(); a reading that
// fails ends the sampling with its reason as the report's problem, never a failed run.
class PowerSampler {
 public:
  PowerSampler(std::string source, PowerReader reader, double interval_s);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;
  void start(Nanos origin_ns);  // the run's start (CLOCK_MONOTONIC): the zero of the samples
  // `origin_ns`, when given, replaces start()'s (run_load's RunOutcome::start_ns).
  EnergyReport finish(double duration_s, std::int64_t output_tokens, Nanos origin_ns = kNoTime);

 private:
  void sample();
  std::string source_;
  PowerReader reader_;
  double interval_s_;
  Nanos origin_ns_ = 0;
  EnergyReport report_;  // its watts at absolute CLOCK_MONOTONIC ns until finish()
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace plumb::serve
