// `plumb plan compare`: which chip to buy or rent for one training run. For each chip, at each
// device count (given, or those a purchase budget buys), the fastest layout (plan::search, top 1),
// what failures and checkpoints leave of it (plan::outlook), and what the run costs: days,
// device-hours, energy and the site's power, and money bought versus rented (docs/plan.md,
// "plumb plan compare").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/hardware.h"
#include "plan/model.h"
#include "plan/outlook.h"
#include "plan/band.h"
#include "plan/search.h"
#include "plan/step.h"

namespace plumb::plan {

// With a budget, each chip is compared at the cluster the whole budget buys and at the clusters
// half and a quarter of it buy: a buyer sees what a smaller cluster of the same chip gives up.
inline constexpr double kBudgetTiers[] = {1.0, 0.5, 0.25};
// A cluster is bought in whole nodes, and its node count has no prime factor above 5 (a 5-smooth
// number: 1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, ...), so that its devices split into
// tp · cp · pp · dp in many ways; a prime count of nodes would leave the search pp = 1 and blame
// the chip for the count. The largest such count at or below n nodes spends at least 90% of what n
// would from 100 nodes on, 93.8% from 1,000 and 96% from 10,000.
inline constexpr int64_t kLargestNodeFactor = 5;
inline constexpr double kWattsPerMegawatt = 1e6;

// One chip to compare: what the user named it, where it was read from, and its figures.
struct CompareChip {
  std::string label;   // the catalog name ("h100-sxm") or the file's name without .yaml
  std::string source;  // the file its figures (and their sources, in comments) come from
  HardwareSpec hardware;
};

struct CompareSpec {
  double tokens = 0;                // tokens to train
  std::optional<double> budget_usd;  // purchase budget: sizes each chip's cluster
  std::vector<int64_t> devices;     // without a budget: the same counts for every chip
  std::string precision = "bf16";   // each chip that has a peak for it; else bf16 and a note
  SearchSpace space;                // the search at each count (devices filled per row)
  OutlookInputs outlook;            // failures, checkpoints, PUE (tokens is set from `tokens`)
  std::vector<Residual> residuals;  // the published runs each row's band is drawn from; none: no band
};

// What a run costs, from its wall time (outlook: failures and checkpoints included).
struct CompareCosts {
  double days = 0;
  double device_hours = 0;               // devices × wall hours
  std::optional<double> energy_mwh;      // devices × tdp_w × wall hours × PUE
  std::optional<double> site_mw;         // devices × tdp_w × PUE: the power the site must supply
  std::optional<double> buy_usd;         // price_usd × devices
  std::optional<double> rent_usd;        // rent_usd_per_hour × device-hours
  std::optional<double> break_even_days; // renting the cluster this long costs its price
};

// One device count of one chip.
struct CompareRow {
  int64_t devices = 0;
  double budget_share = 0;           // the tier (1, 0.5, 0.25) with a budget; 0 without
  std::optional<Prediction> best;    // none: no layout fits
  std::string why;                   // why none fits, or why there is no cost
  Outlook outlook;
  std::optional<CompareCosts> costs;  // none: no layout, or goodput 0 (the run would not end)
  std::optional<BandModel> band;      // of runs like this one (plan/band.h)
};

struct ChipComparison {
  CompareChip chip;
  std::string precision;  // the one used
  int devices_per_node = 0;
  std::vector<CompareRow> rows;
  std::vector<std::string> notes;  // no price, precision fallback, budget below one node, ...
};

struct Comparison {
  std::string model;
  CompareSpec spec;
  std::vector<ChipComparison> chips;
  double seconds = 0;  // wall time of the searches
};

// The largest number ≤ n with no prime factor above kLargestNodeFactor (0 when n < 1).
int64_t largest_smooth(int64_t n);

// The device counts a purchase budget buys, one per tier of kBudgetTiers that buys at least one
// node: nodes = largest_smooth(⌊share × budget / (price × devices_per_node)⌋), at most kMaxDevices
// devices; a tier that repeats the one before it is dropped.
struct BudgetCount {
  double share = 0;
  int64_t devices = 0;
};
std::vector<BudgetCount> budget_counts(double budget_usd, double price_usd, int devices_per_node);

// The costs of a run of `days` on `devices` of `hw` (docs/plan.md, "plumb plan compare").
CompareCosts compare_costs(double days, int64_t devices, const HardwareSpec& hw, double pue);

// The precision a chip runs: `asked` when the chip has a peak for it, else bf16 and a note.
std::string precision_for(const HardwareSpec& hw, const std::string& asked,
                          std::vector<std::string>& notes);

// Called as each chip finishes, with (chips done, chips).
using CompareProgress = std::function<void(size_t done, size_t total)>;

// Every chip at every count: one Predictor per chip, the chips spread over the machine's cores.
// Throws plumb::Error naming every chip that cannot be planned (no scale-out bandwidth, no bf16
// peak) before any search runs.
Comparison compare(const ModelSpec& m, const std::vector<CompareChip>& chips,
                   const CompareSpec& spec, const CompareProgress& progress = {});

}  // namespace plumb::plan
