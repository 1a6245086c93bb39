#include "plan/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/strings.h"
#include "plan/cluster.h"
#include "plan/network.h"

namespace plumb::plan {
namespace {

constexpr const char* kFallbackPrecision = "bf16";

// What stops a chip from being planned at all, before any search: the links the default cluster
// is built from, and a peak for the precision it would run.
std::vector<std::string> chip_problems(const CompareChip& c, const std::string& precision) {
  std::vector<std::string> problems;
  const HardwareSpec& hw = c.hardware;
  const std::pair<const char*, std::optional<double>> links[] = {
      {"scaleup_gbps_per_device", hw.scaleup_gbps_per_device},
      {"scaleout_gbps_per_device", hw.scaleout_gbps_per_device}};
  for (const auto& [key, value] : links) {
    if (!value) {
      problems.push_back(fmt::format("{}: {} gives no {}: plan compare builds each chip's cluster "
                                     "from it", c.source, c.label, key));
    }
  }
  if (!hw.peak_tflops.count(precision) && !hw.peak_tflops.count(kFallbackPrecision)) {
    problems.push_back(fmt::format("{}: {} gives no {} peak: plan compare runs every chip in bf16 "
                                   "or the --precision it has", c.source, c.label,
                                   kFallbackPrecision));
  }
  return problems;
}

// Why a search found no layout, in a few words for a table cell.
std::string nothing_fits(const SearchResult& r, const HardwareSpec& hw) {
  if (r.valid > 0) {
    return fmt::format("no layout fits in {:g} GB ({} valid tried)", hw.hbm_gb, r.valid);
  }
  if (r.oversized > 0) {
    return fmt::format("every valid layout needs a batch over {:g}× --batch-tokens",
                       kMaxBatchOvershoot);
  }
  if (r.unusual > 0) {
    return fmt::format("only unusual layouts ({}; --allow-unusual includes them)", r.unusual);
  }
  return "no valid layout (tp · cp · pp · dp, heads, layers)";
}

// The device counts of one chip: the budget's tiers, or the counts given.
std::vector<BudgetCount> counts_for(const ChipComparison& c, const CompareSpec& spec,
                                    std::vector<std::string>& notes) {
  if (!spec.budget_usd) {
    std::vector<BudgetCount> out;
    for (int64_t n : spec.devices) out.push_back({0, n});
    return out;
  }
  const HardwareSpec& hw = c.chip.hardware;
  if (!hw.price_usd) {
    notes.push_back(fmt::format("{} has no price_usd: a budget cannot size its cluster (--devices "
                                "compares it at given counts)", c.chip.label));
    return {};
  }
  std::vector<BudgetCount> out = budget_counts(*spec.budget_usd, *hw.price_usd, c.devices_per_node);
  if (out.empty()) {
    notes.push_back(fmt::format("${:.0f} buys {:.0f} {}, less than one node of {}",
                                *spec.budget_usd, std::floor(*spec.budget_usd / *hw.price_usd),
                                c.chip.label, c.devices_per_node));
  }
  return out;
}

CompareRow plan_row(const Predictor& predictor, const CompareSpec& spec, const BudgetCount& count) {
  CompareRow row;
  row.devices = count.devices;
  row.budget_share = count.share;
  SearchSpace space = spec.space;
  space.devices = count.devices;
  const SearchResult r = search(predictor, space, 1);
  const HardwareSpec& hw = predictor.hardware();
  if (r.top.empty()) {
    row.why = nothing_fits(r, hw);
    return row;
  }
  row.best = r.top.front();
  if (!spec.residuals.empty()) {
    row.band = band_model(spec.residuals,
                          {predictor.model().moe.has_value(), vendor_of(hw), count.devices});
  }
  OutlookInputs in = spec.outlook;
  in.tokens = spec.tokens;
  row.outlook = outlook(*row.best, predictor.model(), hw, in);
  if (!row.outlook.cost) {
    row.why = "goodput 0: failures outpace checkpoints, the run would not end";
    return row;
  }
  row.costs = compare_costs(row.outlook.cost->days, count.devices, hw, in.pue);
  return row;
}

// One chip, every count, on its own Network and Predictor (a Network records which measured
// curves it used, so two threads never share one).
void plan_chip(const ModelSpec& m, const CompareSpec& spec, ChipComparison& c) {
  c.precision = precision_for(c.chip.hardware, spec.precision, c.notes);
  const ClusterSpec cluster = default_cluster(c.chip.hardware);
  c.devices_per_node = cluster.devices_per_node;
  const Network net(cluster, Algorithm::kAuto);
  const Predictor predictor(m, c.chip.hardware, net, c.precision, compute_model(c.chip.hardware));
  if (!c.chip.hardware.efficiency) {
    c.notes.push_back(fmt::format("{} has no measured GEMM efficiency: {:.2f} assumed",
                                  c.chip.label, kAssumedMamfEfficiency));
  }
  for (const BudgetCount& count : counts_for(c, spec, c.notes)) {
    c.rows.push_back(plan_row(predictor, spec, count));
  }
}

}  // namespace

int64_t largest_smooth(int64_t n) {
  int64_t best = 0;
  for (int64_t a = 1; a <= n; a *= 2) {
    for (int64_t b = a; b <= n; b *= 3) {
      for (int64_t c = b; c <= n; c *= kLargestNodeFactor) best = std::max(best, c);
    }
  }
  return best;
}

std::vector<BudgetCount> budget_counts(double budget_usd, double price_usd, int devices_per_node) {
  std::vector<BudgetCount> out;
  const double node_usd = price_usd * devices_per_node;
  const int64_t max_nodes = kMaxDevices / devices_per_node;
  for (double share : kBudgetTiers) {
    const double affordable = std::floor(share * budget_usd / node_usd);
    const int64_t nodes = largest_smooth(static_cast<int64_t>(
        std::min(affordable, static_cast<double>(max_nodes))));
    if (nodes == 0) break;
    const int64_t devices = nodes * devices_per_node;
    if (!out.empty() && out.back().devices == devices) continue;
    out.push_back({share, devices});
  }
  return out;
}

// Energy: TDP bounds each device's draw from above; PUE adds the facility's cooling and power
// losses (reliability.h, kDefaultPue); host CPUs, network and storage are not counted. The
// site's power is the same draw at every moment of the run. Money: the catalog's price per
// device (its share of a server) and its rent per device-hour.
CompareCosts compare_costs(double days, int64_t devices, const HardwareSpec& hw, double pue) {
  CompareCosts c;
  const double n = static_cast<double>(devices);
  const double hours = days * kHoursPerDay;
  c.days = days;
  c.device_hours = n * hours;
  if (hw.tdp_w) {
    c.site_mw = n * *hw.tdp_w * pue / kWattsPerMegawatt;
    c.energy_mwh = n * *hw.tdp_w * hours * pue / kWattHoursPerMWh;
  }
  if (hw.price_usd) c.buy_usd = *hw.price_usd * n;
  if (hw.rent_usd_per_hour) c.rent_usd = *hw.rent_usd_per_hour * c.device_hours;
  if (hw.price_usd && hw.rent_usd_per_hour && *hw.rent_usd_per_hour > 0) {
    c.break_even_days = *hw.price_usd / (*hw.rent_usd_per_hour * kHoursPerDay);
  }
  return c;
}

std::string precision_for(const HardwareSpec& hw, const std::string& asked,
                          std::vector<std::string>& notes) {
  if (hw.peak_tflops.count(asked)) return asked;
  notes.push_back(fmt::format("{} gives no {} peak: compared in {}", hw.name, asked,
                              kFallbackPrecision));
  return kFallbackPrecision;
}

Comparison compare(const ModelSpec& m, const std::vector<CompareChip>& chips,
                   const CompareSpec& spec, const CompareProgress& progress) {
  std::vector<std::string> problems;
  for (const CompareChip& c : chips) {
    for (std::string& p : chip_problems(c, spec.precision)) problems.push_back(std::move(p));
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  if (chips.empty()) return {m.name, spec, {}, 0};
  const auto start = std::chrono::steady_clock::now();
  Comparison out;
  out.model = m.name;
  out.spec = spec;
  for (const CompareChip& c : chips) out.chips.push_back({c, "", 0, {}, {}});
  std::vector<std::exception_ptr> failed(chips.size());
  std::atomic<size_t> next{0};
  std::mutex report;
  size_t done = 0;
  auto worker = [&] {
    for (size_t i = next++; i < chips.size(); i = next++) {
      try {
        plan_chip(m, spec, out.chips[i]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock(report);
      if (progress) progress(++done, chips.size());
    }
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, chips.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace plumb::plan
