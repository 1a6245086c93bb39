#include "cli/baseline_workload.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "baseline/record_kind.h"
#include "cli/record_source.h"
#include "cli/supervision.h"
#include "comm/measurement_origin.h"
#include "comm/rounds.h"
#include "cli/stop_signal.h"
#include "common/environment.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/url_redact.h"
#include "common/progress.h"
#include "common/yaml_strict.h"
#include "mem/analysis.h"
#include "mem/memory_baseline.h"
#include "mem/snapshot_reader.h"
#include "report/env_reporter.h"
#include "report/mem_reporter.h"
#include "report/serve_reporter.h"
#include "report/memory_baseline_reporter.h"
#include "report/step_json_reporter.h"
#include "report/topo_reporter.h"
#include "step/analysis.h"
#include "step/baseline_match.h"
#include "step/readers.h"
#include "supervise/recovery_json.h"
#include "sysinfo/system_info.h"
#include "serve/workload.h"
#include "topo/collect.h"

namespace plumb::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kParts = 6;  // the progress lines' [k/6]: topology+versions, comm, model, recovery, memory, serve
constexpr const char* kWho = "plumb baseline";
constexpr int kTraceReaders = 2;  // trace files read at once (the job has ended: its cores are free)

void progress(const BaselineOptions& o, int part, const std::string& what) {
  if (!o.quiet) fmt::print(std::cerr, "{}: [{}/{}] {}\n", kWho, part, kParts, what);
}

std::string skipped(const std::string& part) { return fmt::format("skipped (--skip {})", part); }

// The working folder under --output-dir: the job's traces, train-events and run events, kept for
// plumb step, plumb mem creep and the eye; checkpoints plumb made for the job are removed.
struct Work {
  fs::path root;
  fs::path model() const { return root / "model"; }
  fs::path recovery() const { return root / "recovery"; }
};

Work make_work(const BaselineOptions& o) {
  std::string stamp = utc_timestamp();
  stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
  Work w{fs::absolute(fs::path(o.output_dir) / fmt::format("plumb-workload-{}-{}", stamp, getpid()))};
  std::error_code ec;
  for (const fs::path& p : {w.model() / "traces", w.model() / "snapshots",
                            w.model() / "checkpoints", w.recovery() / "checkpoints"}) {
    fs::create_directories(p, ec);
    if (ec) throw Error(fmt::format("--output-dir: cannot create {}: {}", p.string(), ec.message()));
  }
  return w;
}

// What the whole set needs before anything runs, so that bad input fails in a second.
void validate_workload(const BaselineOptions& o) {
  if (!o.workload) {
    throw Error("COMMAND: plumb baseline takes a command only with --workload (plumb baseline "
                "--workload [options] -- COMMAND [ARGS...])");
  }
  if (o.job.command.empty()) {
    throw Error("--workload: no command after --: plumb baseline --workload [options] -- COMMAND "
                "[ARGS...]");
  }
  parse_skip(o.skip);
  parse_profile_steps(o.profile_steps, o.steps);
  if (!o.serve.endpoint.url.empty()) {  // the sweep's bad input fails before the job runs
    const std::vector<LoadPoint> points = load_points(o.serve.load);
    make_serve_setup(o.serve, points);
    serve::make_workload(to_workload_spec(o.serve.load, points.front()));
  }
  const auto kinds = supervise::parse_fault_kinds(o.job.drill_faults);
  const bool hangs = std::count(kinds.begin(), kinds.end(), supervise::FaultKind::kStop) > 0;
  if (o.job.drill > 0 && hangs && o.job.hang_timeout_s <= 0) {
    throw Error("--drill-faults hang needs a --hang-timeout above 0 to detect the hang");
  }
}

std::optional<nlohmann::json> read_plan(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::string problem;
  nlohmann::json plan = parse_json_or_discarded(read_text_file(path, "--plan"), problem);
  if (plan.is_discarded()) {
    throw Error(fmt::format("--plan {}: {}; expected plumb plan --json output", path, problem));
  }
  return plan;
}

// ---- topology, versions, comm -------------------------------------------------------------------

void take_local_context(baseline::Record& r) {
  r.topo = report::topo_json(topo::collect_local(topo::probe_topology()));
  r.env = report::env_record_json(sysinfo::collect_env(sysinfo::ProbeContext{}));
}

// The comm sweep's record (topology over MPI, versions, comm), or this host's topology and
// versions with comm named missing.
baseline::Record take_context(const BaselineOptions& o, const std::set<std::string>& skip) {
  baseline::Record r;
  if (skip.count("comm") == 0) {
    progress(o, 1, "topology and versions: taken by the comm sweep's ranks");
    progress(o, 2, "comm: the sweep in rounds, as plumb baseline without --workload");
    try {
      r = measure_rounds(o);
      // The versions of the environment COMMAND runs in (plumb's own), not rank 0's under the
      // comm launcher (its OMPI_*/SLURM_* rank variables): sets with and without comm compare.
      r.env = report::env_record_json(sysinfo::collect_env(sysinfo::ProbeContext{}));
      r.missing = nlohmann::json::object();
      return r;
    } catch (const Error& e) {
      if (static_cast<int>(e.code()) > 100) throw;  // interrupted: 128 + the signal
      r.missing = {{"comm", e.what()}};
      fmt::print(std::cerr, "{}: comm: missing: {}\n", kWho, e.what());
    }
  } else {
    r.missing = {{"comm", skipped("comm")}};
    progress(o, 2, "comm: " + skipped("comm"));
  }
  progress(o, 1, "topology and versions of this host, taken without MPI (no comm sweep)");
  take_local_context(r);
  r.hosts = {host_name()};
  return r;
}

// ---- the job ------------------------------------------------------------------------------------

using Env = std::vector<std::pair<std::string, std::string>>;

// MASTER_ADDR and a fresh MASTER_PORT in every attempt: a restart never meets the port of an
// attempt still dying.
JobHooks job_hooks(const BaselineOptions& o, Env env) {
  JobHooks h;
  h.who = kWho;
  h.env = std::move(env);
  const std::string address = master_address(o);
  h.before_attempt = [address](supervise::AttemptOptions& next) {
    if (!address.empty()) next.env.push_back({"MASTER_ADDR", address});
    next.env.push_back({"MASTER_PORT", std::to_string(free_port())});
  };
  return h;
}

void check_not_interrupted(const SupervisedRun& run, const char* part) {
  if (run.summary.stopped) {
    throw Error(fmt::format("interrupted while taking the {} part: the job was stopped, nothing "
                            "stored",
                            part),
                static_cast<ExitCode>(130));
  }
}

struct ModelRun {
  fs::path traces;
  fs::path events;
  fs::path snapshots;
  std::string failure;  // why the job did not run its steps ("" when it did)
};

// COMMAND for --steps N with the contract's variables; plumb stops it at step N. Without the
// model part (--skip model: the run is for the memory part) nothing is profiled.
ModelRun run_model(const BaselineOptions& o, const Work& w, bool profile) {
  ModelRun m{o.traces.empty() ? w.model() / "traces" : fs::absolute(o.traces),
             w.model() / "train-events.jsonl", w.model() / "snapshots", ""};
  const fs::path checkpoints = w.model() / "checkpoints";
  Env env = {{"PLUMB_MAX_STEPS", std::to_string(o.steps)},
             {"PLUMB_TRAIN_EVENTS", m.events.string()},
             {"PLUMB_SNAPSHOT_DIR", m.snapshots.string()},
             {"PLUMB_CHECKPOINT_DIR", checkpoints.string()}};
  if (profile && o.traces.empty()) {
    env.push_back({"PLUMB_TRACE_DIR", m.traces.string()});
    env.push_back({"PLUMB_PROFILE_STEPS", o.profile_steps});
  }
  RunOptions job = o.job;
  job.drill = 0;
  job.checkpoint_dir = checkpoints.string();
  job.events = (w.model() / "run-events.jsonl").string();
  JobHooks hooks = job_hooks(o, std::move(env));
  const int64_t last = o.steps;
  hooks.done = [last](const nlohmann::json& e, const supervise::Drill*) {
    return e.value("event", "") == "progress" && e["step"].is_number_integer() &&
           e["step"].get<int64_t>() >= last;
  };
  const SupervisedRun run = supervise_job(job, hooks);
  check_not_interrupted(run, "model");
  if (!run.reached && run.exit_code != 0) {
    m.failure = fmt::format("the job failed ({} attempt(s), the last: {})", run.summary.attempts,
                            run.summary.last.detail);
  }
  std::error_code ec;
  fs::remove_all(checkpoints, ec);
  return m;
}

// The traces of all ranks as plumb step reads them, against this set's own comm rows.
nlohmann::json take_step(const BaselineOptions& o, const ModelRun& m, const baseline::Record& r,
                         std::string& missing) {
  std::error_code ec;
  if (!fs::is_directory(m.traces, ec) || fs::is_empty(m.traces, ec)) {
    missing = fmt::format("no traces were written in {}{} (the job honours PLUMB_TRACE_DIR and "
                          "PLUMB_PROFILE_STEPS, or --traces names where it writes its own)",
                          m.traces.string(), m.failure.empty() ? "" : "; " + m.failure);
    return nullptr;
  }
  try {
    step::AnalysisOptions options;
    options.plan = read_plan(o.plan);
    options.plan_source = o.plan;
    if (!r.rows.empty()) {
      options.baseline_rows = r.rows;
      options.baseline = "this set's comm sweep";
    }
    const std::vector<step::TraceInput> inputs = step::find_trace_inputs({m.traces.string()});
    std::vector<step::RankTrace> traces = step::read_traces(inputs, step::ReadOptions{}, kTraceReaders, {});
    const std::string mismatch =
        r.rows.empty() ? "" : step::baseline_mismatch(options.baseline, comm::measured_on(r.comm), traces);
    step::StepResult result = step::analyze(std::move(traces), options);
    if (!mismatch.empty()) result.notes.insert(result.notes.begin(), mismatch);
    return report::step_to_json(result);
  } catch (const Error& e) {
    missing = fmt::format("the traces in {} could not be analysed: {}", m.traces.string(), e.what());
    return nullptr;
  }
}

// ---- recovery -----------------------------------------------------------------------------------

struct DrillRun {
  nlohmann::json recovery;  // plumb.recovery/1, or null
  fs::path events;          // its train-events: the first resumed attempt's "loaded" line
  int verdict = 0;          // plumb run --drill's
};

// Done once every fault was injected and the attempt after the last one made progress (it
// resumed; its first step is in the recovery record).
std::function<bool(const nlohmann::json&, const supervise::Drill*)> drill_done() {
  auto armed = std::make_shared<bool>(false);
  return [armed](const nlohmann::json& e, const supervise::Drill* drill) {
    if (drill == nullptr) return false;
    const std::string event = e.value("event", "");
    if (event == "restart" && drill->injected() >= drill->faults()) *armed = true;
    return *armed && event == "progress";
  };
}

DrillRun run_drill(const BaselineOptions& o, const Work& w) {
  DrillRun d{nullptr, w.recovery() / "train-events.jsonl", 0};
  RunOptions job = o.job;
  const bool own = job.checkpoint_dir.empty();
  if (own) job.checkpoint_dir = (w.recovery() / "checkpoints").string();  // made by make_work
  job.events = (w.recovery() / "run-events.jsonl").string();
  Env env = {{"PLUMB_TRAIN_EVENTS", d.events.string()},
             {"PLUMB_CHECKPOINT_DIR", fs::absolute(job.checkpoint_dir).string()}};
  JobHooks hooks = job_hooks(o, std::move(env));
  hooks.done = drill_done();
  const SupervisedRun run = supervise_job(job, hooks);
  check_not_interrupted(run, "recovery");
  d.recovery = supervise::recovery_to_json(run.baseline);
  d.verdict = run.exit_code;
  std::error_code ec;
  if (own) fs::remove_all(job.checkpoint_dir, ec);
  return d;
}

// ---- memory -------------------------------------------------------------------------------------

// The checkpoint check with the drill's load: its train-events hold the first attempt's saves and
// the first resumed attempt's "loaded" line, rank by rank.
void check_with_drill(mem::MemoryBaseline& b, const std::optional<fs::path>& drill_events,
                      const std::string& no_drill) {
  std::string reason = no_drill;
  if (drill_events) {
    try {
      const mem::MemoryBaseline d = mem::memory_baseline(mem::read_memory_series(drill_events->string()), std::nullopt);
      if (d.checkpoint.load_step) {
        for (mem::RankMemory& rank : b.ranks) {
          for (const mem::RankMemory& other : d.ranks) {
            if (other.rank == rank.rank) rank.checkpoint = other.checkpoint;
          }
        }
        b.checkpoint = d.checkpoint;
        return;
      }
      reason = fmt::format("the recovery drill's train-events {} hold no \"checkpoint\": "
                           "\"loaded\" line (no attempt resumed from a checkpoint)",
                           drill_events->string());
    } catch (const Error& e) {
      reason = fmt::format("the recovery drill's train-events could not be read: {}", e.what());
    }
  }
  const auto unchecked = [&](mem::CheckpointCheck& c) {  // the save's levels stay, for the eye
    c.after_load_bytes.reset();
    c.load_step.reset();
    c.verdict = "missing";
    c.reason = reason;
  };
  unchecked(b.checkpoint);
  for (mem::RankMemory& rank : b.ranks) unchecked(rank.checkpoint);
}

// Allocator snapshots in PLUMB_SNAPSHOT_DIR, each as plumb mem analyze reports it.
nlohmann::json snapshots_json(const fs::path& dir) {
  nlohmann::json out = {{"folder", dir.string()}, {"files", nlohmann::json::array()}};
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    nlohmann::json one = {{"file", f.string()}};
    try {
      one["analysis"] = report::mem_analysis_json(mem::analyze(mem::read_trace(f.string(), 0), {}));
    } catch (const Error& e) {
      one["error"] = e.what();
    }
    out["files"].push_back(one);
  }
  if (files.empty()) {
    out["note"] = "no allocator snapshot was written: the framework has none on this device (CPU "
                  "memory is CPU RSS); the peak by category and fragmentation need CUDA or "
                  "torch_npu";
  }
  return out;
}

nlohmann::json take_memory(const ModelRun& m, const std::optional<fs::path>& drill_events,
                           const std::string& no_drill, std::string& missing) {
  mem::MemoryBaseline b;
  try {
    b = mem::memory_baseline(mem::read_memory_series(m.events.string()), std::nullopt);
  } catch (const Error& e) {
    missing = fmt::format("{}{} (the job honours PLUMB_TRAIN_EVENTS)", e.what(),
                          m.failure.empty() ? "" : "; " + m.failure);
    return nullptr;
  }
  check_with_drill(b, drill_events, no_drill);
  nlohmann::json j = report::memory_baseline_json(b);
  j["checkpoint_source"] = drill_events && b.checkpoint.load_step ? nlohmann::json(drill_events->string())
                                                                    : nlohmann::json(nullptr);
  j["snapshots"] = snapshots_json(m.snapshots);
  return j;
}

// ---- the summary --------------------------------------------------------------------------------

std::string step_line(const nlohmann::json& step) {
  const nlohmann::json& ranks = step.value("ranks", nlohmann::json::array());
  std::vector<double> times;
  size_t steps = 0;
  for (const auto& rank : ranks) {
    for (const auto& s : rank.value("steps", nlohmann::json::array())) {
      ++steps;
      if (s.value("step_time_us", nlohmann::json()).is_number()) times.push_back(s["step_time_us"]);
    }
  }
  std::sort(times.begin(), times.end());
  return fmt::format("{} rank(s), {} profiled rank-step(s){}", ranks.size(), steps,
                     times.empty() ? "" : fmt::format(", median step {:.1f} ms", times[times.size() / 2] / 1000));
}

std::string bytes_or_none(const nlohmann::json& v) {
  return v.is_number() ? format_bytes(static_cast<uint64_t>(std::max(0.0, v.get<double>()))) : "—";
}

std::string memory_line(const nlohmann::json& m) {
  const nlohmann::json& c = m.value("checkpoint", nlohmann::json::object());
  const nlohmann::json& w = m.value("worst", nlohmann::json());
  std::string worst = "no rank fitted";
  if (w.is_object()) {
    const nlohmann::json creep = w.value("creep_bytes_per_step", nlohmann::json());
    worst = fmt::format("worst rank {}: settled {}, creep {}/step, {}", w.value("rank", nlohmann::json()).is_string() ? w["rank"].get<std::string>() : "?",
                        bytes_or_none(w.value("settled_bytes", nlohmann::json())),
                        creep.is_number() ? fmt::format("{:+.2f} MiB", creep.get<double>() / (1 << 20)) : "—",
                        w.value("verdict", nlohmann::json()).is_string() ? w["verdict"].get<std::string>() : "?");
  }
  return fmt::format("{}; checkpoint check {}{}", worst, c.value("verdict", "missing"),
                     c.value("reason", nlohmann::json()).is_string()
                         ? " (" + c["reason"].get<std::string>() + ")" : "");
}

std::string recovery_line(const nlohmann::json& r) {
  const nlohmann::json& t = r.value("totals", nlohmann::json::object());
  auto num = [&](const char* k) {
    const nlohmann::json v = t.value(k, nlohmann::json());
    return v.is_number() ? fmt::format("{:.1f} s", v.get<double>()) : std::string("—");
  };
  return fmt::format("{} fault(s) injected, {} failure(s), {} restart(s); detect median {}, "
                     "downtime median {}, steps lost {}; {}",
                     r.value("faults_injected", 0), t.value("failures", 0), t.value("restarts", 0),
                     num("detect_seconds_median"), num("downtime_seconds_median"), t.value("steps_lost", 0),
                     r.value("result", "?"));
}

// "3 run(s) at c=1, c=4, c=16: 120 request(s), 0 failed; output 812 tok/s at c=16".
std::string serve_line(const nlohmann::json& doc) {
  const serve::ServeResult s = report::serve_from_json(doc, "the serving part");
  std::vector<std::string> loads;
  std::int64_t done = 0, failed = 0;
  for (const serve::ServeRun& run : s.runs) {
    loads.push_back(report::serve_run_label(run));
    done += run.summary.completed;
    failed += run.summary.errors;
  }
  if (s.runs.empty()) return "no run";
  return fmt::format("{} run(s) at {}: {} request(s), {} failed; output {:.0f} tok/s at {}",
                     s.runs.size(), join(loads, ", "), done + failed, failed,
                     s.runs.back().summary.output_tokens_per_second, loads.back());
}

void print_set(const baseline::Record& r, double seconds, const std::string& store,
               const std::string& report) {
  std::ostream& out = std::cout;
  fmt::print(out, "plumb baseline set {}{} · {} · {:.0f} s\n", r.id,
             r.label.empty() ? "" : " (" + r.label + ")", join(r.hosts, ","), seconds);
  const size_t warnings = r.topo.is_object() ? r.topo.value("warnings", nlohmann::json::array()).size() : 0;
  fmt::print(out, "  topo      {} host(s), {} binding warning(s)\n",
             r.topo.is_object() ? r.topo.value("hosts", nlohmann::json::array()).size() : 0, warnings);
  fmt::print(out, "  env       {}\n", r.env.is_object() ? "versions and settings taken" : "—");
  fmt::print(out, "  comm      {}\n", r.rows.empty() ? std::string("—") : fmt::format("{} row(s) over {} round(s)", r.rows.size(), r.comm.value("settings", nlohmann::json::object()).value("rounds", 1)));
  fmt::print(out, "  step      {}\n", r.step.is_object() ? step_line(r.step) : "—");
  fmt::print(out, "  memory    {}\n", r.memory.is_object() ? memory_line(r.memory) : "—");
  fmt::print(out, "  recovery  {}\n", r.recovery.is_object() ? recovery_line(r.recovery) : "—");
  fmt::print(out, "  serve     {}\n", r.serve.is_object() ? serve_line(r.serve) : "—");
  for (const auto& [part, reason] : r.missing.items()) {
    fmt::print(out, "missing   {}: {}\n", part, reason.get<std::string>());
  }
  fmt::print(out, "stored    baseline set {} in {}\n", r.id, store);
  if (!report.empty()) fmt::print(out, "report    {}\n", report);
  fmt::print(out, "next      plumb show {} · plumb export {} · after a change: plumb diff {} latest\n",
             r.id, r.id, r.id);
}

void name_missing(baseline::Record& r, const std::string& part, const std::string& reason) {
  if (reason.empty()) return;
  r.missing[part] = reason;
  fmt::print(std::cerr, "{}: {}: missing: {}\n", kWho, part, reason);
}

// The model, recovery and memory parts into `r`; returns the drill's verdict (0 when none).
int take_job_parts(const BaselineOptions& o, const std::set<std::string>& skip, baseline::Record& r) {
  const Work w = make_work(o);
  const bool model = skip.count("model") == 0, memory = skip.count("memory") == 0;
  std::optional<ModelRun> m;
  if (model || memory) {
    progress(o, 3, fmt::format("model: {} under the supervisor for {} step(s), {} (working folder {})",
                               join(o.job.command, " "), o.steps,
                               model ? "profiling steps " + o.profile_steps
                                     : "not profiled (--skip model: for the memory part)",
                               w.root.string()));
    m = run_model(o, w, model);
  }
  std::string why;
  if (model) r.step = take_step(o, *m, r, why);
  name_missing(r, "step", model ? why : skipped("model"));
  std::optional<fs::path> drill_events;
  int verdict = 0;
  std::string no_drill;
  if (skip.count("recovery") == 0 && o.job.drill > 0) {
    progress(o, 4, fmt::format("recovery: a drill of {} fault(s) ({}) on the same job", o.job.drill,
                               o.job.drill_faults));
    DrillRun d = run_drill(o, w);
    r.recovery = d.recovery;
    drill_events = d.events;
    verdict = d.verdict;
  } else {
    const std::string reason = o.job.drill > 0 ? skipped("recovery") : "--drill 0: no fault to recover from";
    name_missing(r, "recovery", reason);
    no_drill = fmt::format("no checkpoint load to check: a load happens only on a resume, and the "
                           "recovery drill (whose first resumed attempt loads one) was not taken: {}",
                           reason);
  }
  if (memory) {
    progress(o, 5, fmt::format("memory: the train-events of the model run ({})", m->events.string()));
    why.clear();
    r.memory = take_memory(*m, drill_events, no_drill, why);
    name_missing(r, "memory", why);
  } else {
    name_missing(r, "memory", skipped("memory"));
  }
  return verdict;
}

// The --serve-* sweep as plumb serve bench runs it; interrupted: exit 130, nothing stored.
serve::ServeResult serve_sweep(const BaselineOptions& o) {
  const std::vector<LoadPoint> points = load_points(o.serve.load);
  serve::ServeResult result;
  result.setup = make_serve_setup(o.serve, points);
  Progress bar(stderr, !o.quiet && Progress::is_terminal(stderr));
  for (const LoadPoint& point : points) {
    result.runs.push_back(
        run_serve_point(o.serve, point, result.setup.slo, bar, std::string(kWho) + ": serve"));
    if (stop_on_signals().load()) {
      throw Error("interrupted while taking the serve part: nothing stored",
                  static_cast<ExitCode>(130));
    }
  }
  return result;
}

// "3 of 120 requests failed (connect 3)", or "" when none failed.
std::string failed_requests(const serve::ServeResult& result) {
  std::int64_t failed = 0, total = 0;
  std::map<std::string, std::int64_t> kinds;
  for (const serve::ServeRun& run : result.runs) {
    failed += run.summary.errors;
    total += run.summary.errors + run.summary.completed;
    for (const auto& [k, n] : run.summary.errors_by_kind) kinds[k] += n;
  }
  if (failed == 0) return "";
  std::vector<std::string> parts;
  for (const auto& [k, n] : kinds) parts.push_back(fmt::format("{} {}", k, n));
  return fmt::format("{} of {} requests failed ({})", failed, total, join(parts, ", "));
}

}  // namespace

std::set<std::string> parse_skip(const std::string& list) {
  std::set<std::string> out;
  for (const std::string& name : split_list(list, ',')) {
    if (name.empty()) continue;
    if (std::find_if(std::begin(kSkippableParts), std::end(kSkippableParts),
                     [&](const char* p) { return name == p; }) == std::end(kSkippableParts)) {
      throw Error(fmt::format("--skip '{}': unknown part '{}'; the parts are {}", list, name,
                              join(std::vector<std::string>(std::begin(kSkippableParts),
                                                            std::end(kSkippableParts)),
                                   ", ")));
    }
    out.insert(name);
  }
  return out;
}

ProfileWindow parse_profile_steps(const std::string& text, int steps) {
  const std::vector<std::string> parts = split_list(text, ':');
  ProfileWindow w;
  try {
    size_t used = 0, used2 = 0;
    if (parts.size() != 2) throw std::invalid_argument("");
    w.start = std::stoll(parts[0], &used);
    w.count = std::stoll(parts[1], &used2);
    if (used != parts[0].size() || used2 != parts[1].size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw Error(fmt::format("--profile-steps '{}': expected START:COUNT, two whole numbers, e.g. 10:3",
                            text));
  }
  if (w.start < 1 || w.count < 1) {
    throw Error(fmt::format("--profile-steps '{}': START and COUNT must be at least 1", text));
  }
  if (w.start + w.count - 1 > steps) {
    throw Error(fmt::format("--profile-steps '{}': the window ends at step {}, after --steps {}",
                            text, w.start + w.count - 1, steps));
  }
  return w;
}

std::string master_address(const BaselineOptions& o) {
  const char* given = std::getenv("MASTER_ADDR");
  if (given != nullptr && *given != '\0') return "";  // the environment's, left as it is
  return o.launcher.empty() && o.hostfile.empty() ? "127.0.0.1" : host_name();
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(fmt::format("cannot open a socket for MASTER_PORT: {}", std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t size = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0;
  const int error = errno;
  ::close(fd);
  if (!ok) throw Error(fmt::format("cannot find a free port for MASTER_PORT: {}", std::strerror(error)));
  return ntohs(a.sin_port);
}

namespace {

// Defaults of the serving part: a short sweep from one stream to a loaded server.
constexpr const char* kServeConcurrency = "1,4,16";
constexpr std::int64_t kServeRequests = 100;  // per load point

void add_serve_part_options(CLI::App& app, ServeBenchOptions& s) {
  s.load.concurrency = kServeConcurrency;
  s.load.requests = kServeRequests;
  CLI::Option* url = app.add_option(
      "--serve-url", s.endpoint.url,
      "--workload: the serving part: an inference server to sweep as plumb serve bench does "
      "(its streaming endpoint or base URL); without it the part is missing");
  app.add_option("--serve-api", s.endpoint.api,
                 "--workload: the server's API (plumb serve bench --api)")
      ->capture_default_str()->needs(url);
  app.add_option("--serve-model", s.endpoint.model,
                 "--workload: the model's name (plumb serve bench --model)")->needs(url);
  app.add_option("--serve-concurrency", s.load.concurrency,
                 "--workload: the concurrency sweep C1,C2,... (plumb serve bench --concurrency)")
      ->capture_default_str()->needs(url);
  app.add_option("--serve-requests", s.load.requests,
                 "--workload: requests per load point (plumb serve bench -n)")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{100000000}))->needs(url);
  app.add_option("--serve-slo", s.report.slo,
                 "--workload: the goodput's SLO, ttft=2000ms,tpot=100ms (plumb serve bench --slo)")
      ->needs(url);
}

}  // namespace

void add_workload_options(CLI::App& app, BaselineOptions& o) {
  app.add_flag("--workload", o.workload,
               "Take the whole set from COMMAND (after --), a training job that starts all its "
               "ranks: topology, versions, comm, model step, memory, recovery; stored as one "
               "record (docs/baseline.md)");
  app.add_option("COMMAND", o.job.command, "--workload: the job, after --");
  app.add_option("--steps", o.steps, "--workload: the model run's steps (PLUMB_MAX_STEPS; plumb "
                                     "stops the job once it passed them)")
      ->capture_default_str()->check(CLI::Range(1, 100000000));
  app.add_option("--profile-steps", o.profile_steps,
                 "--workload: START:COUNT, the steps profiled (PLUMB_PROFILE_STEPS)")
      ->capture_default_str();
  app.add_option("--plan", o.plan, "--workload: plumb plan --json output, the model part beside it");
  app.add_option("--traces", o.traces,
                 "--workload: the folder the job writes its own profiler traces to (Megatron-LM "
                 "--profile, torchtitan), instead of PLUMB_TRACE_DIR");
  app.add_option("--skip", o.skip,
                 "--workload: parts not to take: comm,model,memory,recovery,serve");
  add_serve_part_options(app, o.serve);
  o.job.drill = kDefaultSetDrill;
  add_supervision_options(app, o.job);
  app.footer(
      "--workload: parts are taken in turn with a progress line each ([1/6] topology and versions, "
      "[2/6] comm, [3/6] model, [4/6] recovery, [5/6] memory, [6/6] serve: a plumb serve bench "
      "sweep, with --serve-url only); the drill is --drill 2 (one kill, "
      "one hang) unless given: set --hang-timeout above the job's start-up time. A part that "
      "cannot be taken is stored as missing with its reason. Exit status: 0 stored; 1 stored, but "
      "the drill failed, the comm sweep found wrong elements or a serving request failed; 2 bad usage (no command after --, "
      "an unknown --skip part, a bad --profile-steps or --plan); 130 interrupted, nothing stored.");
}


std::string take_serve_part(const BaselineOptions& o, const std::set<std::string>& skip,
                            baseline::Record& r) {
  if (skip.count("serve") != 0) {
    name_missing(r, "serve", skipped("serve"));
    return "";
  }
  if (o.serve.endpoint.url.empty()) {
    name_missing(r, "serve", kServeNotAsked);
    return "";
  }
  progress(o, 6, fmt::format("serve: plumb serve bench against {} ({}), --concurrency {}, {} "
                             "request(s) per point",
                             redact_url(o.serve.endpoint.url), o.serve.endpoint.api,
                             o.serve.load.concurrency, o.serve.load.requests));
  const serve::ServeResult result = serve_sweep(o);
  const std::string failed = failed_requests(result);
  const bool none_done = std::all_of(result.runs.begin(), result.runs.end(), [](const auto& run) {
    return run.summary.completed == 0;
  });
  if (none_done) {
    name_missing(r, "serve", fmt::format("no request to {} completed: {}",
                                         redact_url(o.serve.endpoint.url), failed));
    return "";
  }
  r.serve = report::serve_json(result);
  return failed;
}

int run_workload_baseline(const BaselineOptions& o) {
  validate_workload(o);
  const std::set<std::string> skip = parse_skip(o.skip);
  read_plan(o.plan);  // a bad plan fails before anything runs
  std::error_code ec;
  fs::create_directories(o.output_dir, ec);
  if (access(o.output_dir.c_str(), W_OK) != 0) {
    throw Error(fmt::format("--output-dir {}: not a writable folder", o.output_dir));
  }
  baseline::Store store(baseline::store_location(o.db));
  const auto start = std::chrono::steady_clock::now();
  baseline::Record r = take_context(o, skip);
  r.created = utc_timestamp();
  r.label = o.label;
  r.source = baseline::kSetSource;
  const int verdict = take_job_parts(o, skip, r);
  const std::string serve_failed = take_serve_part(o, skip, r);
  if (r.missing.empty()) r.missing = nullptr;
  r.id = store.save(r);
  std::string report;
  try {
    report = write_baseline_report(o, r);
  } catch (const Error& e) {
    fmt::print(std::cerr, "{}: the HTML report was not written: {}\n", kWho, e.what());
  }
  if (r.missing.is_null()) r.missing = nlohmann::json::object();
  print_set(r, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            store.path(), report);
  comm::Result result;
  result.rows = r.rows;
  if (comm::total_wrong(result) > 0) return static_cast<int>(ExitCode::kCheckFailed);
  if (verdict != 0) {
    fmt::print(std::cerr, "{}: the recovery drill failed (exit {}): see the recovery table above\n",
               kWho, verdict);
    return static_cast<int>(ExitCode::kCheckFailed);
  }
  if (!serve_failed.empty()) {
    fmt::print(std::cerr, "{}: serve: {}; the serving part holds them: plumb show {}\n", kWho,
               serve_failed, r.id);
    return static_cast<int>(ExitCode::kCheckFailed);
  }
  return 0;
}

}  // namespace plumb::cli
