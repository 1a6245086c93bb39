// A run's workload from the options: prompts (random lengths, a JSONL of prompts, a ShareGPT
// file, a trace's arrivals and lengths) and their schedule (open loop: Poisson, constant or gamma
// arrivals at a rate on an absolute schedule; closed loop at a concurrency; both: a rate capped
// by a concurrency), all from one seed (docs/serve.md, "Load").
#pragma once

#include "serve/request.h"

#include <cstdint>
#include <string>

namespace plumb::serve {

struct WorkloadSpec {
  std::int64_t requests = 0;  // 0: as many as the duration needs (or the dataset's count)
  double duration_s = 0;
  int concurrency = 0;        // 0: none
  double rate = 0;            // requests/s; 0: closed loop (needs concurrency)
  std::string arrival = "poisson";
  double burstiness = 1.0;
  int input_tokens = 512;
  int output_tokens = 128;
  double length_spread = 0;
  std::string dataset;
  std::string dataset_format;
  std::uint64_t seed = 0;
};

// Throws plumb::Error (exit 2) naming the option, file, line or field at fault.
Workload make_workload(const WorkloadSpec& spec);

}  // namespace plumb::serve
