// `plumb plan validate`: the predictor against published measurements (data/validation/):
// Megatron-LM SC21 Table 1 (achieved TFLOP/s per GPU) and vTrain's multi-node ground truth
// (iteration times). Each row is predicted with the catalog's A100 and the default cluster — no
// constant is tuned per row.
#pragma once

#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "plan/hardware.h"

namespace plumb::plan {

struct ValidationRow {
  ValidationRow() = default;
  ValidationRow(std::string row_group, std::string row_layout, double row_predicted,
                double row_published)
      : group(std::move(row_group)),
        layout(std::move(row_layout)),
        predicted(row_predicted),
        published(row_published) {}

  std::string group;  // model size: rows are ranked within their group; empty: in none
  std::string layout; // "tp 8 pp 4 dp 16 mbs 2"
  double predicted = 0;
  double published = 0;
  // Rows of a run-set file (validation_set.h) also say which run they are and what they measure,
  // since one set may mix quantities; the built-in sets leave these empty.
  std::string name;      // "DeepSeek-V3 pre-training", unique within its set
  std::string quantity;  // "tokens/s per device"
  std::string source;    // where the published figure comes from
  std::vector<std::pair<std::string, std::string>> assumed;  // field, why that value (file order)
  std::vector<std::string> notes;  // what plumb itself assumed or found (efficiency, memory)
  // What the prediction bands compare a plan with (plan/band.h), set by describe_run: the run's
  // kind and scale, and the share of its predicted step that is not compute.
  bool moe = false;
  std::string vendor;          // "nvidia", "huawei": the first word of the device's name
  int64_t devices = 0;
  double overhead_share = 0;   // (exposed communication + bubble + optimizer) / step, predicted
  bool time_quantity = false;  // the figure is a time: higher is slower
  // Run-set rows: "build" (the rules were shaped on it) or "check" (held out: judged, never
  // used to change a rule). docs/plan.md section 10.
  std::string split = "build";
  double error() const { return (predicted - published) / published; }  // relative
  // Measured over predicted speed: published/predicted, or its inverse for a time.
  double speed_ratio() const { return time_quantity ? predicted / published : published / predicted; }
};

struct ModelSpec;
struct HardwareSpec;
struct Prediction;
// Fills a row's moe, vendor, devices and overhead_share from what was predicted.
void describe_run(ValidationRow& row, const ModelSpec& m, const HardwareSpec& hw,
                  const Prediction& p);
// "nvidia" for "NVIDIA H100 SXM", "huawei" for "Huawei Ascend 910B": the name's first word.
std::string vendor_of(const HardwareSpec& hw);

struct ValidationSet {
  std::string name;
  std::string source;
  std::string quantity;  // "TFLOP/s per GPU", "iteration time (ms)"
  std::vector<ValidationRow> rows;
  double mape = 0;           // mean |error|
  double max_abs_error = 0;  // largest |error|
  std::map<std::string, double> spearman;  // per group, of predicted vs published
};

// Spearman's rank correlation: Pearson's of the ranks, ties ranked by their average.
double spearman(std::span<const double> a, std::span<const double> b);

// Fills mape, max_abs_error and spearman (of each named group) from the rows.
void summarize(ValidationSet& set);

// A set whose rows are all of the build split as it is; else its build rows and its check rows
// as two sets, "NAME · build" and "NAME · check", each summarized: a set is judged on each.
std::vector<ValidationSet> by_split(const ValidationSet& set);

// Reads and predicts each set; errors name the file and line.
ValidationSet validate_megatron_sc21(const std::string& csv, const HardwareSpec& a100);
ValidationSet validate_vtrain(const std::string& csv, const HardwareSpec& a100);

}  // namespace plumb::plan
