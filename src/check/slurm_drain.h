// plumb check node --slurm: what Slurm's HealthCheckProgram does with a node's verdict. Modelled
// on LBNL NHC (it drains with an "NHC: ..." reason and only ever resumes a node whose reason it
// set): a failing node is drained with the reason "plumb: <check>: <value>"; a passing node is
// resumed only when it is drained and its reason starts with "plumb:", so a node an operator
// drained by hand stays drained; and no more than --max-drain-fraction of a partition is drained
// at once, so that a fault common to every node (a bad check file, a driver roll-out) cannot empty
// the cluster. docs/check.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/node_context.h"
#include "check/node_run.h"
#include "check/status.h"

namespace plumb::check {

// The start of every reason plumb sets; the mark by which it knows the drains that are its own.
inline constexpr std::string_view kSlurmReasonLeader = "plumb:";
// A reason longer than this is cut (with "..."): `sinfo -R` shows 20 characters and `scontrol show
// node` the whole; 100 keeps the check, the device and the value of any finding readable.
inline constexpr size_t kSlurmReasonMaxBytes = 100;

// One node as `scontrol show node NAME` prints it (the multi-line form; Slurm 20.11 to 24.x).
struct SlurmNode {
  std::string name;
  std::vector<std::string> state;       // "IDLE+DRAIN+NOT_RESPONDING" split at '+'
  std::string reason;                   // without Slurm's " [user@time]" suffix; empty when none
  std::vector<std::string> partitions;  // "Partitions=gpu,debug"

  // The DRAIN flag is set: drained (idle) or draining (jobs still running).
  bool drained() const;
  // Drained for a reason plumb set.
  bool drained_by_plumb() const;
};

// Parses `scontrol show node NAME`. Returns nothing and says why in `problem` when the text holds
// no such node ("Node nosuchnode not found") or no State=.
std::optional<SlurmNode> parse_scontrol_node(std::string_view text, std::string_view name,
                                             std::string& problem);

// One partition's nodes and how many of them are drained or draining.
struct PartitionLoad {
  std::string partition;
  int nodes = 0;
  int drained = 0;
};

// Parses `sinfo -h -N -p P1,P2 -o "%N %P %T"` (one line per node and partition; the default
// partition's name ends in '*'; a state may end in one of Slurm's flag marks, "idle*", "drained~").
std::vector<PartitionLoad> parse_sinfo_partitions(std::string_view text);

// The partition draining one more node would take past `max_fraction`, as the sentence that says
// so ("partition gpu would have 2 of 16 nodes drained (12%), over --max-drain-fraction 0.1"), or
// nothing when every partition stays within it.
std::optional<std::string> drain_refusal(const std::vector<PartitionLoad>& loads,
                                         double max_fraction);

// The reason for `report`'s worst checks: "plumb: pcie.link: mlx5_0 at x8", "... (+2 more)" when
// several share the worst status; one line, at most kSlurmReasonMaxBytes bytes.
std::string slurm_drain_reason(const NodeReport& report);

struct SlurmOptions {
  std::string node;                     // the node's Slurm name
  Status drain_on = Status::kCritical;  // the lowest status that drains (warning or critical)
  double max_drain_fraction = 0.1;
};

// What a pass means for a scheduler: take the node out (a check at `drain_on` or worse), let it
// (back) in (every check that ran is better than `drain_on`), or neither (no check fails but some
// could not be judged: the node is not known to be healthy, nor broken, so nothing changes).
enum class SchedulerVerdict { kFail, kPass, kUndecided };
SchedulerVerdict scheduler_verdict(const NodeReport& report, Status drain_on);

// The checks that ran and gave unknown, in table order.
std::vector<std::string> unknown_check_names(const NodeReport& report);

// Runs scontrol or sinfo (argv[0] from PATH) with a deadline; NodeContext::tool in production.
using SlurmRunner = std::function<ToolRun(const std::vector<std::string>&)>;

struct SlurmOutcome {
  std::vector<std::string> lines;  // one per action: "plumb check: drained node7: plumb: ..."
  int exit_code = 0;               // the monitoring-plugin code (Slurm ignores it)
};

// Acts on `report` for Slurm: drain, resume, or leave the node as it is, and says which.
SlurmOutcome act_on_slurm(const NodeReport& report, const SlurmOptions& options,
                          const SlurmRunner& run);

// The node's Slurm name: `flag` (--node) if given, else $SLURMD_NODENAME (slurmd sets it for its
// HealthCheckProgram), else this host's name up to its first dot.
std::string slurm_node_name(const std::string& flag, const char* slurmd_nodename,
                            const std::string& host);

}  // namespace plumb::check
