// `plumb plan` output: the console view and JSON (plumb.plan/1, plumb.plan-search/1,
// plumb.plan-validate/1, plumb.plan-scale/1, plumb.plan-compare/1) of a prediction, a search, the
// validation sets, a scaling table and a comparison of chips (its HTML page:
// plan_compare_html.h). The predictor fills plain structs; these functions only format them.
#pragma once

#include <nlohmann/json.hpp>

#include "common/json.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "plan/compare.h"
#include "plan/outlook.h"
#include "plan/search.h"
#include "plan/step.h"
#include "plan/step_fit.h"
#include "plan/band.h"
#include "plan/validation.h"
#include "plan/validation_set.h"

namespace plumb::report {

inline constexpr double kGB = 1e9;  // memory in the plan's tables: decimal GB

// A file a plan was read from, kept whole in plumb.plan/1 (context.inputs) so that what ran can
// be rebuilt later: plumb step --plan keeps it beside the measured step, and plumb plan
// --calibrate reads it back from the step record (plan/step_fit.h).
struct PlanInput {
  std::string name;  // the catalog name, or empty for a file given by path
  std::string path;
  std::string yaml;  // the file's text
};
struct PlanInputs {
  PlanInput model, hardware;
  std::optional<PlanInput> cluster;  // none: the hardware's default cluster
};

// What a plan was predicted on, for the header and the JSON.
struct PlanContext {
  std::string model;
  std::string hardware;
  int64_t devices = 0;
  int64_t seq_len = 0;
  std::string cluster;   // "8 per node, 32 nodes per rack, rail 46.0 GB/s, spine 46.0 GB/s"
  std::string network;   // "analytic" or the calibration's source
  std::vector<std::string> measured;  // curves that replaced the analytic model
  std::vector<std::string> notes;     // assumptions worth saying (efficiency assumed, ...)
  PlanInputs inputs;
  // plumb plan --calibrate with measured steps: the fit, and the steps it was fitted to.
  std::optional<plan::StepFit> fit;
  std::vector<std::string> fit_sources;
  // The band every prediction carries (plan/band.h); none when no validation set was found.
  std::optional<plan::BandModel> band;
};

// A prediction's band: step time, throughput and MFU at the band's two ends.
struct BandedFigures {
  double step_low = 0, step_high = 0;
  double tokens_low = 0, tokens_high = 0;
  double mfu_low = 0, mfu_high = 0;
};
BandedFigures banded(const plan::BandModel& m, const plan::Prediction& p);
// The pessimistic end of a prediction's throughput: its band's low end, or the point without one.
double pessimistic_tokens_per_s(const std::optional<plan::BandModel>& m, const plan::Prediction& p);
// {"level", "step_time_s": [low, high], "tokens_per_s", "mfu", "runs", "calibrated", "basis"}, or
// null without a band.
nlohmann::json band_json(const std::optional<plan::BandModel>& m, const plan::Prediction& p);

void print_plan(const PlanContext& c, const plan::Prediction& p, const plan::Outlook& o,
                std::ostream& out);
nlohmann::json plan_json(const PlanContext& c, const plan::Prediction& p, const plan::Outlook& o);

// What plan search says of its best layout under `best:`: the plumb plan command that reproduces
// it (the CLI knows the options) and notes (plan::hidden_communication).
struct SearchBest {
  std::string command;
  std::vector<std::string> notes;
};
void print_search(const PlanContext& c, const plan::SearchResult& r, const SearchBest& best,
                  std::ostream& out);
nlohmann::json search_json(const PlanContext& c, const plan::SearchResult& r, const SearchBest& best);

// One row of `plumb plan scale`: the best layout at a device count and what failures leave of it.
struct ScaleRow {
  int64_t devices = 0;
  bool found = false;  // a layout fits at this count
  plan::Prediction best;
  plan::Outlook outlook;
  std::optional<plan::BandModel> band;  // of runs like this count's
};
void print_scale(const PlanContext& c, const std::vector<ScaleRow>& rows, std::ostream& out);
nlohmann::json scale_json(const PlanContext& c, const std::vector<ScaleRow>& rows);

// The targets each set must meet (issue 4): MAPE, largest error and per-group Spearman.
struct ValidationTarget {
  double max_mape = 0;
  double max_abs_error = 0;  // 0: no bound
  double min_spearman = 0;   // 0: not checked
};
bool meets(const plan::ValidationSet& set, const ValidationTarget& t);
void print_validation(const std::vector<plan::ValidationSet>& sets,
                      const std::vector<ValidationTarget>& targets, bool rows, std::ostream& out);
nlohmann::json validation_json(const std::vector<plan::ValidationSet>& sets,
                               const std::vector<ValidationTarget>& targets,
                               const plan::Coverage& coverage);
// "bands: the 80% band of each run, drawn from the others, holds 121 of 150 (80.7%); check
// split: 10 of 12 (83.3%)".
void print_band_coverage(const plan::Coverage& c, double level, std::ostream& out);
// One line per pair: the larger run's error before and after calibrating on the smaller alone.
void print_scale_pairs(const std::vector<plan::ScalePair>& pairs, std::ostream& out);
// The same pairs and their 8×-or-more summaries (of one source; across sources too), as
// plan validate --calibrated --json writes them under "scale_pairs".
nlohmann::json scale_pairs_json(const std::vector<plan::ScalePair>& pairs);

// plumb plan compare: one table of every chip at every count, then each chip's prices with their
// dates and file, then the notes.
void print_compare(const plan::Comparison& c, std::ostream& out);
nlohmann::json compare_json(const plan::Comparison& c);

// Money and counts in three digits for tables: 983040000 -> "$983M", 1.5e9 -> "$1.5B",
// 30000 -> "$30k", 950 -> "$950"; 41500000 -> "41.5M".
std::string usd_short(double usd);
std::string count_short(double n);
// "tp8 cp2 pp16 vpp2 dp64 ep8 etp1 dualpipe ep-ov tp-ov": tp, pp and dp always; cp, vpp and ep
// when above 1; etp when not tp; the zero-bubble and DualPipe schedules; the overlaps when on.
std::string layout_short(const plan::Layout& p);
// "h100-sxm: buy $30k (2025-01) · rent $4.92/h (2025-06) · data/hardware/h100-sxm.yaml".
std::string prices_text(const plan::ChipComparison& c);

// A layout as plumb.plan/1 writes it (`layout`): sizes, batches and every choice by its name.
nlohmann::json layout_json(const plan::Layout& p);
// A layout as plumb.plan/1 writes it (`layout`), read back through `f` (the file and `path`, the
// JSON path of `j`, name it in errors): each size a whole number from 1 to kMaxDevices, each
// choice one of its names (plan/layout_names.h), as plumb plan's own options take them. Fields
// added after the first plans were written (shared_expert_overlap, cp_algo, dispatcher,
// fp32_grad_reduce, fsdp, train_metrics, fp32_combine, eager, grad_accum_fusion) are optional.
plan::Layout layout_from_json(const nlohmann::json& j, const JsonFields& f, const std::string& path);

// One prediction's figures (the body of plumb.plan/1; search and scale rows reuse it).
nlohmann::json prediction_json(const plan::Prediction& p);

// "tp 8 · cp 1 · pp 16 · vpp 2 · dp 64 · ep 1 · mbs 1 · ZeRO 1 · recompute selective", then what
// differs from the defaults: "· etp 1 · dualpipe · ep-overlap · tp-overlap · fp8 dispatch".
std::string layout_text(const plan::Layout& p);
const char* recompute_name(plan::Recompute r);
// The --schedule names: "1f1b", "interleaved", "zero-bubble", "dualpipe".
const char* schedule_name(plan::Schedule s);

}  // namespace plumb::report
