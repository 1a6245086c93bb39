#include "report/plan_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "plan/layout_names.h"

namespace plumb::report {
namespace {

double pct(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

// "−8.8%": a change as a signed share of where it started.
std::string change_text(double before, double after) {
  return before != 0 ? fmt::format("{:+.1f}%", 100 * (after / before - 1)) : "";
}

// Of each part the steps measured, the largest relative error before and after the fit.
std::map<plan::StepPart, std::pair<double, double>> worst_errors(const plan::StepFit& fit) {
  std::map<plan::StepPart, std::pair<double, double>> worst;
  for (const plan::StepResidual& r : fit.residuals) {
    if (!(r.measured > 0)) continue;
    auto& [before, after] = worst[r.part];
    before = std::max(before, std::fabs(r.before / r.measured - 1));
    after = std::max(after, std::fabs(r.after / r.measured - 1));
  }
  return worst;
}

// What the fit to measured steps changed, one line per efficiency, then how close the fitted
// model comes to what was measured.
void print_fit(const plan::StepFit& fit, const std::vector<std::string>& sources,
               std::ostream& out) {
  fmt::print(out, "# calibrated from {} measured step{} ({}):\n", sources.size(),
             sources.size() == 1 ? "" : "s", join(sources, ", "));
  for (const plan::ParameterChange& c : fit.changes) {
    if (!c.measured) {
      fmt::print(out, "#   {:<26} {:>9.4g}  kept: no step measures it ({})\n", c.name,
                 c.before * c.shown_scale, c.informs);
      continue;
    }
    fmt::print(out, "#   {:<26} {:>9.4g} → {:<9.4g} {:>7}  from {}{}\n", c.name,
               c.before * c.shown_scale, c.after * c.shown_scale,
               change_text(c.before, c.after), c.informs, c.at_bound ? " (at its physical bound)" : "");
  }
  std::vector<std::string> errors;
  for (const auto& [part, e] : worst_errors(fit)) {
    errors.push_back(fmt::format("{} {:.1f}% (was {:.1f}%)", plan::step_part_name(part),
                                 100 * e.second, 100 * e.first));
  }
  fmt::print(out, "#   largest error against the measured steps: {}\n", join(errors, ", "));
}

void print_header(const PlanContext& c, const plan::Prediction& p, std::ostream& out) {
  fmt::print(out, "# plumb plan · {} on {} × {} ({})\n", c.model, c.devices, c.hardware, p.precision);
  fmt::print(out, "# cluster  {}\n", c.cluster);
  fmt::print(out, "# network  {}\n", c.network);
  for (const std::string& m : c.measured) fmt::print(out, "#   measured: {}\n", m);
  if (c.fit) print_fit(*c.fit, c.fit_sources, out);
  for (const std::string& n : c.notes) fmt::print(out, "# note: {}\n", n);
}

void print_breakdown(const plan::Prediction& p, std::ostream& out) {
  const plan::Breakdown& b = p.breakdown;
  const double t = p.step_time_s;
  fmt::print(out, "{:<34} {:>10} {:>7}\n", "step time breakdown", "seconds", "share");
  const std::pair<const char*, double> parts[] = {
      {"compute (fwd, bwd, recompute)", b.compute}, {"exposed TP communication", b.tp},
      {"exposed CP communication", b.cp},           {"exposed EP all-to-all", b.ep},
      {"exposed PP send/recv", b.pp},               {"pipeline bubble", b.bubble},
      {"exposed DP / ZeRO communication", b.dp},    {"optimizer step", b.optimizer}};
  for (const auto& [name, s] : parts) {
    fmt::print(out, "  {:<32} {:>10.3f} {:>6.1f}%\n", name, s, pct(s, t));
  }
  fmt::print(out, "compute waits on communication {:.1f}% of the step\n", 100 * p.comm_wait_share);
}

// "stage 0: 7 layers + embedding", "stage 15: 7 layers + output layer".
std::string stage_text(const plan::MemoryUse& m) {
  std::string text = fmt::format("stage {}: {} layers", m.stage, m.stage_layers);
  if (m.stage_embedding) text += " + embedding";
  if (m.stage_output) text += " + output layer";
  return text;
}

void print_memory(const plan::MemoryUse& m, std::ostream& out) {
  fmt::print(out, "{:<34} {:>10}\n", "memory per device", "GB");
  const std::pair<const char*, double> parts[] = {{"weights", m.weights},
                                                  {"gradients", m.grads},
                                                  {"optimizer states", m.optimizer},
                                                  {"activations", m.activations},
                                                  {"communication buffers", m.buffers},
                                                  {"runtime reserve", m.reserved}};
  for (const auto& [name, bytes] : parts) fmt::print(out, "  {:<32} {:>10.2f}\n", name, bytes / kGB);
  fmt::print(out, "  {:<32} {}\n", "of the fullest stage", stage_text(m));
  const double need = m.total() + m.reserved;
  if (m.fits()) {
    fmt::print(out, "  {:<32} {:>10.2f} of {:.2f}: fits ({:.2f} GB free)\n", "total", need / kGB,
               m.capacity / kGB, (m.capacity - need) / kGB);
  } else {
    fmt::print(out, "  {:<32} {:>10.2f} of {:.2f}: DOES NOT FIT ({:.2f} GB over)\n", "total",
               need / kGB, m.capacity / kGB, (need - m.capacity) / kGB);
  }
}

void print_outlook(const plan::Outlook& o, std::ostream& out) {
  const plan::Reliability& r = o.at_daly;
  fmt::print(out,
             "reliability  {:.3g} failures per device-hour → one interruption every {:.2f} h\n",
             o.inputs.failures_per_device_hour, o.job_mtbf_h);
  fmt::print(out,
             "  checkpoint {:.2f} TB in {:.0f} s at {:.0f} GB/s · restart {:.0f} s · interval "
             "Young {:.0f} s, Daly {:.0f} s\n",
             o.checkpoint_bytes / 1e12, r.checkpoint_s, o.inputs.storage_gbps, r.restart_s,
             o.young_s, o.daly_s);
  fmt::print(out,
             "  goodput {:.1f}% (checkpoints {:.1f}%, failures {:.1f}%) → {:.0f} effective "
             "tokens/s\n",
             100 * r.goodput, 100 * r.checkpoint_waste, 100 * r.failure_waste,
             o.effective_tokens_per_s);
  if (!o.cost) return;
  const plan::TrainingCost& c = *o.cost;
  std::string energy = c.energy_mwh ? fmt::format("{:.0f} MWh", *c.energy_mwh) : "energy unknown (no TDP)";
  std::string money = c.usd ? fmt::format("${:.3g}", *c.usd) : "no cloud price in the catalog";
  fmt::print(out, "cost  {:.3g} tokens: {:.1f} days, {:.3g} device-hours, {} (PUE {}), {}\n",
             *o.inputs.tokens, c.days, c.device_hours, energy, o.inputs.pue, money);
}


nlohmann::json input_json(const PlanInput& i) {
  return {{"name", i.name}, {"path", i.path}, {"yaml", i.yaml}};
}

nlohmann::json fit_json(const plan::StepFit& fit, const std::vector<std::string>& sources) {
  nlohmann::json parameters = nlohmann::json::array();
  for (const plan::ParameterChange& c : fit.changes) {
    // In the unit the name gives, as the console shows them: "kernel overhead (µs)" in µs.
    parameters.push_back({{"name", c.name}, {"informed_by", c.informs},
                          {"before", c.before * c.shown_scale}, {"after", c.after * c.shown_scale},
                          {"measured", c.measured}, {"at_bound", c.at_bound}});
  }
  nlohmann::json residuals = nlohmann::json::array();
  for (const plan::StepResidual& r : fit.residuals) {
    residuals.push_back({{"source", r.source}, {"part", plan::step_part_name(r.part)},
                         {"measured_s", r.measured}, {"before_s", r.before}, {"after_s", r.after}});
  }
  return {{"sources", sources}, {"parameters", parameters}, {"residuals", residuals}};
}

nlohmann::json context_json(const PlanContext& c) {
  const PlanInputs& in = c.inputs;
  return {{"efficiencies", c.fit ? fit_json(*c.fit, c.fit_sources) : nlohmann::json()},
          {"model", c.model},     {"hardware", c.hardware}, {"devices", c.devices}, {"seq_len", c.seq_len},
          {"cluster", c.cluster}, {"network", c.network},   {"measured", c.measured},
          {"notes", c.notes},
          {"inputs",
           {{"model", input_json(in.model)},
            {"hardware", input_json(in.hardware)},
            {"cluster", in.cluster ? input_json(*in.cluster) : nlohmann::json()}}}};
}

}  // namespace

nlohmann::json layout_json(const plan::Layout& p) {
  nlohmann::json j = {
      {"tp", p.tp},
      {"cp", p.cp},
      {"pp", p.pp},
      {"vpp", p.vpp},
      {"dp", p.dp},
      {"ep", p.ep},
      {"micro_batch", p.micro_batch},
      {"global_batch", p.global_batch},
      {"micro_batches", p.micro_batches()},
      {"zero", p.zero},
      {"recompute", recompute_name(p.recompute)},
      {"flash_attention", p.flash_attention},
      {"etp", p.expert_tp()},
      {"schedule", schedule_name(p.pipeline_schedule())},
      {"ep_overlap", p.ep_overlap},
      {"shared_expert_overlap", p.shared_expert_overlap},
      {"tp_overlap", p.tp_overlap},
      {"dispatch_precision", plan::name_of(plan::kDispatchPrecisionNames, p.dispatch)},
      {"capacity_factor", p.capacity_factor},
      {"einsum_dispatch", p.einsum_dispatch},
      {"cp_algo", plan::name_of(plan::kCpAlgoNames, p.cp_algo)},
      {"dispatcher", plan::name_of(plan::kDispatcherNames, p.dispatcher)}};
  for (const plan::LayoutFlag& f : plan::kLayoutFlags) j[f.key] = p.*f.member;
  return j;
}

namespace {

// A layout choice by its name (plan/layout_names.h).
template <class T>
T layout_choice(const JsonFields& f, const nlohmann::json& j, const std::string& path,
                const char* key, const std::map<std::string, T>& names) {
  const std::string word = f.text(j, path, key);
  if (const auto it = names.find(word); it != names.end()) return it->second;
  std::vector<std::string> known;
  for (const auto& [name, value] : names) known.push_back(name);
  f.fail(JsonFields::at(path, key), fmt::format("'{}' is none of {}", word, join(known, ", ")));
}

}  // namespace

plan::Layout layout_from_json(const nlohmann::json& j, const JsonFields& f,
                              const std::string& path) {
  // The bounds of plumb plan's own options: a size 0 would divide by zero, a size beyond the
  // most devices plumb plans for would overflow their product.
  constexpr int64_t kMaxSize = plan::kMaxDevices;
  const auto size = [&](const char* key) {
    return static_cast<int>(f.integer(j, path, key, 1, kMaxSize));
  };
  plan::Layout p;
  p.tp = size("tp");
  p.cp = size("cp");
  p.pp = size("pp");
  p.vpp = size("vpp");
  p.dp = size("dp");
  p.ep = size("ep");
  p.etp = size("etp");
  p.micro_batch = f.integer(j, path, "micro_batch", 1, 1'000'000);
  p.global_batch = f.integer(j, path, "global_batch", 1, 1'000'000'000);
  p.zero = static_cast<int>(f.integer(j, path, "zero", 0, 3));
  p.flash_attention = f.boolean(j, path, "flash_attention");
  p.ep_overlap = f.boolean(j, path, "ep_overlap");
  p.tp_overlap = f.boolean(j, path, "tp_overlap");
  // Added after the first plans were written: optional.
  if (j.contains("shared_expert_overlap")) {
    p.shared_expert_overlap = f.boolean(j, path, "shared_expert_overlap");
  }
  p.capacity_factor = f.number(j, path, "capacity_factor");
  if (p.capacity_factor < 0 || p.capacity_factor > 100) {
    f.fail(JsonFields::at(path, "capacity_factor"),
           fmt::format("expected a number from 0 to 100, got {:g}", p.capacity_factor));
  }
  p.einsum_dispatch = f.boolean(j, path, "einsum_dispatch");
  p.recompute = layout_choice(f, j, path, "recompute", plan::kRecomputeNames);
  p.schedule = layout_choice(f, j, path, "schedule", plan::kScheduleNames);
  p.dispatch = layout_choice(f, j, path, "dispatch_precision", plan::kDispatchPrecisionNames);
  if (j.contains("cp_algo")) p.cp_algo = layout_choice(f, j, path, "cp_algo", plan::kCpAlgoNames);
  if (j.contains("dispatcher")) {
    p.dispatcher = layout_choice(f, j, path, "dispatcher", plan::kDispatcherNames);
  }
  for (const plan::LayoutFlag& flag : plan::kLayoutFlags) {
    if (j.contains(flag.key)) p.*flag.member = f.boolean(j, path, flag.key);
  }
  return p;
}

const char* recompute_name(plan::Recompute r) {
  return plan::name_of(plan::kRecomputeNames, r).c_str();
}

const char* schedule_name(plan::Schedule s) {
  return plan::name_of(plan::kScheduleNames, s).c_str();
}

std::string layout_text(const plan::Layout& p) {
  std::string text =
      fmt::format("tp {} · cp {} · pp {} · vpp {} · dp {} · ep {} · mbs {} · ZeRO {} · recompute {}",
                  p.tp, p.cp, p.pp, p.vpp, p.dp, p.ep, p.micro_batch, p.zero,
                  recompute_name(p.recompute));
  if (p.expert_tp() != p.tp) text += fmt::format(" · etp {}", p.expert_tp());
  const plan::Schedule s = p.pipeline_schedule();
  if (s == plan::Schedule::kZeroBubble || s == plan::Schedule::kDualPipe) {
    text += fmt::format(" · {}", schedule_name(s));
  }
  if (p.ep_overlap) text += " · ep-overlap";
  if (p.shared_expert_overlap) text += " · shared-expert-overlap";
  if (p.tp_overlap) text += " · tp-overlap";
  if (p.dispatch == plan::DispatchPrecision::kFp8) text += " · fp8 dispatch";
  if (p.capacity_factor > 0) text += fmt::format(" · capacity {:g}", p.capacity_factor);
  if (p.einsum_dispatch) text += " · einsum dispatch";
  if (p.cp_algo == plan::CpAlgo::kUlysses) text += " · ulysses cp";
  if (p.dispatcher != plan::Dispatcher::kAllToAll) {
    text += fmt::format(" · {} dispatcher", plan::name_of(plan::kDispatcherNames, p.dispatcher));
  }
  for (const plan::LayoutFlag& f : plan::kLayoutFlags) {
    if (p.*f.member == f.set) text += fmt::format(" · {}", f.text);
  }
  return text;
}

BandedFigures banded(const plan::BandModel& m, const plan::Prediction& p) {
  const plan::Band b = plan::band_for(m, plan::overhead_share(p));
  return {p.step_time_s / b.high, p.step_time_s / b.low, p.tokens_per_s * b.low,
          p.tokens_per_s * b.high, p.mfu * b.low, p.mfu * b.high};
}

double pessimistic_tokens_per_s(const std::optional<plan::BandModel>& m, const plan::Prediction& p) {
  return m && !m->empty() ? plan::pessimistic_tokens_per_s(*m, p) : p.tokens_per_s;
}

namespace {

void print_band(const std::optional<plan::BandModel>& m, const plan::Prediction& p,
                std::ostream& out) {
  if (!m) return;
  if (m->empty()) {
    fmt::print(out, "band     none: {}\n", m->basis);
    return;
  }
  const BandedFigures f = banded(*m, p);
  fmt::print(out, "band     {:.0f}%: {:.3f}–{:.3f} s · {:.0f}–{:.0f} tokens/s · MFU {:.1f}–{:.1f}% · {}\n",
             100 * m->level, f.step_low, f.step_high, f.tokens_low, f.tokens_high, 100 * f.mfu_low,
             100 * f.mfu_high, m->basis);
}

}  // namespace

nlohmann::json band_json(const std::optional<plan::BandModel>& m, const plan::Prediction& p) {
  if (!m || m->empty()) return nullptr;
  const BandedFigures f = banded(*m, p);
  return {{"level", m->level},
          {"step_time_s", {f.step_low, f.step_high}},
          {"tokens_per_s", {f.tokens_low, f.tokens_high}},
          {"mfu", {f.mfu_low, f.mfu_high}},
          {"runs", m->rows},
          {"calibrated", m->calibrated},
          {"basis", m->basis}};
}

void print_plan(const PlanContext& c, const plan::Prediction& p, const plan::Outlook& o,
                std::ostream& out) {
  print_header(c, p, out);
  fmt::print(out, "layout   {}\n", layout_text(p.layout));
  fmt::print(out, "batch    {} sequences × {} tokens per step, {} micro-batches per pipeline\n",
             p.layout.global_batch, c.seq_len, p.layout.micro_batches());
  fmt::print(out,
             "step     {:.3f} s · {:.0f} tokens/s · {:.1f} TFLOP/s per device ({:.1f} with "
             "recompute) · MFU {:.1f}% · HFU {:.1f}%\n",
             p.step_time_s, p.tokens_per_s, p.tflops_per_device, p.hardware_tflops_per_device,
             100 * p.mfu, 100 * p.hfu);
  print_band(c.band, p, out);
  print_breakdown(p, out);
  print_memory(p.memory, out);
  print_outlook(o, out);
}

nlohmann::json prediction_json(const plan::Prediction& p) {
  const plan::Breakdown& b = p.breakdown;
  const plan::MemoryUse& m = p.memory;
  return {{"layout", layout_json(p.layout)},
          {"precision", p.precision},
          {"step_time_s", p.step_time_s},
          {"tokens_per_s", p.tokens_per_s},
          {"tflops_per_device", p.tflops_per_device},
          {"hardware_tflops_per_device", p.hardware_tflops_per_device},
          {"mfu", p.mfu},
          {"hfu", p.hfu},
          {"comm_wait_share", p.comm_wait_share},
          {"memory_bytes",
           {{"weights", m.weights},
            {"grads", m.grads},
            {"optimizer", m.optimizer},
            {"activations", m.activations},
            {"buffers", m.buffers},
            {"reserved", m.reserved},
            {"total", m.total()},
            {"capacity", m.capacity}}},
          {"memory_stage",
           {{"stage", m.stage},
            {"layers", m.stage_layers},
            {"embedding", m.stage_embedding},
            {"output_layer", m.stage_output}}},
          {"fits", m.fits()},
          {"breakdown_s",
           {{"compute", b.compute},
            {"tp", b.tp},
            {"cp", b.cp},
            {"ep", b.ep},
            {"pp", b.pp},
            {"bubble", b.bubble},
            {"dp", b.dp},
            {"optimizer", b.optimizer}}}};
}

nlohmann::json plan_json(const PlanContext& c, const plan::Prediction& p, const plan::Outlook& o) {
  nlohmann::json j = prediction_json(p);
  j["schema"] = "plumb.plan/1";
  j["context"] = context_json(c);
  j["band"] = band_json(c.band, p);
  const plan::Reliability& r = o.at_daly;
  j["reliability"] = {{"failures_per_device_hour", o.inputs.failures_per_device_hour},
                      {"job_mtbf_h", o.job_mtbf_h},
                      {"checkpoint_bytes", o.checkpoint_bytes},
                      {"checkpoint_s", r.checkpoint_s},
                      {"restart_s", r.restart_s},
                      {"young_interval_s", o.young_s},
                      {"daly_interval_s", o.daly_s},
                      {"goodput", r.goodput},
                      {"effective_tokens_per_s", o.effective_tokens_per_s}};
  if (o.cost) {
    j["cost"] = {{"tokens", *o.inputs.tokens},
                 {"days", o.cost->days},
                 {"device_hours", o.cost->device_hours},
                 {"energy_mwh", o.cost->energy_mwh ? nlohmann::json(*o.cost->energy_mwh) : nlohmann::json()},
                 {"usd", o.cost->usd ? nlohmann::json(*o.cost->usd) : nlohmann::json()},
                 {"pue", o.inputs.pue}};
  }
  return j;
}

}  // namespace plumb::report
