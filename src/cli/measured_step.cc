#include "cli/measured_step.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <cmath>
#include <utility>

#include "common/error.h"
#include "common/json.h"
#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/model.h"
#include "report/plan_reporter.h"
#include "report/step_json_reporter.h"

namespace plumb::cli {
namespace {

// The step's plan rows (step/plan_compare.h) that are parts of the model's step.
constexpr std::array<std::pair<const char*, plan::StepPart>, 8> kRows = {{
    {"compute", plan::StepPart::kCompute},
    {"exposed tp", plan::StepPart::kTp},
    {"exposed cp", plan::StepPart::kCp},
    {"exposed ep", plan::StepPart::kEp},
    {"exposed pp", plan::StepPart::kPp},
    {"exposed dp", plan::StepPart::kDp},
    {"bubble (idle)", plan::StepPart::kBubble},
    {"step", plan::StepPart::kStep},
}};

// "model file llama3-8b (/usr/share/plumb/models/llama3-8b.yaml, kept in baseline 7)": how the
// file a plan read is named when its kept text has a problem.
std::string input_source(const JsonFields& f, const nlohmann::json& input, const std::string& path,
                         const char* kind) {
  return fmt::format("{} (the {} file kept in {})", f.text(input, path, "path"), kind, f.file());
}

// One kept input file: its text, read by `from_text` under the name input_source gives.
template <class Read>
auto kept_input(const JsonFields& f, const nlohmann::json& inputs, const char* kind, Read from_text) {
  const std::string path = JsonFields::at("plan_run.inputs", kind);
  const nlohmann::json& input = f.object(inputs, "plan_run.inputs", kind);
  return from_text(f.text(input, path, "yaml"), input_source(f, input, path, kind));
}

void fill_run(plan::MeasuredStep& s, const nlohmann::json& run, const std::string& name) {
  const JsonFields f(name);
  const nlohmann::json& inputs = f.object(run, "plan_run", "inputs");
  s.model = kept_input(f, inputs, "model", plan::model_from_text);
  s.hardware = kept_input(f, inputs, "hardware", plan::hardware_from_text);
  s.cluster = f.member(inputs, "plan_run.inputs", "cluster").is_null()
                  ? plan::default_cluster(s.hardware)
                  : kept_input(f, inputs, "cluster", [&](std::string_view text, const std::string& source) {
                      return plan::cluster_from_text(text, source, s.hardware);
                    });
  s.layout = report::layout_from_json(f.object(run, "plan_run", "layout"), f, "plan_run.layout");
  s.precision = f.text(run, "plan_run", "precision");
}

constexpr const char* kRerun =
    "plumb plan ... --json PLAN.json, then plumb step TRACES --plan PLAN.json --save (or --json), "
    "so that the layout it ran is known";

// Before the whole document is read: a step without its plan cannot calibrate, whatever else.
void require_plan(const nlohmann::json& doc, const std::string& name) {
  const bool has_plan = doc.is_object() && doc.contains("plan") && doc["plan"].is_array() &&
                        !doc["plan"].empty();
  if (!has_plan) {
    throw Error(fmt::format("{} was not compared with a plan, so the layout it measured is "
                            "unknown: {}", name, kRerun));
  }
}

}  // namespace

plan::MeasuredStep measured_step_from_json(const nlohmann::json& doc, const std::string& name) {
  require_plan(doc, name);
  return measured_step(report::step_from_json(doc, name), name);
}

plan::MeasuredStep measured_step(const step::StepResult& r, const std::string& name) {
  const std::string rerun = kRerun;
  if (r.plan.empty()) {
    throw Error(fmt::format("{} was not compared with a plan, so the layout it measured is "
                            "unknown: {}", name, rerun));
  }
  if (r.plan_run.empty()) {
    throw Error(fmt::format("{} was compared with a plan file that does not keep its inputs "
                            "(written before plumb plan kept context.inputs): {}", name, rerun));
  }
  plan::MeasuredStep s;
  s.source = name;
  fill_run(s, nlohmann::json::parse(r.plan_run), name);
  for (const step::PlanRow& row : r.plan) {
    for (const auto& [component, part] : kRows) {
      if (row.component == component && std::isfinite(row.measured_us)) {
        s.measured[static_cast<size_t>(part)] = row.measured_us / step::kUsPerS;
      }
    }
  }
  return s;
}

}  // namespace plumb::cli
