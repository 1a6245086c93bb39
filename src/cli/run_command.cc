#include "cli/run_command.h"

#include <signal.h>
#include <sys/prctl.h>

#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/environment.h"
#include "common/error.h"
#include "supervise/checkpoint.h"
#include "supervise/supervisor.h"

namespace plumb::cli {
namespace {

// Set by SIGINT/SIGTERM: the supervisor stops the job and does not count it as a failure. A
// signal handler can reach nothing else.
std::atomic<bool> g_stop{false};

void on_stop(int) { g_stop = true; }

void install_stop_handlers() {
  struct sigaction sa{};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

std::vector<supervise::LinePattern> patterns(const std::vector<std::string>& given,
                                             const char* option,
                                             std::vector<supervise::LinePattern> defaults) {
  if (given.empty()) return defaults;
  std::vector<supervise::LinePattern> out;
  for (const std::string& p : given) out.push_back(supervise::user_pattern(option, p));
  return out;
}

void say(const std::string& line) { std::cerr << "plumb run: " << line << "\n" << std::flush; }

// What the console says of an event (the JSONL file has all of it).
void tell(const nlohmann::json& e) {
  const std::string kind = e.value("event", "");
  if (kind == "failure") {
    say(fmt::format("attempt {} failed: {} ({}){}", e["attempt"].get<int>(),
                    e["kind"].get<std::string>(), e["detail"].get<std::string>(),
                    e["step"].is_null() ? "" : fmt::format(", last step {}", e["step"].dump())));
  } else if (kind == "restart") {
    say(fmt::format("restarting: attempt {}", e["attempt"].get<int>()));
  } else if (kind == "give_up") {
    say(fmt::format("giving up: more than the allowed restarts within the window; last "
                    "failure: {}",
                    e["last_failure"].get<std::string>()));
  } else if (kind == "checkpoint") {
    for (const auto& skipped : e["skipped"]) {
      say(fmt::format("skipped checkpoint {}: {}", skipped["path"].get<std::string>(),
                      skipped["reason"].get<std::string>()));
    }
    say(e["path"].is_null() ? std::string("no complete checkpoint: restarting from the beginning")
                            : fmt::format("resuming from {}{}", e["path"].get<std::string>(),
                                          e["step"].is_null() ? "" : " (step " + e["step"].dump() + ")"));
  } else if (kind == "stopped") {
    say("stopped by a signal; the job was stopped");
  }
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

nlohmann::json checkpoint_event(const supervise::CheckpointChoice& c) {
  nlohmann::json e = {{"event", "checkpoint"}, {"time", utc_timestamp()}};
  e["path"] = c.path.empty() ? nlohmann::json() : nlohmann::json(c.path.string());
  e["step"] = c.step ? nlohmann::json(*c.step) : nlohmann::json();
  e["format"] = c.format;
  e["skipped"] = nlohmann::json::array();
  for (const supervise::SkippedCheckpoint& s : c.skipped) {
    e["skipped"].push_back({{"path", s.path.string()}, {"reason", s.reason}});
  }
  return e;
}

// Before a restart: the newest complete checkpoint into the environment and the command line.
void resume_from_checkpoint(const RunOptions& o, supervise::AttemptOptions& next,
                            const supervise::EventSink& sink) {
  supervise::CheckpointChoice c = supervise::find_checkpoint(o.checkpoint_dir);
  sink(checkpoint_event(c));
  if (c.path.empty()) return;
  std::string step = c.step ? std::to_string(*c.step) : "";
  next.env.push_back({"PLUMB_RESUME_FROM", c.path.string()});
  if (c.step) next.env.push_back({"PLUMB_RESUME_STEP", step});
  if (!o.resume_arg.empty()) {
    for (std::string& w : resume_words(o.resume_arg, c.path.string(), step)) {
      next.argv.push_back(std::move(w));
    }
  }
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
  s.attempt.stop = &g_stop;
  s.max_restarts = o.max_restarts;
  s.restart_window_s = o.restart_window_s;
  s.backoff_s = o.backoff_s;
  return s;
}

}  // namespace

void setup_run(CLI::App& app, RunOptions& o) {
  app.add_option("COMMAND", o.command, "The job, after --: a training script or a launcher");
  app.add_option("--hang-timeout", o.hang_timeout_s,
                 "Seconds without progress that make a hang (0: never)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e7));
  app.add_option("--progress-regex", o.progress_regex,
                 "A line matching this is progress; group 1 is the step (replaces the defaults)");
  app.add_option("--fatal-regex", o.fatal_regex,
                 "A line matching this ends the attempt at once (replaces the defaults)");
  app.add_option("--heartbeat", o.heartbeat, "A file whose modification counts as progress");
  app.add_option("--kill-grace", o.kill_grace_s, "Seconds between SIGTERM and SIGKILL")
      ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
  app.add_option("--max-restarts", o.max_restarts, "Restarts allowed within --restart-window")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  app.add_option("--restart-window", o.restart_window_s, "Seconds the restart limit counts over")
      ->capture_default_str()->check(CLI::Range(0.0, 1e9));
  app.add_option("--backoff", o.backoff_s, "Seconds before the first restart, doubling")
      ->capture_default_str()->check(CLI::Range(0.0, 86400.0));
  app.add_option("--events", o.events, "Write plumb.run-events/1 JSONL here");
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "The job's checkpoints: a restart resumes from the newest complete one "
                 "(PLUMB_RESUME_FROM, PLUMB_RESUME_STEP); never modified");
  app.add_option("--resume-arg", o.resume_arg,
                 "Words added to a restart's command, with {checkpoint} and {step} put in");
  app.footer("Exit status: 0 the job finished with 0; 1 gave up after too many failures; 2 bad "
             "usage (no command after --, a command that does not exist, a bad regex); 130 "
             "stopped by SIGINT/SIGTERM.");
}

int run_run(const RunOptions& o) {
  if (o.command.empty()) {
    throw Error("no command after --: plumb run [options] -- COMMAND [ARGS...]");
  }
  supervise::SuperviseOptions options = supervise_options(o);
  std::ofstream events;
  if (!o.events.empty()) {
    events.open(o.events, std::ios::trunc);
    if (!events) throw Error(fmt::format("--events {}: cannot be written", o.events));
  }
  if (!o.checkpoint_dir.empty()) supervise::find_checkpoint(o.checkpoint_dir);  // readable?
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  install_stop_handlers();
  supervise::EventSink sink = [&](nlohmann::json e) {
    e["schema"] = supervise::kRunEventsSchema;
    if (events.is_open()) events << e.dump() << "\n" << std::flush;
    tell(e);
  };
  if (!o.checkpoint_dir.empty()) {
    options.prepare = [&](int, supervise::AttemptOptions& next, nlohmann::json&) {
      resume_from_checkpoint(o, next, sink);
    };
  }
  supervise::RunSummary summary = supervise::supervise(options, sink);
  return supervise::exit_code_of(summary);
}

}  // namespace plumb::cli
