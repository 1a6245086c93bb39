#include "plan/plausible.h"

#include <fmt/format.h>

#include <array>

#include "common/strings.h"

namespace plumb::plan {
namespace {

bool thin_stages(const ModelSpec& m, const Layout& p) {
  return m.layers < int64_t{kMinLayersPerStage} * p.pp;
}

std::string thin_stages_message(const ModelSpec& m, const Layout& p) {
  return fmt::format("pp {} leaves {:.3g} of the {} layers per stage, fewer than {}; published "
                     "pipelines keep at least {} per stage (a smaller --pp)",
                     p.pp, static_cast<double>(m.layers) / p.pp, m.layers, kMinLayersPerStage,
                     kMinLayersPerStage);
}

// plumb's uneven split (stage_layers) gives the middle stages one layer more first; it is the
// documented one when only the first stage, or only the first and the last, end up one fewer.
bool documented_uneven_split(const ModelSpec& m, const Layout& p) {
  if (p.vpp != 1 || p.pp < 2) return false;
  const int64_t extra = m.layers % p.pp;
  return extra == p.pp - 1 || (p.pp > 2 && extra == p.pp - 2);
}

bool uneven_stages(const ModelSpec& m, const Layout& p) {
  return m.layers % (int64_t{p.pp} * p.vpp) != 0 && !documented_uneven_split(m, p);
}

std::string uneven_stages_message(const ModelSpec& m, const Layout& p) {
  const std::string stages = p.vpp > 1 ? fmt::format("pp {} × vpp {} = {} stages", p.pp, p.vpp,
                                                     int64_t{p.pp} * p.vpp)
                                       : fmt::format("pp {} stages", p.pp);
  return fmt::format("{} do not divide the {} layers; plumb would give the middle stages the extra "
                     "layers, a split no framework documents: the documented uneven splits give "
                     "the first and last stages fewer (Megatron-LM's "
                     "--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers; "
                     "Llama 3 405B's 126 layers on 16 stages)", stages, m.layers);
}

constexpr std::array<PlausibleRule, 2> kPlausibleRules = {{
    {"thin-stages", thin_stages, thin_stages_message},
    {"uneven-stages", uneven_stages, uneven_stages_message},
}};

// One communicating dimension of a layout: its size, what of it the step exposes, and what
// modelled overlap hides it (empty: none is modelled for this layout).
struct Hidden {
  const char* name;
  int size;
  double exposed;
  std::string by;
};

std::string dp_hidden_by(const Layout& p, bool dp_overlap) {
  if (p.zero >= 3) {
    return "each micro-batch's compute hides ZeRO-3's weight all-gathers and gradient "
           "reduce-scatters";
  }
  if (!dp_overlap) return "";
  return "the last micro-batch's backward hides the DP gradient reduction (Megatron's "
         "--overlap-grad-reduce; --no-dp-overlap turns it off)";
}

std::string ep_hidden_by(const Layout& p) {
  if (p.ep_overlap) return "--ep-overlap hides the EP all-to-all behind the MoE layers' compute";
  if (p.shared_expert_overlap) {
    return "--shared-expert-overlap hides the EP all-to-all behind the shared experts' compute";
  }
  return "";
}

}  // namespace

std::span<const PlausibleRule> plausible_rules() { return kPlausibleRules; }

bool plausible(const ModelSpec& m, const Layout& p) {
  for (const PlausibleRule& rule : kPlausibleRules) {
    if (rule.unusual(m, p)) return false;
  }
  return true;
}

std::vector<std::string> unusual_reasons(const ModelSpec& m, const Layout& p) {
  std::vector<std::string> out;
  for (const PlausibleRule& rule : kPlausibleRules) {
    if (rule.unusual(m, p)) {
      out.push_back(fmt::format("unusual layout ({}): {}", rule.name, rule.message(m, p)));
    }
  }
  return out;
}

std::string hidden_communication(const Prediction& pred, bool dp_overlap) {
  if (pred.comm_wait_share >= kNoExposedShare) return "";
  const Layout& p = pred.layout;
  const Breakdown& b = pred.breakdown;
  const Hidden dims[] = {
      {"TP", p.tp, b.tp,
       p.tp_overlap ? "--tp-overlap hides the TP all-gathers and reduce-scatters behind the GEMMs"
                    : ""},
      {"CP", p.cp, b.cp, "attention's compute hides the CP ring's KV exchange"},
      {"EP", p.ep, b.ep, ep_hidden_by(p)},
      {"PP", p.pp, b.pp,
       p.pipeline_schedule() == Schedule::kDualPipe
           ? "DualPipe hides the PP sends behind the paired chunk's compute"
           : ""},
      {"DP", p.dp, b.dp, dp_hidden_by(p, dp_overlap)},
  };
  std::vector<std::string> parts;
  for (const Hidden& h : dims) {
    if (h.size <= 1) continue;
    parts.push_back(!h.by.empty() ? h.by
                                  : fmt::format("the {} communication takes {:.2g} s, under "
                                                "0.05% of the step", h.name, h.exposed));
  }
  if (parts.empty()) return "";
  return "no communication is exposed: " + join(parts, "; ");
}

}  // namespace plumb::plan
