#include "cli/check_scheduler.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cstdlib>

#include "check/npd_plugin.h"
#include "check/slurm_drain.h"
#include "common/environment.h"
#include "report/check_reporter.h"

namespace plumb::cli {
namespace {

check::Status drain_on(const CheckSchedulerOptions& o) {
  return o.drain_on == "warning" ? check::Status::kWarning : check::Status::kCritical;
}

int act_for_slurm(const check::NodeReport& report, const CheckSchedulerOptions& o,
                  std::ostream& out) {
  check::SlurmOptions slurm;
  slurm.node = check::slurm_node_name(o.node, std::getenv("SLURMD_NODENAME"), host_name());
  slurm.drain_on = drain_on(o);
  slurm.max_drain_fraction = o.max_drain_fraction;
  check::NodeContext context;
  context.tool_timeout_s = kSlurmToolTimeoutS;
  const check::SlurmOutcome outcome = check::act_on_slurm(
      report, slurm,
      [&context](const std::vector<std::string>& argv) { return context.tool(argv); });
  fmt::print(out, "{}\n", report::check_summary_line(report));
  for (const std::string& line : outcome.lines) fmt::print(out, "{}\n", line);
  return outcome.exit_code;
}

// NPD reads standard output whatever --json says: the message is its one line.
int act_for_npd(const check::NodeReport& report, const CheckSchedulerOptions& o) {
  const check::NpdResult r = check::npd_result(report, drain_on(o), o.npd_max_output);
  fmt::print("{}\n", r.message);
  return static_cast<int>(r.status);
}

}  // namespace

void add_check_scheduler_options(CLI::App& node, CheckSchedulerOptions& options) {
  CLI::Option* slurm = node.add_flag(
      "--slurm", options.slurm,
      "Act as Slurm's HealthCheckProgram: drain this node on a failing pass (reason 'plumb: "
      "<check>: <value>'), resume it on a passing one only if plumb drained it");
  CLI::Option* npd = node.add_flag(
      "--npd", options.npd,
      "Act as a Kubernetes node-problem-detector custom plugin: one message line, exit 0 OK, "
      "1 NonOK, 2 Unknown");
  slurm->excludes(npd);
  node.add_option("--node", options.node,
                  "--slurm: the node's Slurm name (default: $SLURMD_NODENAME, else this host's "
                  "short name)");
  node.add_option("--drain-on", options.drain_on,
                  "--slurm/--npd: the lowest status that takes the node out (NHC drains on any "
                  "failure; a warning is a finding a job runs through)")
      ->check(CLI::IsMember({"warning", "critical"}))
      ->capture_default_str();
  node.add_option("--max-drain-fraction", options.max_drain_fraction,
                  "--slurm: never drain a node that would take more than this share of any of "
                  "its partitions out (drained or draining), so a fault common to all nodes cannot "
                  "empty the cluster")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  node.add_option("--npd-max-output", options.npd_max_output,
                  "--npd: the message's most bytes (the monitor's max_output_length)")
      ->check(CLI::Range(size_t{8}, size_t{4096}))
      ->capture_default_str();
}

bool scheduler_mode(const CheckSchedulerOptions& options) { return options.slurm || options.npd; }

int act_for_scheduler(const check::NodeReport& report, const CheckSchedulerOptions& options,
                      std::ostream& out) {
  if (options.npd) return act_for_npd(report, options);
  return act_for_slurm(report, options, out);
}

}  // namespace plumb::cli
