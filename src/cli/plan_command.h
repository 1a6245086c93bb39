// plumb plan: predict step time, MFU, memory and goodput of a parallel layout; `plan search`
// ranks every layout that fits, `plan scale` shows goodput and time-to-train from 1,000 to
// 100,000 devices, `plan validate` checks the predictor against published runs, `plan compare`
// puts chips side by side for one run (days, energy, cost bought and rented).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

enum class PlanMode { kPredict, kSearch, kScale, kValidate, kCompare };

struct PlanOptions {
  PlanMode mode = PlanMode::kPredict;
  std::string model, model_file, hardware, hardware_file, cluster, db;
  std::vector<std::string> calibrate;  // comm records and measured steps (plan_calibrate.h)
  std::string precision = "bf16";
  std::string algorithm = "auto";
  int64_t devices = 0;
  int tp = 1, pp = 1, dp = 0, ep = 1, cp = 1, vpp = 1, zero = 1;
  int etp = 0;                          // 0: the same as tp
  std::string schedule;                 // empty: interleaved when vpp > 1, else 1f1b
  bool ep_overlap = false, tp_overlap = false;
  std::map<std::string, bool> layout_flags;  // by plan::kLayoutFlags' key: its option given
  double capacity_factor = 0;
  bool einsum_dispatch = false;
  bool shared_expert_overlap = false;
  std::string dispatch_precision = "bf16";
  std::string cp_algo = "ring";
  std::string dispatcher = "alltoall";
  int64_t mbs = 1, gbs = 0;
  double batch_tokens = 16.0 * 1024 * 1024;  // plan::kDefaultBatchTokens
  std::string recompute = "selective";
  bool no_flash_attention = false;
  bool no_dp_overlap = false;
  // Reliability and cost.
  std::optional<double> failure_rate, mtbf_hours, tokens;
  double storage_gbps = 0, restart_minutes = 0, pue = 0;
  // Search and scale.
  int top = 10;
  int max_tp = 0;
  int max_cp = 16;
  std::vector<std::string> schedules;  // empty: every schedule
  bool no_overlap = false;             // search only layouts without EP/TP overlap
  std::string rank = "point";          // or "pessimistic": by the band's low end
  bool allow_unusual = false;          // search, scale, compare: include unusual layouts
  std::vector<int64_t> scale_devices = {1000, 10000, 100000};
  // Compare: chips (catalog names, then files), the same counts for all or a purchase budget.
  std::vector<std::string> compare_hardware, compare_hardware_files;
  std::vector<int64_t> compare_devices;
  std::optional<double> budget;
  std::string html;  // the HTML page ("-": standard output)
  // Validate.
  bool rows = false;
  bool calibrated = false;  // also each run set calibrated leave-one-out
  std::vector<std::string> sets;  // --set: run-set files checked instead of the shipped sets
  std::string json;  // plumb.plan*/1 to this file ("-": standard output)
};

void setup_plan(CLI::App& app, PlanOptions& options);
int run_plan(const PlanOptions& options);

}  // namespace plumb::cli
