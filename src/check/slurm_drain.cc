#include "check/slurm_drain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "common/strings.h"

namespace plumb::check {
namespace {

// The marks Slurm appends to a state word in sinfo's %T (man sinfo, "NODE STATE CODES"): '*' not
// responding, '~' powered off, '#' powering up, '!' pending power down, '%' powering down, '$'
// maintenance reservation, '@' pending reboot, '^' rebooting, '-' planned.
constexpr std::string_view kStateMarks = "*~#!%$@^-";

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The value of `key=` among the blank-separated words of `line`, or nothing.
std::optional<std::string> word_value(std::string_view line, std::string_view key) {
  for (const std::string& word : words_of(line)) {
    if (word.size() > key.size() && word.compare(0, key.size(), key) == 0 &&
        word[key.size()] == '=') {
      return word.substr(key.size() + 1);
    }
  }
  return std::nullopt;
}

// "maint [root@2026-12-07T00:01:18]" -> "maint": scontrol adds who set the reason and when.
std::string without_setter(std::string reason) {
  const size_t open = reason.rfind(" [");
  if (open != std::string::npos && !reason.empty() && reason.back() == ']' &&
      reason.find('@', open) != std::string::npos) {
    reason.erase(open);
  }
  return reason;
}

// The lines of one node's record: from "NodeName=<name> " to the next "NodeName=" line.
std::vector<std::string> node_record(std::string_view text, std::string_view name) {
  std::vector<std::string> record;
  bool inside = false;
  for (const std::string& line : lines_of(text)) {
    const std::string_view trimmed = trim_blanks(line);
    if (trimmed.rfind("NodeName=", 0) == 0) inside = word_value(trimmed, "NodeName") == name;
    if (inside) record.emplace_back(trimmed);
  }
  return record;
}

// The lines whose words are key=value fields (the OS= and Reason= lines are free text).
bool free_text_line(std::string_view line) {
  return line.rfind("OS=", 0) == 0 || line.rfind("Reason=", 0) == 0 ||
         line.rfind("Comment=", 0) == 0 || line.rfind("Extra=", 0) == 0;
}

void read_record_line(std::string_view line, SlurmNode& node) {
  if (line.rfind("Reason=", 0) == 0) {
    node.reason = without_setter(std::string(trim_blanks(line.substr(7))));
    return;
  }
  if (free_text_line(line)) return;
  if (const auto state = word_value(line, "State")) node.state = split_list(*state, '+');
  if (const auto parts = word_value(line, "Partitions")) node.partitions = split_list(*parts, ',');
}

std::string strip_marks(std::string state) {
  while (!state.empty() && kStateMarks.find(state.back()) != std::string_view::npos)
    state.pop_back();
  return state;
}

// The finding a reason names: the check, then what it found (the detail when it found nothing to
// show, as an unknown does).
std::string finding(const CheckResult& c) {
  const std::string& what = c.value.empty() ? c.detail : c.value;
  return what.empty() ? c.name : fmt::format("{}: {}", c.name, what);
}

// One line: control characters (a value read from a device may hold a newline) become spaces,
// runs of blanks one space, none at the ends.
std::string one_line(std::string_view text) {
  std::string line;
  for (const char ch : text) {
    const bool blank = static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f;
    if (!blank) {
      line += ch;
    } else if (!line.empty() && line.back() != ' ') {
      line += ' ';
    }
  }
  if (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// Cut to `max` bytes, at a whole UTF-8 character, ending in "...".
std::string cut(std::string text, size_t max) {
  if (text.size() <= max) return text;
  constexpr std::string_view kEllipsis = "...";
  text.resize(complete_utf8_prefix(std::string_view(text).substr(0, max - kEllipsis.size())));
  return text + std::string(kEllipsis);
}

}  // namespace

bool SlurmNode::drained() const {
  return std::find(state.begin(), state.end(), "DRAIN") != state.end();
}

bool SlurmNode::drained_by_plumb() const {
  return drained() && reason.rfind(kSlurmReasonLeader, 0) == 0;
}

std::optional<SlurmNode> parse_scontrol_node(std::string_view text, std::string_view name,
                                             std::string& problem) {
  const std::vector<std::string> record = node_record(text, name);
  if (record.empty()) {
    const std::string said = one_line(text);
    problem = said.empty() ? fmt::format("scontrol printed nothing for node {}", name)
                           : fmt::format("scontrol does not know node {}: {}", name,
                                         cut(said, kSlurmReasonMaxBytes));
    return std::nullopt;
  }
  SlurmNode node;
  node.name = std::string(name);
  for (const std::string& line : record) read_record_line(line, node);
  if (node.state.empty()) {
    problem = fmt::format("scontrol show node {}: no State= in its output", name);
    return std::nullopt;
  }
  return node;
}

std::vector<PartitionLoad> parse_sinfo_partitions(std::string_view text) {
  std::map<std::string, PartitionLoad> loads;
  std::vector<std::string> order;
  for (const std::string& line : lines_of(text)) {
    const std::vector<std::string> words = words_of(line);
    if (words.size() != 3) continue;
    std::string partition = words[1];
    if (!partition.empty() && partition.back() == '*') partition.pop_back();
    if (!loads.count(partition)) order.push_back(partition);
    PartitionLoad& load = loads[partition];
    load.partition = partition;
    ++load.nodes;
    const std::string state = strip_marks(words[2]);
    if (state == "drained" || state == "draining") ++load.drained;
  }
  std::vector<PartitionLoad> out;
  for (const std::string& p : order) out.push_back(loads[p]);
  return out;
}

std::optional<std::string> drain_refusal(const std::vector<PartitionLoad>& loads,
                                         double max_fraction) {
  for (const PartitionLoad& load : loads) {
    if (load.nodes <= 0) continue;
    const int after = load.drained + 1;
    const double fraction = static_cast<double>(after) / load.nodes;
    if (fraction <= max_fraction) continue;
    return fmt::format(
        "partition {} would have {} of {} nodes drained ({:.0f}%), over "
        "--max-drain-fraction {:g}",
        load.partition, after, load.nodes, 100.0 * fraction, max_fraction);
  }
  return std::nullopt;
}

std::string slurm_drain_reason(const NodeReport& report) {
  const std::vector<const CheckResult*> worst = report.worst();
  if (worst.empty()) return std::string(kSlurmReasonLeader) + " no failing check";
  std::string reason = fmt::format("{} {}", kSlurmReasonLeader, finding(*worst.front()));
  const std::string more =
      worst.size() > 1 ? fmt::format(" (+{} more)", worst.size() - 1) : std::string();
  reason = cut(one_line(reason), kSlurmReasonMaxBytes - more.size());
  return reason + more;
}

std::string slurm_node_name(const std::string& flag, const char* slurmd_nodename,
                            const std::string& host) {
  if (!flag.empty()) return flag;
  if (slurmd_nodename != nullptr && *slurmd_nodename != '\0') return slurmd_nodename;
  return host.substr(0, host.find('.'));
}

}  // namespace plumb::check

// ---- act_on_slurm -------------------------------------------------------------------------------

namespace plumb::check {

SchedulerVerdict scheduler_verdict(const NodeReport& report, Status drain_on) {
  bool undecided = false;
  for (const CheckResult& c : report.checks) {
    if (c.skipped) continue;
    if (c.status == Status::kUnknown) undecided = true;
    if (c.status != Status::kUnknown && static_cast<int>(c.status) >= static_cast<int>(drain_on)) {
      return SchedulerVerdict::kFail;
    }
  }
  return undecided ? SchedulerVerdict::kUndecided : SchedulerVerdict::kPass;
}

std::vector<std::string> unknown_check_names(const NodeReport& report) {
  std::vector<std::string> names;
  for (const CheckResult& c : report.checks) {
    if (!c.skipped && c.status == Status::kUnknown) names.push_back(c.name);
  }
  return names;
}

namespace {

// One scontrol/sinfo run's output, or its problem ("scontrol: exit status 1") in `problem`.
std::optional<std::string> output_of(const SlurmRunner& run, const std::vector<std::string>& argv,
                                     std::string& problem) {
  const ToolRun r = run(argv);
  if (r.ok()) return r.output;
  problem = r.problem();
  // scontrol says "Node x not found" on standard output with exit status 1.
  const std::string said = one_line(r.output);
  if (r.state == ToolRun::State::kDone && !said.empty()) {
    problem += ": " + cut(said, kSlurmReasonMaxBytes);
  }
  return std::nullopt;
}

struct Acting {
  const NodeReport& report;
  const SlurmOptions& options;
  const SlurmRunner& run;
  SlurmOutcome outcome;

  void say(std::string line) { outcome.lines.push_back("plumb check: " + std::move(line)); }
  // A Slurm command that failed: said, and the exit code is at least "unknown".
  void failed(const std::string& what, const std::string& problem) {
    say(fmt::format("could not {} {}: {}", what, options.node, problem));
    outcome.exit_code = exit_code(worse(report.status(), Status::kUnknown));
  }
  bool update(const std::vector<std::string>& fields, const std::string& what) {
    std::vector<std::string> argv = {"scontrol", "update", "NodeName=" + options.node};
    argv.insert(argv.end(), fields.begin(), fields.end());
    std::string problem;
    if (output_of(run, argv, problem)) return true;
    failed(what, problem);
    return false;
  }
};

// The check a plumb reason names ("pcie.link" of "plumb: pcie.link: mlx5_0 at x8"), or "".
std::string drained_for(const std::string& reason) {
  const std::string rest(trim_blanks(std::string_view(reason).substr(kSlurmReasonLeader.size())));
  const size_t colon = rest.find(':');
  return colon == std::string::npos ? std::string() : rest.substr(0, colon);
}

// Whether the check `name` ran in this pass (a pass of `--only host` says nothing of accel.count).
bool judged(const NodeReport& report, const std::string& name) {
  return std::any_of(report.checks.begin(), report.checks.end(),
                     [&](const CheckResult& c) { return c.name == name && !c.skipped; });
}

void on_pass(Acting& a, const SlurmNode& node) {
  const std::string& n = a.options.node;
  const std::string check = node.drained_by_plumb() ? drained_for(node.reason) : std::string();
  if (!check.empty() && !judged(a.report, check)) {
    a.say(fmt::format("{} passes but stays drained: {}, the check it was drained for, did not run "
                      "({})",
                      n, check, node.reason));
  } else if (node.drained_by_plumb()) {
    if (a.update({"State=RESUME"}, "resume")) {
      a.say(fmt::format("resumed {}: it passes now (plumb had drained it: {})", n, node.reason));
    }
  } else if (node.drained()) {
    a.say(fmt::format("{} passes but stays drained: its reason '{}' was not set by plumb", n,
                      node.reason));
  } else {
    a.say(fmt::format("{} passes; not drained, nothing to do", n));
  }
}

// The partitions' drained counts, or nothing (and the problem said) when sinfo gives none.
std::optional<std::vector<PartitionLoad>> partition_loads(Acting& a, const SlurmNode& node) {
  if (node.partitions.empty()) return std::vector<PartitionLoad>{};
  std::string problem;
  const auto text = output_of(
      a.run, {"sinfo", "-h", "-N", "-p", join(node.partitions, ","), "-o", "%N %P %T"}, problem);
  if (!text) {
    a.say(
        fmt::format("did not drain {} ({}): cannot count the drained nodes of its partitions "
                    "(--max-drain-fraction): {}",
                    a.options.node, slurm_drain_reason(a.report), problem));
    return std::nullopt;
  }
  return parse_sinfo_partitions(*text);
}

void drain(Acting& a, const SlurmNode& node, const std::string& reason) {
  const std::optional<std::vector<PartitionLoad>> loads = partition_loads(a, node);
  if (!loads) {
    a.outcome.exit_code = exit_code(Status::kCritical);
    return;
  }
  if (const auto refusal = drain_refusal(*loads, a.options.max_drain_fraction)) {
    a.say(fmt::format("did not drain {} ({}): {}; drain it by hand if it must go", a.options.node,
                      reason, *refusal));
    a.outcome.exit_code = exit_code(Status::kCritical);
    return;
  }
  if (a.update({"State=DRAIN", "Reason=" + reason}, "drain")) {
    a.say(fmt::format("drained {}: {}", a.options.node, reason));
  }
}

void on_fail(Acting& a, const SlurmNode& node) {
  const std::string reason = slurm_drain_reason(a.report);
  const std::string& n = a.options.node;
  if (node.drained_by_plumb() && node.reason == reason) {
    a.say(fmt::format("{} stays drained: {}", n, reason));
  } else if (node.drained_by_plumb()) {
    if (a.update({"State=DRAIN", "Reason=" + reason}, "update the reason of")) {
      a.say(fmt::format("{} stays drained, its reason now: {}", n, reason));
    }
  } else if (node.drained()) {
    a.say(fmt::format("{} fails ({}) and stays drained as it was, for '{}' (not set by plumb)", n,
                      reason, node.reason));
  } else {
    drain(a, node, reason);
  }
}

}  // namespace

SlurmOutcome act_on_slurm(const NodeReport& report, const SlurmOptions& options,
                          const SlurmRunner& run) {
  Acting a{report, options, run, {{}, exit_code(report.status())}};
  std::string problem;
  const auto shown = output_of(run, {"scontrol", "show", "node", options.node}, problem);
  std::optional<SlurmNode> node;
  if (shown) node = parse_scontrol_node(*shown, options.node, problem);
  if (!node) {
    a.failed("read the state of", problem);
    return a.outcome;
  }
  switch (scheduler_verdict(report, options.drain_on)) {
    case SchedulerVerdict::kFail:
      on_fail(a, *node);
      break;
    case SchedulerVerdict::kPass:
      on_pass(a, *node);
      break;
    case SchedulerVerdict::kUndecided:
      a.say(fmt::format("{} left as it is ({}): could not judge {}", options.node,
                        node->drained() ? "drained" : "not drained",
                        join(unknown_check_names(report), ", ")));
      break;
  }
  return a.outcome;
}

}  // namespace plumb::check
