// libFuzzer target: any bytes as the plumb.step/1 file `plumb plan --calibrate FILE` reads
// (docs/plan.md section 13): the step's plan rows and its plan_run (the plan's layout and the
// whole text of its model, hardware and cluster files). Reading must either give a measured step
// or throw plumb::Error -- never crash, hang or throw anything else; a step that reads is then
// predicted, as the fit does, when its layout is one plumb plan runs.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/measured_step.h"
#include "common/error.h"
#include "plan/step_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    const plumb::plan::MeasuredStep s = plumb::cli::measured_step_from_json(doc, "--calibrate fuzz.json");
    if (!plumb::plan::beyond_max_devices(s.layout) &&
        plumb::plan::layout_problems(s.model, s.layout, s.layout.devices()).empty()) {
      plumb::plan::predict_measured(s, {});
    }
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
