#include "cli/recover_command.h"

#include <CLI/CLI.hpp>
#include <signal.h>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <atomic>
#include <iostream>

#include "common/error.h"

namespace plumb::cli {
namespace {

std::atomic<bool> g_recover_stop{false};

void on_recover_stop(int) { g_recover_stop = true; }

}  // namespace

void setup_recover(CLI::App& app, RecoverOptions& o) {
  add_recovery_options(app, o.recovery);
  app.add_flag("--json", o.json, "Print each step as a recovery_step JSON line instead");
  app.footer("Exit status: 0 every step ok; 1 a step failed or a host is unusable; 2 bad usage "
             "(no step asked for, an unknown step, a vendor tool not in PATH).");
}

int run_recover(const RecoverOptions& o) {
  const std::optional<supervise::RecoveryPlan> plan = recovery_plan(o.recovery);
  if (!plan) throw Error("nothing to do: give --recover STEPS and/or --on-failure CMD");
  struct sigaction sa{};
  sa.sa_handler = on_recover_stop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  supervise::RecoveryOutcome out = supervise::run_recovery(
      *plan,
      [&](nlohmann::json e) {
        fmt::print(std::cout, "{}\n", o.json ? e.dump() : recovery_step_line(e));
        std::cout << std::flush;
      },
      &g_recover_stop);
  for (const std::string& host : out.unusable_hosts) {
    fmt::print(std::cout, "plumb: unusable host {}\n", host);
  }
  if (out.stopped) return 130;
  bool ok = out.unusable_hosts.empty();
  for (const supervise::RecoveryStepTiming& s : out.steps) ok = ok && s.ok;
  return ok ? 0 : 1;
}

}  // namespace plumb::cli
