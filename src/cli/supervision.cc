#include "cli/supervision.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/prctl.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "common/environment.h"
#include "common/error.h"
#include "common/strings.h"
#include "report/recovery_table.h"
#include "supervise/recovery_metrics.h"
#include "supervise/checkpoint.h"
#include "supervise/event_log.h"
#include "sysinfo/slurm_job.h"

namespace plumb::cli {
namespace {

namespace fs = std::filesystem;

// Set by SIGINT/SIGTERM: the supervisor stops the job and does not count it as a failure. A
// signal handler can reach nothing else.
std::atomic<bool> g_supervised_stop{false};

void on_supervised_stop(int) { g_supervised_stop = true; }

// SIGINT, SIGTERM and SIGHUP stop the job. SIGPIPE and SIGXFSZ are ignored: a closed pipe on
// plumb's stdout or stderr (`plumb run ... | head -1`) or a file size limit on the events file
// must not kill the supervisor and leave the job running unsupervised; the failed write is
// reported instead (the job gets both back at their defaults: attempt.cc).
void install_signal_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_supervised_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &sa, nullptr);
  ::sigaction(SIGXFSZ, &sa, nullptr);
}

std::vector<supervise::LinePattern> patterns(const std::vector<std::string>& given,
                                             const char* option,
                                             std::vector<supervise::LinePattern> defaults) {
  if (given.empty()) return defaults;
  std::vector<supervise::LinePattern> out;
  for (const std::string& p : given) out.push_back(supervise::user_pattern(option, p));
  return out;
}

// The console lines' prefix: "plumb run", or the command that supervises a job (JobHooks::who).
const char* g_who = "plumb run";

void say(const std::string& line) { std::cerr << g_who << ": " << line << "\n" << std::flush; }

// The console's line for a failure, a restart, ... (the JSONL file has all of it); one entry per
// event kind, none for the kinds it does not mention.
using Teller = void (*)(const nlohmann::json& e, const RunOptions& o);

void tell_failure(const nlohmann::json& e, const RunOptions&) {
  say(fmt::format("attempt {} failed: {} ({}){}", e["attempt"].get<int>(),
                  e["kind"].get<std::string>(), e["detail"].get<std::string>(),
                  e["step"].is_null() ? "" : fmt::format(", last step {}", e["step"].dump())));
}

void tell_backoff(const nlohmann::json& e, const RunOptions&) {
  say(fmt::format("waiting {:.1f} s before attempt {} (--backoff, doubled after each restart)",
                  e["seconds"].get<double>(), e["attempt"].get<int>()));
}

void tell_checkpoint(const nlohmann::json& e, const RunOptions&) {
  for (const auto& skipped : e["skipped"]) {
    say(fmt::format("skipped checkpoint {}: {}", skipped["path"].get<std::string>(),
                    skipped["reason"].get<std::string>()));
  }
  if (e.contains("error")) {
    say(fmt::format("no checkpoint to resume from ({}): restarting from the beginning",
                    e["error"].get<std::string>()));
    return;
  }
  say(e["path"].is_null() ? std::string("no complete checkpoint: restarting from the beginning")
                          : fmt::format("resuming from {}{}", e["path"].get<std::string>(),
                                        e["step"].is_null() ? "" : " (step " + e["step"].dump() + ")"));
}

void tell_output_closed(const nlohmann::json& e, const RunOptions&) {
  if (e["stream"] != "stdout") return;  // stderr itself is gone: the events file has it
  say(fmt::format("standard output is closed ({}): the job's output to it is dropped from now "
                  "on; supervision goes on",
                  e["error"].get<std::string>()));
}

void tell_unrecognised(const nlohmann::json& e, const RunOptions& o) {
  const std::string which =
      o.progress_regex.empty()
          ? std::string("a progress pattern (the defaults know Megatron-LM, DeepSpeed, "
                        "torchtitan, Hugging Face Trainer and plumb.train-events/1)")
          : std::string("--progress-regex");
  say(fmt::format("none of the first {} output lines matched {}, e.g. \"{}\". Until one does, any "
                  "output counts as progress (hang detection sees only silence). Give "
                  "--progress-regex with the step as group 1 (--progress-regex 'step (\\d+)') to "
                  "detect a job that prints but makes no progress and to count steps lost",
                  e["lines"].get<int64_t>(), which,
                  terminal_safe(e["sample"].get<std::string>())));
}

void tell_give_up(const nlohmann::json& e, const RunOptions&) {
  say(fmt::format("giving up: more than the allowed restarts within the window; last failure: {}",
                  e["last_failure"].get<std::string>()));
}

const std::map<std::string, Teller>& tellers() {
  static const std::map<std::string, Teller> kTable = {
      {"failure", tell_failure},
      {"backoff", tell_backoff},
      {"restart",
       [](const nlohmann::json& e, const RunOptions&) {
         say(fmt::format("restarting: attempt {}", e["attempt"].get<int>()));
       }},
      {"give_up", tell_give_up},
      {"checkpoint", tell_checkpoint},
      {"recovery_step",
       [](const nlohmann::json& e, const RunOptions&) { say(recovery_step_line(e)); }},
      {"output_closed", tell_output_closed},
      {"progress_unrecognised", tell_unrecognised},
      {"finished",
       [](const nlohmann::json& e, const RunOptions&) {
         say(fmt::format("the job finished with exit 0 (attempt {}, {:.1f} s)",
                         e["attempt"].get<int>(), e["seconds"].get<double>()));
       }},
      {"stopped",
       [](const nlohmann::json&, const RunOptions&) {
         say("stopped by a signal; the job was stopped");
       }},
  };
  return kTable;
}

void tell(const nlohmann::json& e, const RunOptions& o) {
  const auto found = tellers().find(e.value("event", ""));
  if (found != tellers().end()) found->second(e, o);
}

// "--load {checkpoint} --step {step}" → words with the values put in.
std::vector<std::string> resume_words(const std::string& tmpl, const std::string& checkpoint,
                                      const std::string& step) {
  std::vector<std::string> out;
  std::istringstream words(tmpl);
  for (std::string w; words >> w;) {
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{checkpoint}", checkpoint},
                                     {"{step}", step}}) {
      for (size_t at; (at = w.find(key)) != std::string::npos;) w.replace(at, key.size(), value);
    }
    out.push_back(w);
  }
  return out;
}

nlohmann::json checkpoint_event(const supervise::CheckpointChoice& c, const std::string& error) {
  nlohmann::json e = {{"event", "checkpoint"}, {"time", utc_timestamp()}};
  if (!error.empty()) e["error"] = error;
  e["path"] = c.path.empty() ? nlohmann::json() : nlohmann::json(c.path.string());
  e["step"] = c.step ? nlohmann::json(*c.step) : nlohmann::json();
  e["format"] = c.format;
  e["skipped"] = nlohmann::json::array();
  for (const supervise::SkippedCheckpoint& s : c.skipped) {
    e["skipped"].push_back({{"path", s.path.string()}, {"reason", s.reason}});
  }
  return e;
}

// True when `dir` does not exist (yet): the job may create it at its first save. A path that
// cannot be looked at (a parent without permission) is not "missing".
bool missing(const fs::path& dir) {
  std::error_code ec;
  return !fs::exists(dir, ec) && !ec;
}

// --checkpoint-dir as an absolute path, so that PLUMB_RESUME_FROM still names the checkpoint
// after the job changes directory. One that does not exist yet is waited for, with a note; one
// that exists but cannot be read stops the run now (an Error, exit 2).
std::string checkpoint_dir_at_start(const std::string& given) {
  if (given.empty()) return given;
  const fs::path dir = fs::path(given).is_absolute()
                           ? fs::path(given)
                           : (fs::current_path() / given).lexically_normal();
  if (missing(dir)) {
    say(fmt::format("--checkpoint-dir {} does not exist yet: waiting for the job to create it "
                    "(a restart before then starts from the beginning)",
                    dir.string()));
  } else {
    supervise::find_checkpoint(dir);  // readable?
  }
  return dir.string();
}

// The checkpoint to resume from, or why there is none to look at (an empty choice then): a
// directory that is still missing, or one that cannot be read now (a restart goes on, from the
// beginning, rather than leave the job down).
supervise::CheckpointChoice look_for_checkpoint(const std::string& dir, std::string& error) {
  if (missing(dir)) {
    error = fmt::format("{} does not exist yet", dir);
    return {};
  }
  try {
    return supervise::find_checkpoint(dir);
  } catch (const Error& e) {
    error = e.what();
    return {};
  }
}

// Before a restart: the newest complete checkpoint into the environment and the command line.
std::optional<int64_t> resume_from_checkpoint(const RunOptions& o, const std::string& dir,
                                              supervise::AttemptOptions& next,
                                              const supervise::EventSink& sink) {
  std::string error;
  supervise::CheckpointChoice c = look_for_checkpoint(dir, error);
  sink(checkpoint_event(c, error));
  if (c.path.empty()) return std::nullopt;
  std::string step = c.step ? std::to_string(*c.step) : "";
  next.env.push_back({"PLUMB_RESUME_FROM", c.path.string()});
  if (c.step) next.env.push_back({"PLUMB_RESUME_STEP", step});
  if (!o.resume_arg.empty()) {
    for (std::string& w : resume_words(o.resume_arg, c.path.string(), step)) {
      next.argv.push_back(std::move(w));
    }
  }
  return c.step;
}

supervise::SuperviseOptions supervise_options(const RunOptions& o) {
  supervise::SuperviseOptions s;
  s.attempt.argv = o.command;
  s.attempt.hang_timeout_s = o.hang_timeout_s;
  s.attempt.heartbeat = o.heartbeat;
  s.attempt.kill_grace_s = o.kill_grace_s;
  s.attempt.progress = patterns(o.progress_regex, "--progress-regex",
                                supervise::default_progress_patterns());
  s.attempt.fatal = patterns(o.fatal_regex, "--fatal-regex", supervise::default_fatal_patterns());
  s.attempt.resume = supervise::default_resume_patterns();
  s.attempt.stop = &g_supervised_stop;
  s.max_restarts = o.max_restarts;
  s.restart_window_s = o.restart_window_s;
  s.backoff_s = o.backoff_s;
  return s;
}

// Hosts the recovery found unusable join the relaunch's exclusions; without --exclude-template
// the console says the relaunch may land on them again.
void note_unusable(const supervise::RecoveryOutcome& out, const RunOptions& o,
                   std::vector<std::string>& unusable) {
  for (const std::string& host : out.unusable_hosts) {
    if (std::find(unusable.begin(), unusable.end(), host) != unusable.end()) continue;
    unusable.push_back(host);
    say(o.recovery.config.exclude_template.empty()
            ? fmt::format("host {} is unusable; without --exclude-template the relaunch may use "
                          "it again",
                          host)
            : fmt::format("host {} is unusable: left out of the relaunch", host));
  }
}

// --drill K: the fault injector, its faults checked against --hang-timeout.
std::optional<supervise::Drill> make_drill(const RunOptions& o, const std::string& checkpoint_dir) {
  if (o.drill <= 0) return std::nullopt;
  supervise::DrillOptions d;
  d.faults = o.drill;
  d.kinds = supervise::parse_fault_kinds(o.drill_faults);
  d.checkpoint_dir = checkpoint_dir;
  d.seed = o.drill_seed;
  const bool hangs = std::count(d.kinds.begin(), d.kinds.end(), supervise::FaultKind::kStop) > 0;
  if (hangs && o.hang_timeout_s <= 0) {
    throw Error("--drill-faults hang needs a --hang-timeout above 0 to detect the hang");
  }
  return supervise::Drill(std::move(d));
}

std::string result_of(const supervise::RunSummary& s) {
  if (s.stopped) return "stopped";
  return s.gave_up ? "gave_up" : "finished";
}

supervise::RecoveryBaseline baseline_of(const RunOptions& o, const supervise::RunSummary& s,
                                        const std::string& started, const supervise::Drill* drill) {
  supervise::RecoveryBaseline b;
  b.command = o.command;
  b.host = host_name();
  b.started = started;
  b.wall_seconds = s.seconds;
  b.attempts = s.attempts;
  b.result = result_of(s);
  b.drill = drill != nullptr;
  b.faults_injected = drill != nullptr ? drill->injected() : 0;
  for (const char* kind : {"exit", "signal", "hang", "fatal_line"}) b.failures_by_kind[kind] = 0;
  for (const supervise::Recovery& r : s.recoveries) ++b.failures_by_kind[r.kind];
  b.recoveries = s.recoveries;
  return b;
}

// The baseline while the job runs: result empty (the metrics say "running").
supervise::RecoveryBaseline live_baseline(const RunOptions& o, const supervise::RunSummary& s,
                                          const std::string& started) {
  supervise::RecoveryBaseline b = baseline_of(o, s, started, nullptr);
  b.result.clear();
  b.attempts = std::max(1, s.attempts);
  return b;
}

// A drill passes when every fault was injected and recovered from, and every restart resumed
// right after its checkpoint.
int drill_verdict(const supervise::RunSummary& s, const supervise::RecoveryBaseline& b,
                  const supervise::Drill& drill) {
  if (s.stopped) return 130;
  int status = s.gave_up ? 1 : 0;
  if (drill.injected() < drill.faults()) {
    say(fmt::format("drill: only {} of {} faults were injected: the job finished first",
                    drill.injected(), drill.faults()));
    status = 1;
  }
  for (const supervise::Recovery& r : b.recoveries) {
    if (r.resumed_after_checkpoint == false) {
      say(fmt::format("drill: attempt {} resumed at step {}, not right after checkpoint step {}",
                      r.attempt + 1, *r.first_step_after, *r.checkpoint_step));
      status = 1;
    }
  }
  return status;
}

// --events: the run's first event is the file's check (one that cannot take it stops the run
// before the job starts, exit 2); a later failure is said once, and the lost events are counted
// in the closing line.
class EventsFile {
 public:
  explicit EventsFile(const std::string& path) {
    if (!path.empty()) log_.emplace("--events", path);
  }

  void write(const nlohmann::json& e) {
    if (!log_ || log_->write(e)) return;
    const std::string reason = std::strerror(log_->first_error());
    if (log_->written() == 0) {
      throw Error(fmt::format("{}: cannot be written: {}", log_->name(), reason));
    }
    if (log_->lost() > 1) return;
    say(fmt::format("{}: writing failed ({}): events are lost while it fails; supervision goes on",
                    log_->name(), reason));
  }

  void summarise() const {
    if (!log_ || log_->lost() == 0) return;
    say(fmt::format("{}: {} of {} events could not be written (the first failure: {})",
                    log_->name(), log_->lost(), log_->lost() + log_->written(),
                    std::strerror(log_->first_error())));
  }

 private:
  std::optional<supervise::EventLog> log_;
};

// --metrics: a file that cannot be written at the start stops the run (exit 2); a later failure
// is said once and counted, the file keeps its last content, and the next change tries again.
class MetricsFile {
 public:
  explicit MetricsFile(std::string path) : path_(std::move(path)) {}

  bool on() const { return !path_.empty(); }
  void first(const supervise::RecoveryBaseline& b) { supervise::write_metrics_file(path_, b); }

  void update(const supervise::RecoveryBaseline& b) {
    ++writes_;
    try {
      supervise::write_metrics_file(path_, b);
    } catch (const std::exception& e) {
      if (failed_++ > 0) return;
      first_failure_ = e.what();
      say(fmt::format("{}; the file keeps its last content until a write succeeds; supervision "
                      "goes on",
                      first_failure_));
    }
  }

  // "--metrics m.prom: 2 of 5 updates could not be written (the first failure: cannot write: ...)"
  void summarise() const {
    if (failed_ == 0) return;
    const std::string named = "--metrics " + path_ + ": ";
    const std::string why = first_failure_.rfind(named, 0) == 0
                                ? first_failure_.substr(named.size())
                                : first_failure_;
    say(fmt::format("{}{} of {} updates could not be written (the first failure: {})", named,
                    failed_, writes_, why));
  }

 private:
  std::string path_;
  int64_t writes_ = 0;
  int64_t failed_ = 0;
  std::string first_failure_;
};

// The recovery table on stderr, the last metrics, and what could not be written.
void conclude(supervise::RecoveryBaseline& baseline, MetricsFile& metrics, const EventsFile& events,
              bool drill) {
  if (!baseline.recoveries.empty() || drill) {
    std::ostringstream table;
    report::print_recovery_table(baseline, table);
    std::cerr << table.str() << std::flush;
  }
  if (metrics.on()) metrics.update(baseline);
  events.summarise();
  metrics.summarise();
}

}  // namespace

void add_supervision_options(CLI::App& app, RunOptions& o) {
  app.add_option("--hang-timeout", o.hang_timeout_s,
                 "Seconds without progress that make a hang (0: never); until the first progress "
                 "line, any output counts as progress")
      ->capture_default_str()->check(CLI::Range(0.0, 1e7));
  app.add_option("--progress-regex", o.progress_regex,
                 "A line matching this (RE2 syntax, on its first 64 KiB) is progress; group 1 is "
                 "the step (replaces the defaults)");
  app.add_option("--fatal-regex", o.fatal_regex,
                 "A line matching this (RE2 syntax) ends the attempt at once (replaces the "
                 "defaults)");
  app.add_option("--heartbeat", o.heartbeat, "A file whose modification counts as progress");
  app.add_option("--kill-grace", o.kill_grace_s, "Seconds between SIGTERM and SIGKILL")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
  app.add_option("--max-restarts", o.max_restarts, "Restarts allowed within --restart-window")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  app.add_option("--restart-window", o.restart_window_s, "Seconds the restart limit counts over")
      ->capture_default_str()->check(CLI::Range(0.0, 1e9));
  app.add_option("--backoff", o.backoff_s,
                 "Seconds before the first restart, doubling (announced before each restart)")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "The job's checkpoints: a restart resumes from the newest complete one "
                 "(PLUMB_RESUME_FROM, an absolute path, and PLUMB_RESUME_STEP); never modified; "
                 "may not exist yet (the job creates it)");
  app.add_option("--resume-arg", o.resume_arg,
                 "Words added to a restart's command, with {checkpoint} and {step} put in");
  add_recovery_options(app, o.recovery);
  app.add_option("--exclude-template", o.recovery.config.exclude_template,
                 "Words put after the launcher of a relaunch when hosts are unusable, {hosts} "
                 "replaced (Slurm: '--exclude={hosts}')");
  app.add_option("--drill", o.drill,
                 "A recovery drill: inject this many faults (SIGKILL or SIGSTOP, each a few steps "
                 "after a new checkpoint) and report the recovery baseline")
      ->check(CLI::Range(0, 1000));
  app.add_option("--drill-faults", o.drill_faults, "The faults a drill injects, in turn: kill, hang")
      ->capture_default_str();
  app.add_option("--drill-seed", o.drill_seed, "Seed of the drill's random step choice")
      ->capture_default_str();
}

SupervisedRun supervise_job(const RunOptions& o, const JobHooks& hooks) {
  g_who = hooks.who;
  supervise::SuperviseOptions options = supervise_options(o);  // patterns RE2 refuses fail here
  const std::string checkpoint_dir = checkpoint_dir_at_start(o.checkpoint_dir);
  std::optional<supervise::Drill> drill = make_drill(o, checkpoint_dir);
  const std::optional<supervise::RecoveryPlan> plan = recovery_plan(o.recovery);
  if (drill) options.drill = &*drill;
  EventsFile events(o.events);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  install_signal_handlers();
  bool reached = false;
  if (hooks.done) options.progress_every_s = 0;  // every progress line is an event to look at
  supervise::EventSink sink = [&](nlohmann::json e) {
    e["schema"] = supervise::kRunEventsSchema;
    if (reached && e.value("event", "") == "stopped") {
      e["reason"] = "done";  // plumb stopped the job once it had done what it was run for
      events.write(e);
      say("the job has done what it was run for: plumb stopped it (not a failure)");
      return;
    }
    events.write(e);
    tell(e, o);
    if (hooks.done && !reached && hooks.done(e, drill ? &*drill : nullptr)) {
      reached = true;
      g_supervised_stop = true;
    }
  };
  std::vector<std::string> unusable;  // hosts left out of every relaunch
  if (plan) {
    options.recover = [&](int) {
      supervise::RecoveryOutcome out = supervise::run_recovery(*plan, sink, &g_supervised_stop);
      note_unusable(out, o, unusable);
      return out.steps;
    };
  }
  for (const auto& kv : hooks.env) options.attempt.env.push_back(kv);
  if (hooks.before_attempt) hooks.before_attempt(options.attempt);
  options.prepare = [&](int, supervise::AttemptOptions& next, nlohmann::json& restart) {
    if (hooks.before_attempt) hooks.before_attempt(next);
    if (!unusable.empty()) {
      restart["excluded_hosts"] = unusable;
      next.argv = supervise::with_exclusions(next.argv, o.recovery.config.exclude_template, unusable);
    }
    if (checkpoint_dir.empty()) return std::optional<int64_t>();
    return resume_from_checkpoint(o, checkpoint_dir, next, sink);
  };
  const std::string started = utc_timestamp();
  const std::optional<sysinfo::SlurmJob> job = sysinfo::slurm_job();  // a bad SLURM_* fails now
  MetricsFile metrics(o.metrics);
  if (metrics.on()) {
    metrics.first(live_baseline(o, supervise::RunSummary(), started));  // writable?
    options.on_change = [&](const supervise::RunSummary& so_far) {
      metrics.update(live_baseline(o, so_far, started));
    };
  }
  SupervisedRun run;
  run.summary = supervise::supervise(options, sink);
  run.reached = reached;
  if (reached) {  // plumb stopped it: its goal, not a signal; the next supervised run starts anew
    run.summary.stopped = false;
    g_supervised_stop = false;
  }
  run.drill = drill.has_value();
  run.baseline = baseline_of(o, run.summary, started, drill ? &*drill : nullptr);
  run.baseline.job = job;
  conclude(run.baseline, metrics, events, run.drill);
  run.exit_code = drill ? drill_verdict(run.summary, run.baseline, *drill)
                        : supervise::exit_code_of(run.summary);
  return run;
}

}  // namespace plumb::cli
