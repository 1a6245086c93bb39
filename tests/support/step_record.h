// A record as `plumb step --save` stores it: no comm rows, only a plumb.step/1 document (2 ranks ×
// 2 steps). The tests of the commands that need comm measurements write it through the Store API
// and check that they refuse it; the step command itself is not needed for that.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "baseline/store.h"

namespace plumb::test {

inline baseline::Record step_only_record(const std::string& label = "fsdp") {
  nlohmann::json ranks = nlohmann::json::array();
  for (int rank = 0; rank < 2; ++rank) {
    nlohmann::json steps = nlohmann::json::array();
    for (int step = 1; step <= 2; ++step) {
      steps.push_back({{"step", step}, {"step_time_us", 1000.0}, {"compute_us", 700.0},
                       {"communication_us", 400.0}, {"exposed_communication_us", 100.0},
                       {"overlapped_us", 300.0}, {"memory_us", 0.0}, {"idle_us", 200.0}});
    }
    ranks.push_back({{"rank", rank}, {"steps", steps}});
  }
  baseline::Record r;
  r.created = "2026-12-03T11:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = "plumb step";
  r.step = {{"schema", "plumb.step/1"}, {"world_size", 2}, {"ranks", ranks},
            {"collectives", nlohmann::json::array()}, {"stragglers", nlohmann::json::array()}};
  return r;
}

}  // namespace plumb::test
