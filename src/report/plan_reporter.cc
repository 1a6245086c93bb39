#include "report/plan_reporter.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>

namespace plumb::report {
namespace {

double pct(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

void print_header(const PlanContext& c, const plan::Prediction& p, std::ostream& out) {
  fmt::print(out, "# plumb plan · {} on {} × {} ({})\n", c.model, c.devices, c.hardware, p.precision);
  fmt::print(out, "# cluster  {}\n", c.cluster);
  fmt::print(out, "# network  {}\n", c.network);
  for (const std::string& m : c.measured) fmt::print(out, "#   measured: {}\n", m);
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

nlohmann::json layout_json(const plan::Layout& p) {
  return {{"tp", p.tp},
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
          {"tp_overlap", p.tp_overlap},
          {"dispatch_precision", p.dispatch == plan::DispatchPrecision::kFp8 ? "fp8" : "bf16"},
          {"capacity_factor", p.capacity_factor},
          {"einsum_dispatch", p.einsum_dispatch}};
}

nlohmann::json context_json(const PlanContext& c) {
  return {{"model", c.model},     {"hardware", c.hardware}, {"devices", c.devices}, {"seq_len", c.seq_len},
          {"cluster", c.cluster}, {"network", c.network},   {"measured", c.measured},
          {"notes", c.notes}};
}

}  // namespace

const char* recompute_name(plan::Recompute r) {
  switch (r) {
    case plan::Recompute::kNone: return "none";
    case plan::Recompute::kSelective: return "selective";
    case plan::Recompute::kFull: return "full";
  }
  return "";
}

const char* schedule_name(plan::Schedule s) {
  switch (s) {
    case plan::Schedule::kOneFOneB: return "1f1b";
    case plan::Schedule::kInterleaved: return "interleaved";
    case plan::Schedule::kZeroBubble: return "zero-bubble";
    case plan::Schedule::kDualPipe: return "dualpipe";
  }
  return "";
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
  return text;
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
