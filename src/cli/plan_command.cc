#include "cli/plan_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/record_source.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/number_option.h"
#include "common/progress.h"
#include "common/strings.h"
#include "common/yaml_strict.h"
#include "cli/plan_calibrate.h"
#include "k8s/job_spec.h"
#include "plan/band.h"
#include "plan/calibration.h"
#include "plan/step_fit.h"
#include "plan/catalog.h"
#include "plan/compare.h"
#include "plan/layout_names.h"
#include "plan/outlook.h"
#include "plan/plausible.h"
#include "plan/search.h"
#include "plan/step.h"
#include "plan/validation.h"
#include "plan/validation_set.h"
#include "report/plan_compare_html.h"
#include "report/plan_reporter.h"

namespace plumb::cli {
namespace {

const std::map<std::string, plan::Algorithm> kAlgorithms = {
    {"auto", plan::Algorithm::kAuto},
    {"ring", plan::Algorithm::kRing},
    {"tree", plan::Algorithm::kTree},
    {"hierarchical", plan::Algorithm::kHierarchical}};

// What each number option accepts. The bounds are far beyond any real run; they catch a mistyped
// exponent, inf and nan before a number reaches a formula (docs/plan.md, "Number options").
constexpr NumberRange kDeviceCount{1, static_cast<double>(plan::kMaxDevices), false, true};
constexpr NumberRange kMicroBatch{1, 1e6, false, true};
constexpr NumberRange kGlobalBatch{1, 1e9, false, true};  // sequences per step
constexpr NumberRange kBatchTokens{1, 1e10};               // Llama 3's 16M × 600
constexpr NumberRange kZeroStage{0, 3, false, true};
constexpr NumberRange kCapacityFactor{0, 100};  // 0: dropless; GShard and DeepSpeed use 1–2
constexpr NumberRange kTop{1, 1000, false, true};
constexpr NumberRange kFailureRate{1e-9, 1};               // per device-hour
constexpr NumberRange kMtbfHours{1, 1e9};
constexpr NumberRange kStorageGbps{1e-3, 1e6};
constexpr NumberRange kRestartMinutes{0, 7 * 24 * 60};     // up to a week
constexpr NumberRange kTokens{1, 1e18};                    // Llama 3's 15.6T × 64,000
constexpr NumberRange kPue{1, 3};
constexpr NumberRange kBudgetUsd{1, 1e13};                 // ten trillion dollars

// Everything a prediction needs, loaded once and checked before anything is computed.
struct Inputs {
  plan::ModelSpec model;
  plan::HardwareSpec hardware;
  plan::ClusterSpec cluster;
  std::unique_ptr<plan::Calibration> calibration;
  std::optional<plan::StepFit> fit;  // from measured steps; none: the documented efficiencies
  std::unique_ptr<plan::Network> network;
  report::PlanContext context;
};

void add_model_options(CLI::App& app, PlanOptions& o) {
  app.add_option("--model", o.model, "A catalog model (data/models): llama3-70b, gpt3-175b, ...");
  app.add_option("--model-file", o.model_file, "Your own model YAML (keys as data/models/*.yaml)");
  app.add_option("--hardware", o.hardware, "A catalog device (data/hardware): h100-sxm, ascend-910c, ...");
  app.add_option("--hardware-file", o.hardware_file, "Your own hardware YAML");
  app.add_option("--cluster", o.cluster,
                 "Cluster YAML: devices_per_node, nodes_per_rack, rail/spine GB/s, oversubscription, "
                 "latency_us, efficiency");
  app.add_option("--calibrate", o.calibrate,
                 "Measurements this cluster gave (repeatable): a comm baseline (id, latest, or plumb "
                 "comm/export JSON), whose busbw curves replace the analytic network, or measured "
                 "steps (a record of plumb step --plan PLAN --save, or its --json), which fit the "
                 "model's efficiencies");
  app.add_option("--db", o.db, "The store --calibrate reads ids from");
  app.add_option("--precision", o.precision, "Peak FLOP/s of this precision")->capture_default_str()
      ->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp4"}));
  app.add_option("--algorithm", o.algorithm, "Collective algorithm; auto takes the fastest")
      ->capture_default_str()->check(CLI::IsMember({"auto", "ring", "tree", "hierarchical"}));
  app.add_option("--batch-tokens", o.batch_tokens,
                 "Without --gbs: tokens per step; the global batch is the multiple of dp × mbs "
                 "(× pp when interleaved) nearest to it")
      ->capture_default_str()->transform(number_option(kBatchTokens));
  app.add_flag("--no-flash-attention", o.no_flash_attention,
               "Attention keeps its s×s scores (as before FlashAttention)");
  app.add_flag("--no-dp-overlap", o.no_dp_overlap,
               "Gradient reduction after the backward, not overlapped with it");
  app.add_option("--json", o.json, "Write JSON here (- for standard output)");
}

// Search, scale and compare leave out layouts practitioners would not run (plan/plausible.h).
void add_allow_unusual_option(CLI::App& app, PlanOptions& o) {
  app.add_flag("--allow-unusual", o.allow_unusual,
               "Include layouts practitioners would not run: fewer than two layers per pipeline "
               "stage, pp × vpp not dividing the layers (docs/plan.md section 8)");
}

// What plan search and plan scale explore beyond tp, cp, pp, ep, mbs, recompute and ZeRO.
void add_space_options(CLI::App& app, PlanOptions& o) {
  app.add_option("--schedules", o.schedules, "Pipeline schedules to explore (default: all)")
      ->delimiter(',')->check(CLI::IsMember({"1f1b", "interleaved", "zero-bubble", "dualpipe"}));
  app.add_flag("--no-overlap", o.no_overlap,
               "Explore only layouts without EP all-to-all or TP overlap (a framework without them)");
  app.add_option("--dispatch-precision", o.dispatch_precision, "What MoE dispatch sends")
      ->capture_default_str()->check(CLI::IsMember({"bf16", "fp8"}));
  add_allow_unusual_option(app, o);
  app.add_option("--rank", o.rank,
                 "Rank layouts by the point estimate of tokens/s, or by the pessimistic end of its "
                 "80% band (docs/plan.md section 14)")
      ->capture_default_str()->check(CLI::IsMember({"point", "pessimistic"}));
}

void add_outlook_options(CLI::App& app, PlanOptions& o) {
  auto* rate = app.add_option("--failure-rate", o.failure_rate,
                              "Interruptions per device-hour (default: Llama 3 405B, 419 on 16,384 "
                              "GPUs in 54 days = 1.97e-5)")->transform(number_option(kFailureRate));
  app.add_option("--mtbf", o.mtbf_hours, "Mean hours between interruptions of one device")
      ->transform(number_option(kMtbfHours))->excludes(rate);
  app.add_option("--storage-gbps", o.storage_gbps, "Checkpoint write bandwidth, GB/s aggregate")
      ->capture_default_str()->transform(number_option(kStorageGbps));
  app.add_option("--restart-minutes", o.restart_minutes, "From an interruption to training again")
      ->capture_default_str()->transform(number_option(kRestartMinutes));
  app.add_option("--tokens", o.tokens, "Tokens to train: days, device-hours, energy and cost")
      ->transform(number_option(kTokens));
  app.add_option("--pue", o.pue, "Data-centre power usage effectiveness")->capture_default_str()
      ->transform(number_option(kPue));
}

void add_layout_options(CLI::App& app, PlanOptions& o) {
  app.add_option("--devices", o.devices, "Accelerators (default tp × cp × pp × dp)")
      ->transform(number_option(kDeviceCount));
  app.add_option("--tp", o.tp, "Tensor parallel (with sequence parallelism)")->capture_default_str()
      ->transform(number_option(kDeviceCount));
  app.add_option("--pp", o.pp, "Pipeline stages")->capture_default_str()->transform(number_option(kDeviceCount));
  app.add_option("--dp", o.dp, "Data parallel (default: devices / (tp × cp × pp))")
      ->transform(number_option(kDeviceCount));
  app.add_option("--ep", o.ep, "Expert parallel, within dp")->capture_default_str()
      ->transform(number_option(kDeviceCount));
  app.add_option("--cp", o.cp, "Context parallel")->capture_default_str()->transform(number_option(kDeviceCount));
  app.add_option("--vpp", o.vpp, "Virtual pipeline stages per device (interleaved 1F1B)")
      ->capture_default_str()->transform(number_option(kDeviceCount));
  app.add_option("--mbs", o.mbs, "Micro-batch size (sequences)")->capture_default_str()
      ->transform(number_option(kMicroBatch));
  app.add_option("--gbs", o.gbs, "Global batch size (sequences per step)")->transform(number_option(kGlobalBatch));
  app.add_option("--zero", o.zero, "ZeRO stage: 0, 1 (optimizer), 2 (+ gradients), 3 (+ weights)")
      ->capture_default_str()->transform(number_option(kZeroStage));
  app.add_option("--recompute", o.recompute,
                 "Activation recomputation: none, selective (attention's scores, Megatron), full, "
                 "selective-op (torchtitan's op policy: all but the matmuls and attention, and "
                 "every second matmul)")
      ->capture_default_str()->check(CLI::IsMember(plan::kRecomputeNames));
  app.add_option("--etp", o.etp, "Expert tensor parallel of the MoE layers (default: tp); ep × etp "
                 "fold over tp × cp × dp")->transform(number_option(kDeviceCount));
  app.add_option("--schedule", o.schedule, "Pipeline schedule (default: interleaved with --vpp > 1, "
                 "else 1f1b)")->check(CLI::IsMember({"1f1b", "interleaved", "zero-bubble", "dualpipe"}));
  app.add_flag("--ep-overlap", o.ep_overlap,
               "MoE all-to-all overlapped with computation (DualPipe, Megatron's a2a overlap)");
  app.add_flag("--shared-expert-overlap", o.shared_expert_overlap,
               "MoE all-to-all overlapped with the shared experts' computation only (DeepSeek-V2, "
               "Megatron's --moe-shared-expert-overlap)");
  app.add_flag("--tp-overlap", o.tp_overlap,
               "TP communication overlapped with the GEMMs (Transformer Engine, Ascend MC2)");
  for (const plan::LayoutFlag& f : plan::kLayoutFlags) {
    app.add_flag(f.option, o.layout_flags[f.key], f.help);
  }
  app.add_option("--capacity-factor", o.capacity_factor,
                 "Expert capacity: each expert takes ceil(tokens/experts × factor × top_k) slots, "
                 "padded (GShard, DeepSpeed-MoE); 0: dropless")
      ->transform(number_option(kCapacityFactor));
  app.add_flag("--einsum-dispatch", o.einsum_dispatch,
               "MoE dispatch and combine as GShard's one-hot einsums (DeepSpeed-MoE, AscendSpeed)");
  app.add_option("--dispatch-precision", o.dispatch_precision, "What MoE dispatch sends")
      ->capture_default_str()->check(CLI::IsMember({"bf16", "fp8"}));
  app.add_option("--cp-algo", o.cp_algo,
                 "Context parallelism: ring attention (Megatron-Core, MindSpeed megatron_cp_algo) or "
                 "DeepSpeed-Ulysses all-to-all (MindSpeed ulysses_cp_algo)")
      ->capture_default_str()->check(CLI::IsMember({"ring", "ulysses"}));
  app.add_option("--dispatcher", o.dispatcher,
                 "MoE token dispatcher (Megatron-Core --moe-token-dispatcher-type): alltoall, "
                 "allgather (tokens gathered over the ep × etp ranks) or deepep (the flex "
                 "dispatcher with DeepEP: a token crosses the network once per target node)")
      ->capture_default_str()->check(CLI::IsMember({"alltoall", "allgather", "deepep"}));
}

plan::ModelSpec load_model_option(const PlanOptions& o) {
  if (!o.model.empty() && !o.model_file.empty()) throw Error("--model and --model-file: give one");
  if (!o.model_file.empty()) return plan::load_model(o.model_file);
  if (o.model.empty()) throw Error("plumb plan needs --model NAME or --model-file PATH");
  return plan::load_model(plan::preset_path("models", o.model));
}

plan::HardwareSpec load_hardware_option(const PlanOptions& o) {
  if (!o.hardware.empty() && !o.hardware_file.empty()) throw Error("--hardware and --hardware-file: give one");
  if (!o.hardware_file.empty()) return plan::load_hardware(o.hardware_file);
  if (o.hardware.empty()) throw Error("plumb plan needs --hardware NAME or --hardware-file PATH");
  return plan::load_hardware(plan::preset_path("hardware", o.hardware));
}

std::string cluster_text(const plan::ClusterSpec& c) {
  return fmt::format("{} per node, {} nodes per rack · effective GB/s per device: node {:.0f}, rail {:.1f}, spine {:.1f}",
                     c.devices_per_node, c.nodes_per_rack, c.node.gbps, c.rail.gbps, c.spine.gbps);
}

// The file a plan read, kept whole in its JSON (report::PlanInput).
report::PlanInput plan_input(const std::string& name, const std::string& file, const char* kind) {
  const std::string path = file.empty() ? plan::preset_path(kind, name) : file;
  return {file.empty() ? name : "", path, read_text_file(path, kind)};
}

report::PlanInputs plan_inputs(const PlanOptions& o) {
  report::PlanInputs in{plan_input(o.model, o.model_file, "models"),
                        plan_input(o.hardware, o.hardware_file, "hardware"), std::nullopt};
  if (!o.cluster.empty()) in.cluster = report::PlanInput{"", o.cluster, read_text_file(o.cluster, "cluster")};
  return in;
}

Inputs load_inputs(const PlanOptions& o) {
  Inputs in;
  in.model = load_model_option(o);
  in.hardware = load_hardware_option(o);
  in.cluster = o.cluster.empty() ? plan::default_cluster(in.hardware)
                                 : plan::load_cluster(o.cluster, in.hardware);
  plan::MeasuredBusbw measured;
  in.context.network = "analytic (α–β model of the cluster's links; --calibrate to use measurements)";
  CalibrationSources sources = load_calibration_sources(o.calibrate, o.db);
  if (!sources.steps.empty()) {
    in.fit = plan::fit_efficiencies(sources.steps);
    in.context.fit = in.fit;
    for (const plan::MeasuredStep& s : sources.steps) in.context.fit_sources.push_back(s.source);
  }
  if (sources.comm) {
    const baseline::Record& record = *sources.comm;
    in.calibration = std::make_unique<plan::Calibration>(plan::Calibration::from_measurement(
        {describe_record(record), record.hosts.size(), record.rows, comm::measured_on(record.comm)}));
    measured = in.calibration->as_measured_busbw();
    in.context.network = "calibrated from " + in.calibration->source() +
                         ": measured busbw where a curve exists, analytic elsewhere";
    in.context.measured = in.calibration->measured();
  }
  in.network = std::make_unique<plan::Network>(in.cluster, kAlgorithms.at(o.algorithm), measured);
  in.context.model = in.model.name;
  in.context.hardware = in.hardware.name;
  in.context.seq_len = in.model.seq_len;
  in.context.cluster = cluster_text(in.cluster);
  in.context.inputs = plan_inputs(o);
  if (!in.hardware.efficiency) {
    in.context.notes.push_back(fmt::format(
        "{} has no measured GEMM efficiency in the catalog: {:.2f} assumed (the median of those "
        "measured)", in.hardware.name, plan::kAssumedMamfEfficiency));
  }
  return in;
}

plan::Layout layout_options(const PlanOptions& o) {
  plan::Layout p;
  p.tp = o.tp;
  p.pp = o.pp;
  p.cp = o.cp;
  p.ep = o.ep;
  p.vpp = o.vpp;
  p.zero = o.zero;
  p.micro_batch = o.mbs;
  p.recompute = plan::kRecomputeNames.at(o.recompute);
  p.flash_attention = !o.no_flash_attention;
  if (o.schedule == "1f1b" && o.vpp > 1) {
    throw Error(fmt::format("--schedule 1f1b runs one chunk per stage: --vpp {} needs --schedule "
                            "interleaved", o.vpp));
  }
  p.etp = o.etp;
  p.schedule = o.schedule.empty() ? (p.vpp > 1 ? plan::Schedule::kInterleaved : plan::Schedule::kOneFOneB)
                                  : plan::kScheduleNames.at(o.schedule);
  p.ep_overlap = o.ep_overlap;
  p.shared_expert_overlap = o.shared_expert_overlap;
  p.tp_overlap = o.tp_overlap;
  for (const plan::LayoutFlag& f : plan::kLayoutFlags) {
    const auto given = o.layout_flags.find(f.key);
    p.*f.member = given != o.layout_flags.end() && given->second ? f.set : !f.set;
  }
  p.dispatch = plan::kDispatchPrecisionNames.at(o.dispatch_precision);
  p.capacity_factor = o.capacity_factor;
  p.einsum_dispatch = o.einsum_dispatch;
  p.cp_algo = plan::kCpAlgoNames.at(o.cp_algo);
  p.dispatcher = plan::kDispatcherNames.at(o.dispatcher);
  return p;
}

// The layout the options describe; every problem with it at once. Sizes are multiplied in
// floating point first: tp × cp × pp × dp of options each up to kMaxDevices overflows int64.
plan::Layout layout_from(const PlanOptions& o, const plan::ModelSpec& m) {
  plan::Layout p = layout_options(o);
  const double model_parallel = static_cast<double>(p.tp) * p.cp * p.pp;
  if (o.dp > 0) {
    p.dp = o.dp;
  } else if (o.devices > 0) {
    p.dp = static_cast<int>(std::max(1.0, std::floor(static_cast<double>(o.devices) / model_parallel)));
  }
  if (plan::beyond_max_devices(p)) {
    throw Error(fmt::format("layout for {}: {}", m.name, plan::too_many_devices(p)));
  }
  const int64_t devices = o.devices > 0 ? o.devices : p.devices();
  p.global_batch = o.gbs > 0 ? o.gbs : plan::global_batch_near(p, m, o.batch_tokens);
  const std::vector<std::string> problems = plan::layout_problems(m, p, devices);
  if (!problems.empty()) {
    throw Error(fmt::format("layout for {} on {} devices: {}", m.name, devices, join(problems, "; ")));
  }
  return p;
}

// Without --gbs the batch is the multiple of dp × mbs nearest to --batch-tokens; when even the
// smallest is far above what was asked, the prediction is for a batch the run did not ask for.
void note_batch_overshoot(const PlanOptions& o, const plan::Layout& p, const plan::ModelSpec& m,
                          report::PlanContext& context) {
  const double tokens = static_cast<double>(p.global_batch) * static_cast<double>(m.seq_len);
  if (o.gbs > 0 || tokens <= plan::kMaxBatchOvershoot * o.batch_tokens) return;
  context.notes.push_back(fmt::format(
      "the smallest batch this layout runs is {} sequences ({:.3g} tokens), {:.0f}× the {:.3g} "
      "tokens of --batch-tokens: fewer data-parallel replicas (dp) or a smaller --mbs would keep "
      "the batch asked for", p.global_batch, tokens, tokens / o.batch_tokens, o.batch_tokens));
}

// When failures and checkpoints take all the wall time, say so and what would help.
std::optional<std::string> stall_warning(const plan::Outlook& out, int64_t devices) {
  if (out.at_daly.goodput > 0) return std::nullopt;
  const plan::Reliability& r = out.at_daly;
  return fmt::format(
      "on {} devices the job is interrupted every {:.3g} s and each interruption costs a {:.0f} s "
      "restart plus rework: failures take {:.0f}% and checkpoints {:.0f}% of the wall time, so the "
      "run would not progress; a lower failure rate (--failure-rate, --mtbf), a faster restart "
      "(--restart-minutes), faster checkpoints (--storage-gbps) or fewer devices would help",
      devices, r.mtbf_s, r.restart_s, 100 * r.failure_waste, 100 * r.checkpoint_waste);
}

// A warning goes to standard error and into the report's notes (the JSON keeps it too).
void warn(const std::string& text, report::PlanContext& context) {
  fmt::print(stderr, "plumb: warning: {}\n", text);
  context.notes.push_back(text);
}

// A calibration measured on another backend, device kind or world size than the plan: one line.
void warn_calibration_mismatch(Inputs& in, int64_t devices) {
  if (!in.calibration) return;
  if (const std::string w = in.calibration->mismatch(in.hardware, devices); !w.empty()) {
    warn(w, in.context);
  }
}

plan::OutlookInputs outlook_inputs(const PlanOptions& o) {
  plan::OutlookInputs in;
  if (o.failure_rate) in.failures_per_device_hour = *o.failure_rate;
  if (o.mtbf_hours) in.failures_per_device_hour = plan::failure_rate_from_mtbf(*o.mtbf_hours);
  in.storage_gbps = o.storage_gbps;
  in.restart_s = o.restart_minutes * 60;
  in.pue = o.pue;
  in.tokens = o.tokens;
  return in;
}

plan::ComputeModel compute_from(const PlanOptions& o, const Inputs& in) {
  plan::ComputeModel c = plan::compute_model(in.hardware);
  c.overlap_dp = !o.no_dp_overlap;
  if (in.fit) c.tuned = in.fit->after;
  return c;
}

// Before any work, so that a long search is not lost: --json must be writable and must not be one
// of the files the plan reads.
void check_json_target(const PlanOptions& o) {
  const std::vector<NamedPath> outputs = {{"--json", o.json}};
  std::vector<NamedPath> inputs = {{"--model-file", o.model_file},
                                   {"--hardware-file", o.hardware_file},
                                   {"--cluster", o.cluster},
                                   {"the store (--db)", o.db}};
  for (const std::string& c : o.calibrate) inputs.push_back({"--calibrate", c});
  refuse_overlapping_paths(outputs, inputs);
  if (!o.json.empty()) OutputFile probe("--json", o.json);
}

void write_json(const nlohmann::json& j, const std::string& path) {
  write_output("--json", path, j.dump(2) + "\n");
}

// "node allgather", or "node allgather (from the node allreduce curve)" when another ring
// collective's curve stood in for it.
std::string with_source(const plan::Calibration& cal, const std::string& used) {
  const size_t space = used.find(' ');
  const std::string layer_name = used.substr(0, space);
  const std::string collective = used.substr(space + 1);
  for (plan::NetLayer layer : {plan::NetLayer::kNode, plan::NetLayer::kRail, plan::NetLayer::kSpine}) {
    if (layer_name != plan::net_layer_name(layer)) continue;
    const auto e = cal.estimate(layer, collective, 1 << 20);
    if (e && e->substitute) return fmt::format("{} (from the {} {} curve)", used, layer_name, e->collective);
  }
  return used;
}

// The network lines say which collectives a measured curve priced, once the work is done.
void note_measured_use(Inputs& in) {
  if (!in.calibration) return;
  std::vector<std::string> used = in.network->measured_used();
  for (std::string& u : used) u = with_source(*in.calibration, u);
  in.context.notes.push_back(used.empty()
                                 ? "no measured curve matched a collective of this plan: all analytic"
                                 : "measured curves priced: " + join(used, ", ") +
                                       "; everything else analytic");
}

// The published runs the bands are drawn from, read once per command. None (and a note) when no
// validation set can be read.
std::vector<plan::Residual> band_residuals(Inputs& in) {
  try {
    return plan::shipped_residuals();
  } catch (const Error& e) {
    in.context.notes.push_back(fmt::format("no band: the validation sets could not be read: {}", e.what()));
    return {};
  }
}

// The band of this plan's class of runs (plan/band.h), centred on the calibrated prediction when
// measured steps calibrated it; none without residuals.
void set_band(Inputs& in, const std::vector<plan::Residual>& residuals, int64_t devices) {
  if (residuals.empty()) return;
  plan::BandModel m = plan::band_model(
      residuals, {in.model.moe.has_value(), plan::vendor_of(in.hardware), devices});
  if (in.fit) {
    std::vector<double> errors;
    for (const plan::StepResidual& r : in.fit->residuals) {
      if (r.part == plan::StepPart::kStep && r.measured > 0 && r.after > 0) {
        errors.push_back(std::log(r.after / r.measured));
      }
    }
    m = plan::calibrated(m, errors);
  }
  in.context.band = m;
}

int run_predict(const PlanOptions& o) {
  check_json_target(o);
  Inputs in = load_inputs(o);
  const plan::Layout p = layout_from(o, in.model);
  in.context.devices = p.devices();
  set_band(in, band_residuals(in), p.devices());
  warn_calibration_mismatch(in, p.devices());
  const plan::Predictor predictor(in.model, in.hardware, *in.network, o.precision, compute_from(o, in));
  const plan::Prediction pred = predictor(p);
  const plan::Outlook outlook = plan::outlook(pred, in.model, in.hardware, outlook_inputs(o));
  note_batch_overshoot(o, p, in.model, in.context);
  for (const std::string& w : plan::unusual_reasons(in.model, p)) warn(w, in.context);
  if (auto w = stall_warning(outlook, p.devices())) warn(*w, in.context);
  note_measured_use(in);
  if (!o.json.empty()) write_json(report::plan_json(in.context, pred, outlook), o.json);
  if (o.json != "-") report::print_plan(in.context, pred, outlook, std::cout);
  // A layout that does not fit is a failed check: scripts can gate on it.
  return pred.memory.fits() ? 0 : static_cast<int>(ExitCode::kCheckFailed);
}

plan::SearchSpace space_from(const PlanOptions& o, int64_t devices) {
  plan::SearchSpace s;
  s.devices = devices;
  s.global_batch = o.gbs;
  s.batch_tokens = o.batch_tokens;
  s.max_tp = o.max_tp;
  s.max_cp = o.max_cp;
  s.flash_attention = !o.no_flash_attention;
  s.dispatch = plan::kDispatchPrecisionNames.at(o.dispatch_precision);
  s.allow_unusual = o.allow_unusual;
  if (o.no_overlap) s.ep_overlaps = s.tp_overlaps = {false};
  if (!o.schedules.empty()) {
    auto asked = [&](const char* name) {
      return std::find(o.schedules.begin(), o.schedules.end(), name) != o.schedules.end();
    };
    s.vpps.clear();
    if (asked("1f1b")) s.vpps.push_back(1);
    if (asked("interleaved")) s.vpps.insert(s.vpps.end(), {2, 4});
    s.schedules.clear();
    if (asked("zero-bubble")) s.schedules.push_back(plan::Schedule::kZeroBubble);
    if (asked("dualpipe")) s.schedules.push_back(plan::Schedule::kDualPipe);
  }
  return s;
}

plan::SearchResult run_search_with_progress(const plan::Predictor& predictor, const plan::SearchSpace& s,
                                            int top) {
  Progress progress(stderr, Progress::is_terminal(stderr));
  const plan::SearchResult r = plan::search(predictor, s, top, [&](int64_t done, int64_t total) {
    progress.update(static_cast<size_t>(done), static_cast<size_t>(total),
                    fmt::format("{} devices · layout shapes", s.devices));
  });
  progress.clear();
  return r;
}

// "; 96 unusual layouts were left out (...): --allow-unusual would include them", or nothing.
std::string unusual_left_out(const plan::SearchResult& r) {
  if (r.unusual == 0) return "";
  return fmt::format("; {} unusual layouts were left out (fewer than two layers per pipeline "
                     "stage, or pp × vpp not dividing the layers): --allow-unusual would include "
                     "them", r.unusual);
}

// Why a search found nothing, and what would help.
std::string nothing_fits(const plan::SearchResult& r, const plan::Predictor& predictor, int64_t devices) {
  const plan::ModelSpec& m = predictor.model();
  const std::string head = fmt::format("no layout of {} fits on {} × {}: {} layouts tried", m.name,
                                       devices, predictor.hardware().name, r.candidates);
  if (r.valid > 0) {
    return fmt::format("{}, {} valid, none fits in its {:g} GB of memory; more devices, a larger "
                       "--max-tp or --max-cp, or a device with more memory would help{}",
                       head, r.valid, predictor.hardware().hbm_gb, unusual_left_out(r));
  }
  if (r.oversized > 0) {
    return fmt::format("{}; the {} valid ones all need a batch more than {:g}× --batch-tokens; "
                       "more tokens per step (--batch-tokens, --gbs) or fewer devices would help{}",
                       head, r.oversized, plan::kMaxBatchOvershoot, unusual_left_out(r));
  }
  if (r.unusual > 0) {
    return fmt::format("{}, none valid and usual{}", head, unusual_left_out(r));
  }
  return fmt::format("{}, none valid: {} devices do not split into tp × cp × pp × dp with tp "
                     "dividing the {} heads and pp × vpp at most the {} layers; a device count "
                     "with more small factors (a multiple of 8) would help",
                     head, devices, m.heads, m.layers);
}

// The plumb plan command that predicts `p` as the search did: the same inputs and every layout
// option, the batch as --gbs (the search may have chosen it), so that it prints the same step time.
std::string plan_command_for(const PlanOptions& o, const plan::Layout& p) {
  std::vector<std::string> w = {"plumb", "plan"};
  auto add = [&w](const std::string& option, const std::string& value) {
    w.push_back(option);
    w.push_back(k8s::shell_quote(value));
  };
  if (!o.model.empty()) add("--model", o.model);
  if (!o.model_file.empty()) add("--model-file", o.model_file);
  if (!o.hardware.empty()) add("--hardware", o.hardware);
  if (!o.hardware_file.empty()) add("--hardware-file", o.hardware_file);
  if (!o.cluster.empty()) add("--cluster", o.cluster);
  for (const std::string& c : o.calibrate) add("--calibrate", c);
  if (!o.db.empty()) add("--db", o.db);
  add("--precision", o.precision);
  if (o.algorithm != "auto") add("--algorithm", o.algorithm);
  const std::pair<const char*, int> sizes[] = {{"--tp", p.tp}, {"--cp", p.cp}, {"--pp", p.pp},
                                               {"--vpp", p.vpp}, {"--dp", p.dp}, {"--ep", p.ep}};
  for (const auto& [option, value] : sizes) add(option, std::to_string(value));
  if (p.expert_tp() != p.tp) add("--etp", std::to_string(p.expert_tp()));
  add("--mbs", std::to_string(p.micro_batch));
  add("--gbs", std::to_string(p.global_batch));
  add("--zero", std::to_string(p.zero));
  add("--recompute", report::recompute_name(p.recompute));
  add("--schedule", report::schedule_name(p.pipeline_schedule()));
  if (p.ep_overlap) w.push_back("--ep-overlap");
  if (p.shared_expert_overlap) w.push_back("--shared-expert-overlap");
  if (p.tp_overlap) w.push_back("--tp-overlap");
  for (const plan::LayoutFlag& f : plan::kLayoutFlags) {
    if (p.*f.member == f.set) w.push_back(f.option);
  }
  if (p.dispatch == plan::DispatchPrecision::kFp8) add("--dispatch-precision", "fp8");
  if (p.capacity_factor > 0) add("--capacity-factor", fmt::format("{}", p.capacity_factor));
  if (p.einsum_dispatch) w.push_back("--einsum-dispatch");
  if (p.cp_algo == plan::CpAlgo::kUlysses) add("--cp-algo", "ulysses");
  if (p.dispatcher != plan::Dispatcher::kAllToAll) {
    add("--dispatcher", plan::name_of(plan::kDispatcherNames, p.dispatcher));
  }
  if (!p.flash_attention) w.push_back("--no-flash-attention");
  if (o.no_dp_overlap) w.push_back("--no-dp-overlap");
  if (o.failure_rate) add("--failure-rate", fmt::format("{}", *o.failure_rate));
  if (o.mtbf_hours) add("--mtbf", fmt::format("{}", *o.mtbf_hours));
  if (o.storage_gbps != plan::kDefaultStorageGbps) add("--storage-gbps", fmt::format("{}", o.storage_gbps));
  if (o.restart_minutes != plan::kDefaultRestartS / 60) {
    add("--restart-minutes", fmt::format("{}", o.restart_minutes));
  }
  if (o.tokens) add("--tokens", fmt::format("{}", *o.tokens));
  if (o.pue != plan::kDefaultPue) add("--pue", fmt::format("{}", o.pue));
  return join(w, " ");
}

// What search says under `best:`: the command and which overlap hides communication.
report::SearchBest search_best(const PlanOptions& o, const plan::SearchResult& r,
                               const plan::Predictor& predictor) {
  report::SearchBest best;
  if (r.top.empty()) return best;
  best.command = plan_command_for(o, r.top.front().layout);
  const std::string hidden = plan::hidden_communication(r.top.front(), predictor.compute().overlap_dp);
  if (!hidden.empty()) best.notes.push_back(hidden);
  return best;
}

int run_search_command(const PlanOptions& o) {
  if (o.devices <= 0) throw Error("plumb plan search needs --devices N");
  check_json_target(o);
  Inputs in = load_inputs(o);
  in.context.devices = o.devices;
  set_band(in, band_residuals(in), o.devices);
  warn_calibration_mismatch(in, o.devices);
  const plan::Predictor predictor(in.model, in.hardware, *in.network, o.precision, compute_from(o, in));
  plan::SearchSpace space = space_from(o, o.devices);
  if (o.rank == "pessimistic") space.pessimistic = in.context.band;
  const plan::SearchResult r = run_search_with_progress(predictor, space, o.top);
  note_measured_use(in);
  const report::SearchBest best = search_best(o, r, predictor);
  if (!o.json.empty()) write_json(report::search_json(in.context, r, best), o.json);
  if (o.json != "-") report::print_search(in.context, r, best, std::cout);
  // Nothing to recommend is a failed check, as a layout that does not fit is for plumb plan.
  if (r.top.empty()) throw Error(nothing_fits(r, predictor, o.devices), ExitCode::kCheckFailed);
  return 0;
}

int run_scale_command(const PlanOptions& o) {
  check_json_target(o);
  Inputs in = load_inputs(o);
  warn_calibration_mismatch(in, 0);  // several device counts: backend and device kind only
  const plan::Predictor predictor(in.model, in.hardware, *in.network, o.precision, compute_from(o, in));
  std::vector<report::ScaleRow> rows;
  std::vector<std::string> missing;  // device counts where nothing fits, and why
  const std::vector<plan::Residual> residuals = band_residuals(in);
  for (int64_t devices : o.scale_devices) {
    set_band(in, residuals, devices);
    plan::SearchSpace space = space_from(o, devices);
    if (o.rank == "pessimistic") space.pessimistic = in.context.band;
    const plan::SearchResult r = run_search_with_progress(predictor, space, 1);
    report::ScaleRow row;
    row.devices = devices;
    row.band = in.context.band;
    row.found = !r.top.empty();
    if (row.found) {
      row.best = r.top.front();
      row.outlook = plan::outlook(row.best, in.model, in.hardware, outlook_inputs(o));
      if (auto w = stall_warning(row.outlook, devices)) warn(*w, in.context);
    } else {
      missing.push_back(nothing_fits(r, predictor, devices));
    }
    rows.push_back(row);
  }
  note_measured_use(in);
  if (!o.json.empty()) write_json(report::scale_json(in.context, rows), o.json);
  if (o.json != "-") report::print_scale(in.context, rows, std::cout);
  if (!missing.empty()) throw Error(join(missing, "\n"), ExitCode::kCheckFailed);
  return 0;
}

// The shipped sets: the two built in (issue 4), then every run-set file in data/validation/.
// With --set, the files named alone: the exit status then answers for them (docs/plan.md 10).
int run_validate_command(const PlanOptions& o) {
  check_json_target(o);
  std::vector<NamedPath> set_paths;
  for (const std::string& s : o.sets) set_paths.push_back({"--set", s});
  refuse_overlapping_paths(std::vector<NamedPath>{{"--json", o.json}}, set_paths);
  const std::string dir = plan::data_dir() + "/validation/";
  std::vector<plan::ValidationSet> sets;
  std::vector<report::ValidationTarget> targets;
  if (o.sets.empty()) {
    const plan::HardwareSpec a100 = plan::load_hardware(plan::preset_path("hardware", "a100-80gb"));
    sets = {plan::validate_megatron_sc21(dir + "megatron_sc21_table1.csv", a100),
            plan::validate_vtrain(dir + "vtrain_ground_truth_multi.csv", a100)};
    // Issue 4's bounds: SC21 MAPE ≤ 10%, no row beyond 20%; vTrain MAPE ≤ 15%, Spearman ≥ 0.7.
    targets = {{0.10, 0.20, 0}, {0.15, 0, 0.7}};
  }
  // Every file is read before one is reported: all their problems in one message.
  std::vector<std::string> problems;
  // --calibrated: each run set again, each row calibrated from the other rows of its group. Shown,
  // not judged: the targets are the model's own.
  std::vector<plan::ValidationSet> calibrated;
  std::vector<report::ValidationTarget> calibrated_targets;
  std::vector<plan::RunSet> run_sets;
  for (const std::string& file : o.sets.empty() ? plan::run_set_files(dir) : o.sets) {
    try {
      const plan::RunSet r = plan::load_run_set(file);
      for (const plan::ValidationSet& part : plan::by_split(r.set)) {
        sets.push_back(part);
        targets.push_back({r.targets.mape, r.targets.max_error, 0});
      }
      if (o.calibrated) {
        for (const plan::ValidationSet& part : plan::by_split(plan::calibrated_leave_one_out(r))) {
          calibrated.push_back(part);
          calibrated_targets.push_back({r.targets.mape, r.targets.max_error, 0});
        }
        run_sets.push_back(r);
      }
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  const plan::Coverage coverage =
      plan::leave_one_out_coverage(plan::residuals_of(sets), plan::kBandLevel);
  std::vector<const plan::RunSet*> pointers;
  for (const plan::RunSet& r : run_sets) pointers.push_back(&r);
  const std::vector<plan::ScalePair> pairs = plan::scale_pairs(pointers);
  if (!o.json.empty()) {
    nlohmann::json j = report::validation_json(sets, targets, coverage);
    if (o.calibrated) j["scale_pairs"] = report::scale_pairs_json(pairs);
    write_json(j, o.json);
  }
  if (o.json != "-") {
    report::print_validation(sets, targets, o.rows, std::cout);
    if (!calibrated.empty()) {
      std::cout << "# after calibration, leave-one-out: each row predicted with the efficiencies "
                   "fitted to the other runs of its group on its device (plumb plan --calibrate); "
                   "shown, not judged\n\n";
      report::print_validation(calibrated, calibrated_targets, o.rows, std::cout);
      report::print_scale_pairs(pairs, std::cout);
    }
    report::print_band_coverage(coverage, plan::kBandLevel, std::cout);
  }
  for (size_t i = 0; i < sets.size(); ++i) {
    if (!report::meets(sets[i], targets[i])) return static_cast<int>(ExitCode::kCheckFailed);
  }
  return 0;
}

void add_compare_options(CLI::App& app, PlanOptions& o) {
  app.add_option("--model", o.model, "A catalog model (data/models): llama3-405b, ...");
  app.add_option("--model-file", o.model_file, "Your own model YAML (keys as data/models/*.yaml)");
  app.add_option("--hardware", o.compare_hardware, "Catalog devices to compare: h100-sxm,b200,...")
      ->delimiter(',');
  app.add_option("--hardware-file", o.compare_hardware_files,
                 "Your own hardware YAMLs (your quotes in price_usd, rent_usd_per_hour)")
      ->delimiter(',');
  app.add_option("--devices", o.compare_devices, "The same device counts for every chip")
      ->delimiter(',')->transform(number_option(kDeviceCount));
  app.add_option("--budget", o.budget,
                 "USD to buy the cluster: each chip at the count it buys, half and a quarter of it")
      ->transform(number_option(kBudgetUsd));
  app.add_option("--precision", o.precision, "This precision on the chips that have it, else bf16")
      ->capture_default_str()->check(CLI::IsMember({"bf16", "fp16", "fp8", "fp4"}));
  app.add_option("--batch-tokens", o.batch_tokens, "Tokens per step (the batch of every layout)")
      ->capture_default_str()->transform(number_option(kBatchTokens));
  app.add_flag("--no-flash-attention", o.no_flash_attention,
               "Attention keeps its s×s scores (as before FlashAttention)");
  add_allow_unusual_option(app, o);
  app.add_option("--json", o.json, "Write plumb.plan-compare/1 here (- for standard output)");
  app.add_option("--html", o.html, "Write the HTML page here (- for standard output)");
}

// Every usage problem of plan compare at once.
void check_compare_usage(const PlanOptions& o) {
  std::vector<std::string> problems;
  if (!o.model.empty() && !o.model_file.empty()) {
    problems.push_back("--model and --model-file: give one");
  }
  if (o.model.empty() && o.model_file.empty()) {
    problems.push_back("needs --model NAME or --model-file PATH");
  }
  if (o.compare_hardware.empty() && o.compare_hardware_files.empty()) {
    problems.push_back("needs --hardware a,b,... (catalog names) or --hardware-file PATH,...");
  }
  if (!o.tokens) problems.push_back("needs --tokens (the tokens to train)");
  if (o.budget && !o.compare_devices.empty()) {
    problems.push_back("--budget and --devices: give one (--budget sizes each chip's cluster by "
                       "its price; --devices compares every chip at the same counts)");
  }
  if (!o.budget && o.compare_devices.empty()) {
    problems.push_back("needs --budget USD or --devices N,M,...");
  }
  if (o.json == "-" && o.html == "-") {
    problems.push_back("--json - and --html -: only one can go to standard output");
  }
  if (!problems.empty()) throw Error("plumb plan compare: " + join(problems, "; "));
  std::vector<NamedPath> inputs = {{"--model-file", o.model_file}};
  for (const std::string& f : o.compare_hardware_files) inputs.push_back({"--hardware-file", f});
  const std::vector<NamedPath> outputs = {{"--json", o.json}, {"--html", o.html}};
  refuse_overlapping_paths(outputs, inputs);
  if (!o.json.empty()) OutputFile probe("--json", o.json);
  if (!o.html.empty()) OutputFile probe("--html", o.html);
}

// The chips in the order named: catalog names, then files; every unknown name or bad file at once.
std::vector<plan::CompareChip> load_compare_chips(const PlanOptions& o) {
  std::vector<plan::CompareChip> chips;
  std::vector<std::string> problems;
  auto add = [&](const std::string& label, const std::function<std::string()>& path_of) {
    for (const plan::CompareChip& c : chips) {
      if (c.label == label) {
        problems.push_back(fmt::format("--hardware: {} is named twice", label));
        return;
      }
    }
    try {
      const std::string path = path_of();
      chips.push_back({label, path, plan::load_hardware(path)});
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  };
  for (const std::string& name : o.compare_hardware) {
    add(name, [&] { return plan::preset_path("hardware", name); });
  }
  for (const std::string& file : o.compare_hardware_files) {
    add(std::filesystem::path(file).stem().string(), [&] { return file; });
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  return chips;
}

plan::CompareSpec compare_spec(const PlanOptions& o) {
  plan::CompareSpec s;
  s.tokens = *o.tokens;
  s.budget_usd = o.budget;
  s.devices = o.compare_devices;
  s.precision = o.precision;
  s.space.batch_tokens = o.batch_tokens;
  s.space.flash_attention = !o.no_flash_attention;
  s.space.allow_unusual = o.allow_unusual;
  s.outlook = outlook_inputs(o);
  try {
    s.residuals = plan::shipped_residuals();  // each row's band (plan/band.h)
  } catch (const Error&) {
    // No validation set to draw bands from: the rows show none ("-", null).
  }
  return s;
}

int run_compare_command(const PlanOptions& o) {
  check_compare_usage(o);
  const plan::ModelSpec model = load_model_option(o);
  const std::vector<plan::CompareChip> chips = load_compare_chips(o);
  Progress progress(stderr, Progress::is_terminal(stderr));
  const plan::Comparison c =
      plan::compare(model, chips, compare_spec(o), [&](size_t done, size_t total) {
        progress.update(done, total, "chips searched");
      });
  progress.clear();
  if (!o.json.empty()) write_json(report::compare_json(c), o.json);
  if (!o.html.empty()) write_output("--html", o.html, report::compare_html(c));
  if (o.json != "-" && o.html != "-") report::print_compare(c, std::cout);
  for (const plan::ChipComparison& chip : c.chips) {
    for (const plan::CompareRow& row : chip.rows) {
      if (row.best) return 0;
    }
  }
  // Nothing fits anywhere: a failed check, as for plan search.
  throw Error(fmt::format("no chip has a layout of {} that fits at any of its device counts",
                          model.name), ExitCode::kCheckFailed);
}

}  // namespace

void setup_plan(CLI::App& app, PlanOptions& o) {
  o.storage_gbps = plan::kDefaultStorageGbps;
  o.restart_minutes = plan::kDefaultRestartS / 60;
  o.pue = plan::kDefaultPue;
  add_model_options(app, o);
  add_layout_options(app, o);
  add_outlook_options(app, o);
  app.require_subcommand(0, 1);

  CLI::App* search = app.add_subcommand("search", "Every layout that fits, ranked by throughput");
  add_model_options(*search, o);
  add_outlook_options(*search, o);
  add_space_options(*search, o);
  search->add_option("--devices", o.devices, "Accelerators")->required()->transform(number_option(kDeviceCount));
  search->add_option("--gbs", o.gbs, "Fix the global batch (default: nearest to --batch-tokens per layout)")
      ->transform(number_option(kGlobalBatch));
  search->add_option("--top", o.top, "Layouts to list")->capture_default_str()->transform(number_option(kTop));
  search->add_option("--max-tp", o.max_tp, "Largest TP (default: the devices of one node)")
      ->transform(number_option(kDeviceCount));
  search->add_option("--max-cp", o.max_cp, "Largest CP (long sequences want more)")
      ->capture_default_str()->transform(number_option(kDeviceCount));
  search->callback([&o] { o.mode = PlanMode::kSearch; });

  CLI::App* scale = app.add_subcommand("scale", "Best layout, goodput and time-to-train per device count");
  add_model_options(*scale, o);
  add_outlook_options(*scale, o);
  add_space_options(*scale, o);
  scale->add_option("--devices", o.scale_devices, "Device counts")->capture_default_str()
      ->delimiter(',')->transform(number_option(kDeviceCount));
  scale->add_option("--max-tp", o.max_tp, "Largest TP (default: the devices of one node)")
      ->transform(number_option(kDeviceCount));
  scale->add_option("--max-cp", o.max_cp, "Largest CP")->capture_default_str()
      ->transform(number_option(kDeviceCount));
  scale->callback([&o] { o.mode = PlanMode::kScale; });

  CLI::App* validate = app.add_subcommand("validate", "The predictor against published runs");
  validate->add_option("--json", o.json, "Write plumb.plan-validate/1 here (- for standard output)");
  validate->add_flag("--rows", o.rows, "List every row, not only the summary");
  validate->add_flag("--calibrated", o.calibrated,
                     "Also each run set after calibration, leave-one-out: every row predicted with "
                     "the efficiencies fitted to the other runs of its group");
  validate->add_option("--set", o.sets,
                       "A run-set file (repeatable; docs/plan.md section 10): check these files "
                       "instead of the shipped sets");
  validate->callback([&o] { o.mode = PlanMode::kValidate; });

  CLI::App* compare = app.add_subcommand(
      "compare", "Chips side by side for one run: best layout, days, energy, cost to buy and rent");
  add_compare_options(*compare, o);
  add_outlook_options(*compare, o);
  compare->callback([&o] { o.mode = PlanMode::kCompare; });
}

int run_plan(const PlanOptions& o) {
  switch (o.mode) {
    case PlanMode::kPredict: return run_predict(o);
    case PlanMode::kSearch: return run_search_command(o);
    case PlanMode::kScale: return run_scale_command(o);
    case PlanMode::kValidate: return run_validate_command(o);
    case PlanMode::kCompare: return run_compare_command(o);
  }
  return 0;
}

}  // namespace plumb::cli
