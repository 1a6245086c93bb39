// plumb step PATH...: where every training step went, from the profiler traces of all ranks —
// computation, exposed communication, stragglers, collectives against their comm baseline, and
// the gap to the plan (docs/step.md).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct StepOptions {
  std::vector<std::string> paths;  // trace files, directories of them, Ascend *_ascend_pt dirs
  std::string baseline;            // a comm baseline: id, latest or JSON file
  std::string baseline_layer;      // force the layer compared against
  std::string plan;                // plumb.plan/1 JSON
  std::string step_regex = "ProfilerStep#(\\d+)";
  std::string json;                // plumb.step/1 ("-": standard output)
  std::string csv;                 // msprof-analyze step_trace_time columns
  std::string html;
  std::string db;
  bool save = false;               // store a step record
  std::string label;
  int jobs = 0;                    // reading threads; 0: one per core
};

void setup_step(CLI::App& app, StepOptions& options);
int run_step(const StepOptions& options);

}  // namespace plumb::cli
