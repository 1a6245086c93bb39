// Layouts practitioners would not run (issue 34, docs/plan.md section 8, "Plausible layouts").
// `plan search`, `scale` and `compare` leave them out unless --allow-unusual; `plumb plan` with one
// asked for explicitly runs it and says which rule it breaks. The rules are a table: each a name,
// a cheap test (the search asks it once per pipeline shape) and a message formatted only when read.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "plan/memory.h"
#include "plan/model.h"
#include "plan/step.h"

namespace plumb::plan {

// A stage should hold at least this many decoder layers: with one, the stage's sends, its share of
// the bubble and the embedding or output layer on an end stage weigh as much as its compute.
inline constexpr int kMinLayersPerStage = 2;

struct PlausibleRule {
  const char* name;                                               // "thin-stages"
  bool (*unusual)(const ModelSpec& m, const Layout& p);           // true: the rule is broken
  std::string (*message)(const ModelSpec& m, const Layout& p);    // why, and what practice does
};

// thin-stages: fewer than kMinLayersPerStage decoder layers per pipeline stage (layers < 2·pp).
// uneven-stages: pp × vpp does not divide the layers, unless vpp is 1 and plumb's split
// (stage_layers) is the documented one: the first stage, or the first and the last, one layer
// fewer than the others (Megatron-LM's --decoder-first-pipeline-num-layers and
// --decoder-last-pipeline-num-layers; Llama 3 405B's 126 layers on 16 stages).
std::span<const PlausibleRule> plausible_rules();

// No rule is broken. Cheap: no message is formatted.
bool plausible(const ModelSpec& m, const Layout& p);
// "unusual layout (thin-stages): ..." for each rule the layout breaks; empty when plausible.
std::vector<std::string> unusual_reasons(const ModelSpec& m, const Layout& p);

// When a prediction exposes no communication (what the comm column shows as 0.0%) although the
// layout communicates (tp, cp, ep, pp or dp above 1), which modelled overlap hides what:
// "no communication is exposed: --tp-overlap hides the TP all-gathers and reduce-scatters behind
// the GEMMs; ...". Empty when some communication is exposed or the layout has none.
// `dp_overlap`: the predictor overlaps the gradient reduction (ComputeModel::overlap_dp).
std::string hidden_communication(const Prediction& p, bool dp_overlap);
// Below this share of the step, exposed communication prints as 0.0%.
inline constexpr double kNoExposedShare = 0.0005;

}  // namespace plumb::plan
