#include "cli/check_scheduler.h"

namespace plumb::cli {

void add_check_scheduler_options(CLI::App& node, CheckSchedulerOptions& options) {
  (void)node;
  (void)options;
}

bool scheduler_mode(const CheckSchedulerOptions& options) { return options.slurm || options.npd; }

int act_for_scheduler(const check::NodeReport& report, const CheckSchedulerOptions& options,
                      std::ostream& out) {
  (void)options;
  (void)out;
  return check::exit_code(report.status());
}

}  // namespace plumb::cli
