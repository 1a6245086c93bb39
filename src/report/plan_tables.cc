// plumb plan search / scale / validate / compare: tables and their JSON.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "common/strings.h"
#include "report/plan_reporter.h"

namespace plumb::report {
namespace {

void print_context(const PlanContext& c, std::ostream& out) {
  if (c.devices > 0) {
    fmt::print(out, "# {} on {} × {} · cluster {}\n", c.model, c.devices, c.hardware, c.cluster);
  } else {
    fmt::print(out, "# {} on {} · cluster {}\n", c.model, c.hardware, c.cluster);
  }
  fmt::print(out, "# network  {}\n", c.network);
  for (const std::string& m : c.measured) fmt::print(out, "#   measured: {}\n", m);
  for (const std::string& n : c.notes) fmt::print(out, "# note: {}\n", n);
}

// The schedule and what else differs from the defaults: "dualpipe etp 1 ep-overlap".
std::string schedule_column(const plan::Layout& l) {
  std::string text = schedule_name(l.pipeline_schedule());
  if (l.expert_tp() != l.tp) text += fmt::format(" etp {}", l.expert_tp());
  if (l.ep_overlap) text += " ep-overlap";
  if (l.shared_expert_overlap) text += " shared-expert-overlap";
  if (l.tp_overlap) text += " tp-overlap";
  return text;
}

void print_layout_row(int rank, const plan::Prediction& p, double low_tokens_per_s,
                      std::ostream& out) {
  const plan::Layout& l = p.layout;
  fmt::print(out, "{:>3} {:>3} {:>3} {:>4} {:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<9} {:>9.3f} {:>11.0f} {:>11.0f} {:>6.1f}% {:>8.1f} {:>6.1f}%  {}\n",
             rank, l.tp, l.cp, l.pp, l.vpp, l.dp, l.ep, l.micro_batch, l.global_batch, l.zero,
             recompute_name(l.recompute), p.step_time_s, p.tokens_per_s, low_tokens_per_s, 100 * p.mfu,
             (p.memory.total() + p.memory.reserved) / kGB, 100 * p.comm_wait_share,
             schedule_column(l));
}

void print_layout_header(std::ostream& out) {
  fmt::print(out, "{:>3} {:>3} {:>3} {:>4} {:>3} {:>6} {:>4} {:>4} {:>5} {:>4} {:<9} {:>9} {:>11} {:>11} {:>7} {:>8} {:>7}  {}\n",
             "#", "tp", "cp", "pp", "vpp", "dp", "ep", "mbs", "gbs", "zero", "recompute", "step s",
             "tokens/s", "low tok/s", "MFU", "mem GB", "comm", "schedule");
}

// A run-set row (validation_set.h) also names its run, quantity, source, the fields its file
// assumed and why, and what plumb noted; the built-in sets' rows keep their five keys.
nlohmann::json row_json(const plan::ValidationRow& r) {
  nlohmann::json row = {{"group", r.group},
                        {"layout", r.layout},
                        {"predicted", r.predicted},
                        {"published", r.published},
                        {"error", r.error()}};
  if (r.name.empty()) return row;
  nlohmann::json assumed = nlohmann::json::object();
  for (const auto& [field, why] : r.assumed) assumed[field] = why;
  row["name"] = r.name;
  row["split"] = r.split;
  row["quantity"] = r.quantity;
  row["source"] = r.source;
  row["assumed"] = assumed;
  row["notes"] = r.notes;
  return row;
}

// A run set's figure: four significant digits, whole numbers from 10,000 (tokens/s: 43140, not
// 4.314e+04; MFU 0.3812; step time 6.678 s).
std::string figure(double v) {
  return std::abs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
}

// --rows for a run set: one line per run, then its layout, source, assumptions and notes. The
// name and quantity columns are as wide as their longest entry.
void print_run_rows(const plan::ValidationSet& s, std::ostream& out) {
  size_t name_width = 3, quantity_width = 8;
  for (const plan::ValidationRow& r : s.rows) {
    name_width = std::max(name_width, r.name.size());
    quantity_width = std::max(quantity_width, r.quantity.size());
  }
  fmt::print(out, "{:<{}} {:<{}} {:>11} {:>11} {:>8}\n", "run", name_width, "quantity",
             quantity_width, "predicted", "published", "error");
  for (const plan::ValidationRow& r : s.rows) {
    fmt::print(out, "{:<{}} {:<{}} {:>11} {:>11} {:>+7.1f}%\n", r.name, name_width, r.quantity,
               quantity_width, figure(r.predicted), figure(r.published), 100 * r.error());
    fmt::print(out, "    layout {}{}\n", r.layout, r.group.empty() ? "" : " · group " + r.group);
    if (!r.source.empty()) fmt::print(out, "    source {}\n", r.source);
    for (const auto& [field, why] : r.assumed) fmt::print(out, "    assumed {}: {}\n", field, why);
    for (const std::string& n : r.notes) fmt::print(out, "    note: {}\n", n);
  }
}

void print_set_rows(const plan::ValidationSet& s, std::ostream& out) {
  if (!s.rows.empty() && !s.rows.front().name.empty()) return print_run_rows(s, out);
  fmt::print(out, "{:<8} {:<26} {:>11} {:>11} {:>8}\n", "model", "layout", "predicted",
             "published", "error");
  for (const plan::ValidationRow& r : s.rows) {
    fmt::print(out, "{:<8} {:<26} {:>11.1f} {:>11.1f} {:>+7.1f}%\n", r.group, r.layout,
               r.predicted, r.published, 100 * r.error());
  }
}

nlohmann::json set_json(const plan::ValidationSet& s, const ValidationTarget& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const plan::ValidationRow& r : s.rows) rows.push_back(row_json(r));
  return {{"name", s.name},
          {"source", s.source},
          {"quantity", s.quantity},
          {"rows", rows},
          {"mape", s.mape},
          {"max_abs_error", s.max_abs_error},
          {"spearman", s.spearman},
          {"target", {{"max_mape", t.max_mape}, {"max_abs_error", t.max_abs_error}, {"min_spearman", t.min_spearman}}},
          {"meets_target", meets(s, t)}};
}


// Three significant digits with a k / M / B suffix.
std::string short_number(double v) {
  const std::pair<double, const char*> units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, suffix] : units) {
    if (std::abs(v) >= scale) return fmt::format("{:.3g}{}", v / scale, suffix);
  }
  return fmt::format("{:.3g}", v);
}

std::string or_dash(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : "—";
}

std::string usd_or_dash(const std::optional<double>& v) { return v ? usd_short(*v) : "—"; }
std::string short_or_dash(const std::optional<double>& v) { return v ? short_number(*v) : "—"; }

std::string quoted(const std::string& date) { return date.empty() ? "undated" : date; }

// A file relative to the working directory when it lies below it, else as given.
std::string shown_path(const std::string& path) {
  std::error_code ec;
  const std::string relative = std::filesystem::proximate(path, ec).string();
  return !ec && relative.rfind("..", 0) != 0 ? relative : path;
}

// "budget $1e+09 to buy (whole nodes; all, ½ and ¼ of it)" or "devices 8192, 16384".
std::string counts_text(const plan::CompareSpec& s) {
  if (s.budget_usd) {
    return fmt::format("budget {} to buy each chip's cluster (whole nodes: all of it, ½ and ¼)",
                       usd_short(*s.budget_usd));
  }
  std::vector<std::string> counts;
  for (int64_t n : s.devices) counts.push_back(std::to_string(n));
  return "devices " + join(counts, ", ");
}

// The budget column only with a budget: the share of it each row spends.
void print_compare_header(bool budget, std::ostream& out) {
  fmt::print(out,
             "{:<13} {:<4} {:>8} {}{:<36} {:>6} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9}\n",
             "chip", "prec", "devices", budget ? "budget  " : " ", "best layout", "MFU", "MFU 80%", "goodput",
             "days", "device-h", "MWh", "site MW", "buy", "rent", "rent>buy");
}

void print_compare_row(const plan::ChipComparison& c, const plan::CompareRow& r,
                       std::ostream& out) {
  const std::string percent = fmt::format("{:.0f}%", 100 * r.budget_share);
  const std::string share = r.budget_share > 0 ? fmt::format("{:>6}  ", percent) : " ";
  fmt::print(out, "{:<13} {:<4} {:>8} {}", c.chip.label, c.precision, r.devices, share);
  if (!r.best) {
    fmt::print(out, "{}\n", r.why);
    return;
  }
  std::string band = "-";
  if (r.band && !r.band->empty()) {
    const BandedFigures f = banded(*r.band, *r.best);
    band = fmt::format("{:.0f}-{:.0f}%", 100 * f.mfu_low, 100 * f.mfu_high);
  }
  fmt::print(out, "{:<36} {:>5.1f}% {:>9} {:>6.1f}% ", layout_short(r.best->layout), 100 * r.best->mfu,
             band, 100 * r.outlook.at_daly.goodput);
  if (!r.costs) {
    fmt::print(out, "{}\n", r.why);
    return;
  }
  const plan::CompareCosts& k = *r.costs;
  fmt::print(out, "{:>7.1f} {:>8} {:>7} {:>7} {:>7} {:>7} {:>9}\n", k.days,
             count_short(k.device_hours), short_or_dash(k.energy_mwh), short_or_dash(k.site_mw),
             usd_or_dash(k.buy_usd), usd_or_dash(k.rent_usd),
             or_dash(k.break_even_days, "{:.0f} d"));
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json compare_row_json(const plan::CompareRow& r) {
  nlohmann::json j = {{"devices", r.devices}, {"found", r.best.has_value()}};
  if (r.budget_share > 0) j["budget_share"] = r.budget_share;
  if (!r.why.empty()) j["why"] = r.why;
  if (!r.best) return j;
  j["best"] = prediction_json(*r.best);
  j["best"]["band"] = band_json(r.band, *r.best);
  j["job_mtbf_h"] = r.outlook.job_mtbf_h;
  j["goodput"] = r.outlook.at_daly.goodput;
  j["effective_tokens_per_s"] = r.outlook.effective_tokens_per_s;
  if (!r.costs) return j;
  const plan::CompareCosts& k = *r.costs;
  j["days"] = k.days;
  j["device_hours"] = k.device_hours;
  j["energy_mwh"] = optional_json(k.energy_mwh);
  j["site_mw"] = optional_json(k.site_mw);
  j["buy_usd"] = optional_json(k.buy_usd);
  j["rent_usd"] = optional_json(k.rent_usd);
  j["break_even_days"] = optional_json(k.break_even_days);
  return j;
}

nlohmann::json chip_json(const plan::ChipComparison& c) {
  const plan::HardwareSpec& hw = c.chip.hardware;
  nlohmann::json rows = nlohmann::json::array();
  for (const plan::CompareRow& r : c.rows) rows.push_back(compare_row_json(r));
  return {{"label", c.chip.label},
          {"name", hw.name},
          {"source", c.chip.source},
          {"precision", c.precision},
          {"devices_per_node", c.devices_per_node},
          {"tdp_w", optional_json(hw.tdp_w)},
          {"price_usd", optional_json(hw.price_usd)},
          {"price_date", hw.price_date},
          {"rent_usd_per_hour", optional_json(hw.rent_usd_per_hour)},
          {"rent_date", hw.rent_date},
          {"notes", c.notes},
          {"rows", rows}};
}

}  // namespace

std::string usd_short(double usd) { return "$" + short_number(usd); }
std::string count_short(double n) { return short_number(n); }

std::string layout_short(const plan::Layout& p) {
  std::string s = fmt::format("tp{}", p.tp);
  if (p.cp > 1) s += fmt::format(" cp{}", p.cp);
  s += fmt::format(" pp{}", p.pp);
  if (p.vpp > 1) s += fmt::format(" vpp{}", p.vpp);
  s += fmt::format(" dp{}", p.dp);
  if (p.ep > 1) s += fmt::format(" ep{}", p.ep);
  if (p.expert_tp() != p.tp) s += fmt::format(" etp{}", p.expert_tp());
  const plan::Schedule schedule = p.pipeline_schedule();
  if (schedule == plan::Schedule::kZeroBubble || schedule == plan::Schedule::kDualPipe) {
    s += fmt::format(" {}", schedule_name(schedule));
  }
  if (p.ep_overlap) s += " ep-ov";
  if (p.tp_overlap) s += " tp-ov";
  return s;
}

std::string prices_text(const plan::ChipComparison& c) {
  const plan::HardwareSpec& hw = c.chip.hardware;
  const std::string buy =
      hw.price_usd ? fmt::format("buy {} ({})", usd_short(*hw.price_usd), quoted(hw.price_date))
                   : "no price_usd";
  const std::string rent = hw.rent_usd_per_hour
                               ? fmt::format("rent ${:.3g}/h ({})", *hw.rent_usd_per_hour,
                                             quoted(hw.rent_date))
                               : "no rent_usd_per_hour";
  return fmt::format("{}: {} · {} · {}", c.chip.label, buy, rent, shown_path(c.chip.source));
}

void print_compare(const plan::Comparison& c, std::ostream& out) {
  const plan::CompareSpec& s = c.spec;
  fmt::print(out, "# plumb plan compare · {} · {:.3g} tokens · {} · PUE {:g}\n", c.model,
             s.tokens, counts_text(s), s.outlook.pue);
  fmt::print(out,
             "# best layout per count by plan search · {:.3g} failures per device-hour · energy "
             "and site power at TDP · {:.2f} s\n",
             s.outlook.failures_per_device_hour, c.seconds);
  print_compare_header(s.budget_usd.has_value(), out);
  for (const plan::ChipComparison& chip : c.chips) {
    for (const plan::CompareRow& r : chip.rows) print_compare_row(chip, r, out);
  }
  for (size_t i = 0; i < c.chips.size(); ++i) {
    fmt::print(out, "{} {}\n", i == 0 ? "# prices" : "#       ", prices_text(c.chips[i]));
  }
  for (const plan::ChipComparison& chip : c.chips) {
    for (const std::string& n : chip.notes) fmt::print(out, "# note: {}\n", n);
  }
}

nlohmann::json compare_json(const plan::Comparison& c) {
  const plan::CompareSpec& s = c.spec;
  nlohmann::json chips = nlohmann::json::array();
  for (const plan::ChipComparison& chip : c.chips) chips.push_back(chip_json(chip));
  nlohmann::json devices = s.devices;
  return {{"schema", "plumb.plan-compare/1"},
          {"model", c.model},
          {"tokens", s.tokens},
          {"budget_usd", optional_json(s.budget_usd)},
          {"budget_tiers", s.budget_usd ? nlohmann::json(plan::kBudgetTiers) : nlohmann::json()},
          {"devices", s.budget_usd ? nlohmann::json() : devices},
          {"precision", s.precision},
          {"pue", s.outlook.pue},
          {"failures_per_device_hour", s.outlook.failures_per_device_hour},
          {"storage_gbps", s.outlook.storage_gbps},
          {"restart_s", s.outlook.restart_s},
          {"batch_tokens", s.space.batch_tokens},
          {"seconds", c.seconds},
          {"chips", chips}};
}

namespace {

// What `low tok/s` is and what the table is ranked by.
void print_band_basis(const PlanContext& c, const plan::SearchResult& r, std::ostream& out) {
  const char* ranked = r.pessimistic ? "ranked by the band's low end (--rank pessimistic)"
                                     : "ranked by tokens/s (--rank pessimistic: by the band's low end)";
  if (!c.band || c.band->empty()) {
    fmt::print(out, "# no band ({}): low tok/s is the point; {}\n",
               c.band ? c.band->basis : "no validation set was read", ranked);
    return;
  }
  fmt::print(out, "# low tok/s: the {:.0f}% band's low end, from {}; {}\n", 100 * c.band->level,
             c.band->basis, ranked);
}

// " · 1234 unusual left out; --allow-unusual to include them" when the search left some out.
std::string unusual_text(const plan::SearchResult& r) {
  if (r.unusual == 0) return "";
  return fmt::format(" · {} unusual left out; --allow-unusual to include them", r.unusual);
}

}  // namespace

void print_search(const PlanContext& c, const plan::SearchResult& r, const SearchBest& best,
                  std::ostream& out) {
  print_context(c, out);
  fmt::print(out,
             "# {} layouts enumerated, {} valid, {} fit in memory{} · {:.2f} s ({:.0f} layouts/s)\n",
             r.candidates, r.valid, r.fitting, unusual_text(r), r.seconds,
             r.seconds > 0 ? static_cast<double>(r.candidates) / r.seconds : 0.0);
  if (r.top.empty()) {
    fmt::print(out, "no layout fits: every valid layout needs more memory than the device has\n");
    return;
  }
  print_band_basis(c, r, out);
  print_layout_header(out);
  for (size_t i = 0; i < r.top.size(); ++i) {
    print_layout_row(static_cast<int>(i + 1), r.top[i], pessimistic_tokens_per_s(c.band, r.top[i]), out);
  }
  const plan::Breakdown& b = r.top.front().breakdown;
  fmt::print(out,
             "best: compute {:.3f} s, TP {:.3f}, CP {:.3f}, EP {:.3f}, PP {:.3f}, bubble {:.3f}, "
             "DP {:.3f}, optimizer {:.3f}; its whole report:\n",
             b.compute, b.tp, b.cp, b.ep, b.pp, b.bubble, b.dp, b.optimizer);
  fmt::print(out, "  {}\n", best.command);
  for (const std::string& n : best.notes) fmt::print(out, "  note: {}\n", n);
}

nlohmann::json search_json(const PlanContext& c, const plan::SearchResult& r, const SearchBest& best) {
  nlohmann::json top = nlohmann::json::array();
  for (const plan::Prediction& p : r.top) {
    top.push_back(prediction_json(p));
    top.back()["band"] = band_json(c.band, p);
  }
  return {{"schema", "plumb.plan-search/1"},
          {"ranked_by", r.pessimistic ? "pessimistic" : "tokens_per_s"},
          {"context", {{"model", c.model}, {"hardware", c.hardware}, {"devices", c.devices},
                       {"cluster", c.cluster}, {"network", c.network}, {"measured", c.measured},
                       {"notes", c.notes}}},
          {"candidates", r.candidates},
          {"valid", r.valid},
          {"unusual", r.unusual},
          {"oversized", r.oversized},
          {"fitting", r.fitting},
          {"seconds", r.seconds},
          {"top", top},
          {"command", r.top.empty() ? nlohmann::json() : nlohmann::json(best.command)},
          {"best_notes", best.notes}};
}

void print_scale(const PlanContext& c, const std::vector<ScaleRow>& rows, std::ostream& out) {
  print_context(c, out);
  fmt::print(out, "{:>8} {:<60} {:>11} {:>11} {:>6} {:>8} {:>8} {:>8} {:>9}\n", "devices",
             "best layout", "tokens/s", "low tok/s", "MFU", "MTBF h", "Daly s", "goodput", "days");
  for (const ScaleRow& r : rows) {
    if (!r.found) {
      fmt::print(out, "{:>8} {}\n", r.devices, "no layout fits");
      continue;
    }
    const std::string days = r.outlook.cost ? fmt::format("{:.1f}", r.outlook.cost->days) : "-";
    fmt::print(out, "{:>8} {:<60} {:>11.0f} {:>11.0f} {:>5.1f}% {:>8.2f} {:>8.0f} {:>7.1f}% {:>9}\n",
               r.devices, layout_text(r.best.layout), r.best.tokens_per_s,
               pessimistic_tokens_per_s(r.band, r.best), 100 * r.best.mfu, r.outlook.job_mtbf_h,
               r.outlook.daly_s, 100 * r.outlook.at_daly.goodput, days);
  }
  for (const ScaleRow& r : rows) {
    if (r.found && r.band) {
      fmt::print(out, "# low tok/s at {}: the {:.0f}% band's low end, from {}\n", r.devices,
                 100 * r.band->level, r.band->basis);
    }
  }
}

nlohmann::json scale_json(const PlanContext& c, const std::vector<ScaleRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const ScaleRow& r : rows) {
    nlohmann::json row = {{"devices", r.devices}, {"found", r.found}};
    if (r.found) {
      row["best"] = prediction_json(r.best);
      row["best"]["band"] = band_json(r.band, r.best);
      row["job_mtbf_h"] = r.outlook.job_mtbf_h;
      row["daly_interval_s"] = r.outlook.daly_s;
      row["goodput"] = r.outlook.at_daly.goodput;
      row["effective_tokens_per_s"] = r.outlook.effective_tokens_per_s;
      if (r.outlook.cost) {
        row["days"] = r.outlook.cost->days;
        row["device_hours"] = r.outlook.cost->device_hours;
      }
    }
    out.push_back(row);
  }
  return {{"schema", "plumb.plan-scale/1"},
          {"context", {{"model", c.model}, {"hardware", c.hardware}, {"cluster", c.cluster}}},
          {"rows", out}};
}

bool meets(const plan::ValidationSet& set, const ValidationTarget& t) {
  if (set.mape > t.max_mape) return false;
  if (t.max_abs_error > 0 && set.max_abs_error > t.max_abs_error) return false;
  for (const auto& [group, rho] : set.spearman) {
    if (t.min_spearman > 0 && rho < t.min_spearman) return false;
  }
  return true;
}

void print_validation(const std::vector<plan::ValidationSet>& sets,
                      const std::vector<ValidationTarget>& targets, bool rows, std::ostream& out) {
  for (size_t i = 0; i < sets.size(); ++i) {
    const plan::ValidationSet& s = sets[i];
    const ValidationTarget& t = targets[i];
    fmt::print(out, "# {} · {} · {}\n", s.name, s.source, s.quantity);
    if (rows) print_set_rows(s, out);
    fmt::print(out, "{}: {} rows · MAPE {:.1f}% (target ≤ {:.0f}%) · largest error {:.1f}%{}\n", s.name,
               s.rows.size(), 100 * s.mape, 100 * t.max_mape, 100 * s.max_abs_error,
               t.max_abs_error > 0 ? fmt::format(" (target ≤ {:.0f}%)", 100 * t.max_abs_error) : "");
    for (const auto& [group, rho] : s.spearman) {
      fmt::print(out, "  Spearman {:<6} {:.3f}{}\n", group, rho,
                 t.min_spearman > 0 ? fmt::format(" (target ≥ {:.2f})", t.min_spearman) : "");
    }
    fmt::print(out, "{}: {}\n\n", s.name, meets(s, t) ? "meets its target" : "MISSES its target");
  }
}

nlohmann::json validation_json(const std::vector<plan::ValidationSet>& sets,
                               const std::vector<ValidationTarget>& targets,
                               const plan::Coverage& coverage) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < sets.size(); ++i) out.push_back(set_json(sets[i], targets[i]));
  return {{"schema", "plumb.plan-validate/1"},
          {"sets", out},
          {"band_coverage",
           {{"level", plan::kBandLevel},
            {"rows", coverage.rows},
            {"covered", coverage.covered},
            {"check_rows", coverage.check_rows},
            {"check_covered", coverage.check_covered}}}};
}

namespace {

// Issue 34's figure, of one job at 8× the devices or more, within 10% after calibrating on the
// smaller run; then every pair, across sources too: each of all, build and check.
struct PairSummaryKind {
  plan::PairScope scope;
  const char* split;  // "": all
};
constexpr PairSummaryKind kPairSummaries[] = {
    {plan::PairScope::kSameSource, ""}, {plan::PairScope::kSameSource, "build"},
    {plan::PairScope::kSameSource, "check"}, {plan::PairScope::kAll, ""},
    {plan::PairScope::kAll, "build"}, {plan::PairScope::kAll, "check"}};

plan::ScaleSummary pair_summary(const std::vector<plan::ScalePair>& pairs, PairSummaryKind k) {
  return plan::summarize_pairs(pairs, 8, 0.10, k.split, k.scope);
}

void print_pair_summary(const std::vector<plan::ScalePair>& pairs, PairSummaryKind k,
                        std::ostream& out) {
  const plan::ScaleSummary s = pair_summary(pairs, k);
  if (s.pairs == 0) return;
  std::vector<std::string> qualifiers;
  if (*k.split) qualifiers.push_back(fmt::format("{} split", k.split));
  if (k.scope == plan::PairScope::kAll) qualifiers.push_back("across sources too");
  fmt::print(out, "pairs at 8× or more{}: {} · within 10% after calibration {} ({:.0f}%), before "
                  "{} ({:.0f}%)\n",
             qualifiers.empty() ? "" : " (" + join(qualifiers, ", ") + ")", s.pairs, s.within_after,
             100.0 * static_cast<double>(s.within_after) / static_cast<double>(s.pairs),
             s.within_before,
             100.0 * static_cast<double>(s.within_before) / static_cast<double>(s.pairs));
}

}  // namespace

void print_scale_pairs(const std::vector<plan::ScalePair>& pairs, std::ostream& out) {
  fmt::print(out, "# two scales: calibrated on one run alone, the same model on the same device at "
                  "more devices (error of its speed); \"across sources\": the two runs are of two "
                  "source tables or clusters, not one job at two scales\n");
  if (pairs.empty()) fmt::print(out, "no two runs of one model on one device at two scales\n");
  for (const plan::ScalePair& p : pairs) {
    fmt::print(out, "{} ({}) → {} ({}, {:.1f}×): {:+.1f}% before, {:+.1f}% after{}\n", p.small,
               p.small_devices, p.large, p.large_devices,
               static_cast<double>(p.large_devices) / static_cast<double>(p.small_devices),
               100 * p.error_before, 100 * p.error_after, p.same_source ? "" : " (across sources)");
  }
  for (const PairSummaryKind& k : kPairSummaries) print_pair_summary(pairs, k, out);
  fmt::print(out, "\n");
}

nlohmann::json scale_pairs_json(const std::vector<plan::ScalePair>& pairs) {
  nlohmann::json rows = nlohmann::json::array();
  for (const plan::ScalePair& p : pairs) {
    rows.push_back({{"small", p.small},
                    {"small_devices", p.small_devices},
                    {"large", p.large},
                    {"large_devices", p.large_devices},
                    {"error_before", p.error_before},
                    {"error_after", p.error_after},
                    {"split", p.split},
                    {"same_source", p.same_source}});
  }
  nlohmann::json summaries = nlohmann::json::array();
  for (const PairSummaryKind& k : kPairSummaries) {
    const plan::ScaleSummary s = pair_summary(pairs, k);
    summaries.push_back({{"ratio", 8},
                         {"tolerance", 0.10},
                         {"split", *k.split ? k.split : "all"},
                         {"scope", k.scope == plan::PairScope::kAll ? "all" : "same_source"},
                         {"pairs", s.pairs},
                         {"within_before", s.within_before},
                         {"within_after", s.within_after}});
  }
  return {{"pairs", rows}, {"summaries", summaries}};
}

void print_band_coverage(const plan::Coverage& c, double level, std::ostream& out) {
  auto share = [](size_t part, size_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  fmt::print(out, "bands: the {:.0f}% band of each run, drawn from the other runs, holds its "
                  "measured speed for {} of {} ({:.1f}%)",
             100 * level, c.covered, c.rows, share(c.covered, c.rows));
  if (c.check_rows > 0) {
    fmt::print(out, "; check split: {} of {} ({:.1f}%)", c.check_covered, c.check_rows,
               share(c.check_covered, c.check_rows));
  }
  fmt::print(out, "\n");
}

}  // namespace plumb::report
