#include "supervise/recovery.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "common/environment.h"
#include "common/error.h"
#include "common/steady_time.h"
#include "common/strings.h"
#include "supervise/recovery_vendors.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kTailLines = 20;          // output_tail: the last lines of the tools' output
constexpr size_t kTailBytes = 2048;        // ... and at most this much of it
constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr std::string_view kUnusableHostLine = "plumb: unusable host ";

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

// What one step did, before it is timed and reported.
struct StepReport {
  bool ok = true;
  std::string detail;
  std::vector<std::string> devices;
  std::vector<std::string> down;            // link-check
  std::vector<std::string> unusable_hosts;
  nlohmann::json extra = nlohmann::json::object();
};

// ---- clear-cache: SIGTERM to every process still holding a device, SIGKILL after the grace.

// Alive and not a zombie (a zombie holds no device; plumb may be its reaper). Another user's
// process plumb may not signal counts as alive: it was not stopped.
bool alive(long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

std::vector<long> still_alive(const std::vector<long>& pids) {
  std::vector<long> left;
  for (long pid : pids) {
    if (alive(pid)) left.push_back(pid);
  }
  return left;
}

// Waits until none of `pids` is alive, `seconds` passed or the step ends; returns the living.
std::vector<long> wait_gone(StepContext& context, std::vector<long> pids, double seconds) {
  const Clock::time_point until = std::min(after(seconds), context.deadline());
  while (!(pids = still_alive(pids)).empty() && Clock::now() < until) {
    if (context.stop() && context.stop()->load()) break;
    std::this_thread::sleep_for(kPoll);
  }
  return pids;
}

std::string pid_list(const std::vector<long>& pids) {
  std::vector<std::string> words;
  for (long pid : pids) words.push_back(std::to_string(pid));
  return join(words, ", ");
}

StepReport clear_cache(StepContext& context, const VendorStrategy& vendor) {
  std::vector<long> pids;
  for (const DeviceHolder& holder : vendor.holders(context)) {
    if (holder.pid > 1 && holder.pid != getpid()) pids.push_back(holder.pid);
  }
  StepReport report;
  for (int id : context.plan().devices) report.devices.push_back(std::to_string(id));
  if (pids.empty()) {
    report.detail = "no process held the devices";
    return report;
  }
  for (long pid : pids) kill(static_cast<pid_t>(pid), SIGTERM);
  const std::vector<long> stubborn = wait_gone(context, pids, context.plan().kill_grace_s);
  for (long pid : stubborn) kill(static_cast<pid_t>(pid), SIGKILL);
  const std::vector<long> left = wait_gone(context, stubborn, context.plan().kill_grace_s);
  report.extra["stopped_pids"] = pids;
  report.ok = left.empty();
  report.detail = fmt::format("stopped {} process{} ({}), {} after SIGKILL", pids.size(),
                              pids.size() == 1 ? "" : "es", pid_list(pids), stubborn.size());
  if (!left.empty()) report.detail += fmt::format("; still running: {}", pid_list(left));
  return report;
}

// ---- reset-device: the vendor's reset per device, ok when each exits 0.

StepReport reset_device(StepContext& context, const VendorStrategy& vendor) {
  StepReport report;
  std::vector<std::string> failed;
  for (const RecoveryDevice& device : context.devices()) {
    report.devices.push_back(device.name);
    const ToolResult result = context.run(device.reset_argv, vendor.reset_input);
    if (result.exit_code != 0) failed.push_back(fmt::format("{} (exit {})", device.name, result.exit_code));
  }
  report.ok = failed.empty();
  report.detail = failed.empty()
                      ? fmt::format("reset {} device{}", report.devices.size(),
                                    report.devices.size() == 1 ? "" : "s")
                      : fmt::format("reset failed on {} of {} devices: {}", failed.size(),
                                    report.devices.size(), join(failed, ", "));
  return report;
}

// ---- link-check: every link up, a down one looked at again before the host is given up.

std::vector<LinkTarget> down_links(StepContext& context, const VendorStrategy& vendor,
                                   const std::vector<LinkTarget>& targets) {
  std::vector<LinkTarget> down;
  for (const LinkTarget& target : targets) {
    if (!vendor.link_up(context, target)) down.push_back(target);
  }
  return down;
}

StepReport link_check(StepContext& context, const VendorStrategy& vendor) {
  const std::vector<LinkTarget> targets = vendor.links(context);
  StepReport report;
  for (const LinkTarget& target : targets) report.devices.push_back(target.name);
  if (targets.empty()) {
    report.detail = "no RDMA ports";
    return report;
  }
  std::vector<LinkTarget> down = down_links(context, vendor, targets);
  const RecoveryPlan& plan = context.plan();
  int rechecks = 0;
  for (; !down.empty() && rechecks < plan.link_rechecks; ++rechecks) {
    context.sleep(plan.link_recheck_interval_s);
    down = down_links(context, vendor, down);
  }
  for (const LinkTarget& target : down) report.down.push_back(target.name);
  report.ok = down.empty();
  if (report.ok) {
    report.detail = fmt::format("{} link{} up", targets.size(), targets.size() == 1 ? "" : "s");
    return report;
  }
  report.unusable_hosts.push_back(plan.host);
  const std::string looks =
      rechecks == 0 ? std::string()
                    : fmt::format(" after {} re-check{} {} s apart", rechecks,
                                  rechecks == 1 ? "" : "s", plan.link_recheck_interval_s);
  report.detail = fmt::format("link down on {}{}: host {} is unusable", join(report.down, ", "),
                              looks, plan.host);
  return report;
}

// ---- --on-failure CMD: the site's own step, /bin/sh -c, ok when it exits 0.

StepReport on_failure(StepContext& context, const std::string& command) {
  const ToolResult result = context.run({"/bin/sh", "-c", command});
  StepReport report;
  report.ok = result.exit_code == 0;
  report.detail = fmt::format("exit {}", result.exit_code);
  report.extra["command"] = command;
  for (const std::string& line : split_list(result.output, '\n')) {
    if (line.rfind(kUnusableHostLine, 0) != 0) continue;
    const std::vector<std::string> words = split_list(line.substr(kUnusableHostLine.size()), ' ');
    if (!words.empty()) report.unusable_hosts.push_back(words[0]);
  }
  if (!report.unusable_hosts.empty()) {
    report.detail += "; unusable: " + join(report.unusable_hosts, ", ");
  }
  return report;
}

using StepFunction = StepReport (*)(StepContext&, const VendorStrategy&);

struct BuiltinStep {
  std::string_view name;
  StepFunction run;
};

const std::vector<BuiltinStep>& builtin_steps() {
  static const std::vector<BuiltinStep> steps{
      {"clear-cache", clear_cache}, {"reset-device", reset_device}, {"link-check", link_check}};
  return steps;
}

StepFunction find_step(std::string_view name) {
  for (const BuiltinStep& step : builtin_steps()) {
    if (step.name == name) return step.run;
  }
  return nullptr;
}

// The last lines of what the step's tools printed, safe for JSON and a terminal.
std::string output_tail(const std::string& text) {
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  size_t start = 0;
  size_t lines = 0;
  for (size_t i = end; i > 0; --i) {
    if (text[i - 1] == '\n' && ++lines == kTailLines) {
      start = i;
      break;
    }
  }
  std::string_view tail = std::string_view(text).substr(start);
  if (tail.size() > kTailBytes) tail.remove_prefix(tail.size() - kTailBytes);
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
    tail.remove_prefix(1);  // a UTF-8 sequence cut at the start
  }
  return terminal_safe(tail, true);
}

void record(const std::string& name, Clock::time_point start, const StepContext& context,
            StepReport report, const std::function<void(nlohmann::json)>& sink,
            RecoveryOutcome& outcome) {
  const double seconds = seconds_since(start);
  outcome.steps.push_back({name, seconds, report.ok, report.detail});
  for (const std::string& host : report.unusable_hosts) outcome.unusable_hosts.push_back(host);
  for (const std::string& device : report.down) outcome.down_devices.push_back(device);
  nlohmann::json event{{"event", "recovery_step"}, {"time", utc_timestamp()}, {"name", name},
                       {"seconds", seconds}, {"ok", report.ok}, {"detail", report.detail},
                       {"output_tail", output_tail(context.transcript())},
                       {"devices", report.devices}};
  if (name == "link-check") event["down"] = report.down;
  if (!report.unusable_hosts.empty()) event["unusable_hosts"] = report.unusable_hosts;
  event.update(report.extra);
  if (sink) sink(std::move(event));
}

// Runs one step within its timeout; false when plumb was stopped during it.
bool run_step(const RecoveryPlan& plan, const std::string& name,
              const std::function<StepReport(StepContext&)>& body,
              const std::function<void(nlohmann::json)>& sink, const std::atomic<bool>* stop,
              RecoveryOutcome& outcome) {
  const Clock::time_point start = Clock::now();
  StepContext context(plan, find_vendor(plan.vendor), after(plan.step_timeout_s), stop);
  StepReport report;
  bool stopped = false;
  try {
    report = body(context);
  } catch (const StepInterrupted& interrupted) {
    report.ok = false;
    report.detail = interrupted.detail;
    stopped = interrupted.stopped;
  } catch (const Error& error) {
    report.ok = false;
    report.detail = error.what();
  }
  record(name, start, context, std::move(report), sink, outcome);
  return !stopped;
}

std::vector<int> parse_devices(const std::string& text) {
  std::set<int> ids;
  for (const std::string& item : split_list(text, ',')) {
    int id = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (ec != std::errc() || end != item.data() + item.size() || id < 0) {
      throw Error(fmt::format("--devices '{}': '{}' is not a device number (expected numbers "
                              "like 0,1,3)", terminal_safe(text), terminal_safe(item)));
    }
    ids.insert(id);
  }
  return {ids.begin(), ids.end()};
}

// --vendor auto: the vendor whose tool is in PATH.
std::string resolve_vendor(const std::string& vendor, const std::string& first_step) {
  if (vendor != "auto") {
    const VendorStrategy& strategy = *find_vendor(vendor);
    if (!found_in_path(std::string(strategy.smi))) {
      throw Error(fmt::format("--vendor {}: {} is not in PATH", vendor, strategy.smi));
    }
    return vendor;
  }
  std::vector<std::string> found;
  for (const VendorStrategy& strategy : vendor_strategies()) {
    if (found_in_path(std::string(strategy.smi))) found.emplace_back(strategy.vendor);
  }
  if (found.size() == 1) return found[0];
  if (found.empty()) {
    throw Error(fmt::format("--recover {}: needs nvidia-smi or npu-smi, and neither is in PATH",
                            first_step));
  }
  throw Error("--vendor auto: both nvidia-smi and npu-smi are in PATH; pass --vendor nvidia or "
              "--vendor ascend");
}

void check_link_tools(const RecoveryPlan& plan) {
  if (std::find(plan.steps.begin(), plan.steps.end(), "link-check") == plan.steps.end()) return;
  for (std::string_view tool : find_vendor(plan.vendor)->link_tools) {
    if (!found_in_path(std::string(tool))) {
      throw Error(fmt::format("--recover link-check: {} is not in PATH (on Ascend hosts it is in "
                              "/usr/local/Ascend/driver/tools)", tool));
    }
  }
}

void check_steps(const std::vector<std::string>& steps) {
  for (const std::string& step : steps) {
    if (!find_step(step)) {
      throw Error(fmt::format("--recover '{}': unknown step (known: {})", terminal_safe(step),
                              join(recovery_step_names(), ", ")));
    }
  }
}

void check_vendor_name(const std::string& vendor) {
  if (vendor == "auto" || find_vendor(vendor)) return;
  throw Error(fmt::format("--vendor '{}': unknown vendor (known: auto, nvidia, ascend)",
                          terminal_safe(vendor)));
}

std::string sysfs_root(const RecoveryConfig& config) {
  if (!config.sysfs_root.empty()) return config.sysfs_root;
  const char* root = std::getenv("PLUMB_SYSFS_ROOT");
  return root && *root ? root : "/sys";
}

}  // namespace

ToolResult StepContext::run(const std::vector<std::string>& argv, const std::string& input) {
  transcript_ += "$ " + join(argv, " ") + "\n";
  ToolResult result = run_tool(argv, input, deadline_, stop_);
  transcript_ += result.output;
  if (!result.output.empty() && result.output.back() != '\n') transcript_ += "\n";
  if (result.stopped) {
    throw StepInterrupted{fmt::format("stopped (plumb was signalled); killed '{}'", join(argv, " ")),
                          true};
  }
  if (result.timed_out) {
    throw StepInterrupted{fmt::format("timed out after {} s (--recover-timeout); killed '{}'",
                                      plan_.step_timeout_s, join(argv, " ")),
                          false};
  }
  return result;
}

void StepContext::sleep(double seconds) {
  const Clock::time_point until = after(seconds);
  while (Clock::now() < until) {
    if (stop_ && stop_->load()) throw StepInterrupted{"stopped (plumb was signalled)", true};
    if (Clock::now() >= deadline_) {
      throw StepInterrupted{fmt::format("timed out after {} s (--recover-timeout) while waiting "
                                        "to re-check", plan_.step_timeout_s),
                            false};
    }
    std::this_thread::sleep_for(kPoll);
  }
}

const std::vector<RecoveryDevice>& StepContext::devices() {
  if (listed_) return devices_;
  std::vector<RecoveryDevice> all = vendor_->devices(*this);
  std::vector<std::string> names;
  for (const RecoveryDevice& device : all) names.push_back(std::to_string(device.select_id));
  for (int id : plan_.devices) {
    const bool listed = std::any_of(all.begin(), all.end(),
                                    [&](const RecoveryDevice& d) { return d.select_id == id; });
    if (!listed) {
      throw Error(fmt::format("--devices {}: {} lists no device {} (it lists {})", id,
                              vendor_->smi, id, names.empty() ? "none" : join(names, ", ")));
    }
  }
  for (RecoveryDevice& device : all) {
    if (plan_.devices.empty() || std::find(plan_.devices.begin(), plan_.devices.end(),
                                           device.select_id) != plan_.devices.end()) {
      devices_.push_back(std::move(device));
    }
  }
  listed_ = true;
  return devices_;
}

const std::vector<std::string>& recovery_step_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const BuiltinStep& step : builtin_steps()) list.emplace_back(step.name);
    return list;
  }();
  return names;
}

RecoveryPlan make_recovery_plan(const RecoveryConfig& config) {
  check_steps(config.steps);
  check_vendor_name(config.vendor);
  if (!(config.step_timeout_s > 0) || !std::isfinite(config.step_timeout_s)) {
    throw Error(fmt::format("--recover-timeout {}: expected a number of seconds above 0",
                            config.step_timeout_s));
  }
  const std::string& tmpl = config.exclude_template;
  if (!tmpl.empty() && tmpl.find("{host}") == std::string::npos &&
      tmpl.find("{hosts}") == std::string::npos) {
    throw Error(fmt::format("--exclude-template '{}': names neither {{host}} nor {{hosts}}",
                            terminal_safe(tmpl)));
  }
  RecoveryPlan plan;
  plan.steps = config.steps;
  plan.devices = parse_devices(config.devices);
  if (!plan.steps.empty()) plan.vendor = resolve_vendor(config.vendor, plan.steps.front());
  if (!plan.steps.empty()) check_link_tools(plan);
  plan.on_failure = config.on_failure;
  plan.step_timeout_s = config.step_timeout_s;
  plan.exclude_template = tmpl;
  plan.link_rechecks = std::max(0, config.link_rechecks);
  plan.link_recheck_interval_s = std::max(0.0, config.link_recheck_interval_s);
  plan.kill_grace_s = std::max(0.0, config.kill_grace_s);
  plan.sysfs_root = sysfs_root(config);
  plan.host = host_name();
  return plan;
}

RecoveryOutcome run_recovery(const RecoveryPlan& plan,
                             const std::function<void(nlohmann::json)>& sink,
                             const std::atomic<bool>* stop) {
  RecoveryOutcome outcome;
  const auto stopped = [&] { return stop && stop->load(); };
  for (const std::string& name : plan.steps) {
    if (stopped()) break;
    const StepFunction step = find_step(name);
    const VendorStrategy* vendor = find_vendor(plan.vendor);
    const auto body = [&](StepContext& context) {
      if (!step || !vendor) throw Error(fmt::format("no vendor for step '{}'", name));
      return step(context, *vendor);
    };
    if (!run_step(plan, name, body, sink, stop, outcome)) break;
  }
  for (const std::string& command : plan.on_failure) {
    if (stopped()) break;
    const auto body = [&](StepContext& context) { return on_failure(context, command); };
    if (!run_step(plan, "on-failure", body, sink, stop, outcome)) break;
  }
  outcome.stopped = stopped();
  return outcome;
}

std::vector<std::string> with_exclusions(const std::vector<std::string>& argv,
                                         const std::string& tmpl,
                                         const std::vector<std::string>& hosts) {
  if (argv.empty() || tmpl.empty() || hosts.empty()) return argv;
  const std::set<std::string> unique(hosts.begin(), hosts.end());
  const std::string list = join(std::vector<std::string>(unique.begin(), unique.end()), ",");
  std::vector<std::string> words;
  for (std::string word : split_list(tmpl, ' ')) {
    for (const std::string_view key : {std::string_view("{hosts}"), std::string_view("{host}")}) {
      for (size_t at = word.find(key); at != std::string::npos; at = word.find(key, at + list.size())) {
        word.replace(at, key.size(), list);
      }
    }
    words.push_back(std::move(word));
  }
  std::vector<std::string> out{argv[0]};
  out.insert(out.end(), words.begin(), words.end());
  out.insert(out.end(), argv.begin() + 1, argv.end());
  return out;
}

}  // namespace plumb::supervise
