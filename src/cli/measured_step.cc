#include "cli/measured_step.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

#include "common/error.h"
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

const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& name,
                             const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw Error(fmt::format("{}: plan_run.{}{}: missing", name, where, key));
  }
  return j[key];
}

std::string text_member(const nlohmann::json& j, const char* key, const std::string& name,
                        const std::string& where) {
  const nlohmann::json& v = member(j, key, name, where);
  if (!v.is_string()) throw Error(fmt::format("{}: plan_run.{}{}: expected a string", name, where, key));
  return v.get<std::string>();
}

// "model file llama3-8b (/usr/share/plumb/models/llama3-8b.yaml, kept in baseline 7)": how the
// file a plan read is named when its kept text has a problem.
std::string input_source(const nlohmann::json& input, const char* kind, const std::string& name) {
  const std::string path = text_member(input, "path", name, std::string("inputs.") + kind + ".");
  return fmt::format("{} (the {} file kept in {})", path, kind, name);
}

void fill_run(plan::MeasuredStep& s, const nlohmann::json& run, const std::string& name) {
  const nlohmann::json& inputs = member(run, "inputs", name, "");
  const nlohmann::json& model = member(inputs, "model", name, "inputs.");
  const nlohmann::json& hardware = member(inputs, "hardware", name, "inputs.");
  s.model = plan::model_from_text(text_member(model, "yaml", name, "inputs.model."),
                                  input_source(model, "model", name));
  s.hardware = plan::hardware_from_text(text_member(hardware, "yaml", name, "inputs.hardware."),
                                        input_source(hardware, "hardware", name));
  const nlohmann::json& cluster = member(inputs, "cluster", name, "inputs.");
  s.cluster = cluster.is_null()
                  ? plan::default_cluster(s.hardware)
                  : plan::cluster_from_text(text_member(cluster, "yaml", name, "inputs.cluster."),
                                            input_source(cluster, "cluster", name), s.hardware);
  s.layout = report::layout_from_json(member(run, "layout", name, ""), name + ": plan_run");
  s.precision = text_member(run, "precision", name, "");
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
