// Tokens per joule: the cards' power sampled during a run (nvidia-smi, npu-smi, or a Prometheus
// series such as plumb exporter's or dcgm-exporter's), integrated over the run (docs/serve.md,
// "Cost and energy").
#pragma once

#include <string>
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

}  // namespace plumb::serve
