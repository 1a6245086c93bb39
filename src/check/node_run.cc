#include "check/node_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "common/environment.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

using Clock = std::chrono::steady_clock;

// What a check's file reads may add to its tool's timeout before the pass gives up on it.
constexpr double kDeadlineMarginS = 2.0;

// The category of a check name: "host" for "host.irqbalance".
std::string category_of(std::string_view name) { return std::string(name.substr(0, name.find('.'))); }

bool named(const std::vector<std::string>& names, const CheckSpec& spec) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    return n == spec.name || n == category_of(spec.name);
  });
}

bool selected(const CheckSpec& spec, const CheckFile& file, const NodeRunOptions& options) {
  if (!options.only.empty() && !named(options.only, spec)) return false;
  return !named(options.skip, spec) && file.enabled(spec);
}

// One check's run, shared between its thread and the pass that may stop waiting for it (a
// detached thread outlives a pass that gave up on it: it holds this by shared_ptr).
struct Slot {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  CheckResult result;
  std::string config_problem;
};

void run_one(const std::shared_ptr<Slot>& slot, const CheckSpec& spec, const NodeContext& context,
             const CheckSection& section) {
  CheckResult result;
  std::string problem;
  const Clock::time_point start = Clock::now();
  try {
    result = spec.run(context, section);
  } catch (const Error& e) {
    problem = e.what();
    result = unknown("the check file's section could not be read");
  } catch (const std::exception& e) {
    result = unknown(fmt::format("the check failed: {}", e.what()));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::lock_guard<std::mutex> lock(slot->mutex);
  slot->result = std::move(result);
  slot->config_problem = std::move(problem);
  slot->done = true;
  slot->done_cv.notify_all();
}

CheckResult wait_for(Slot& slot, Clock::time_point deadline, double deadline_s) {
  std::unique_lock<std::mutex> lock(slot.mutex);
  if (!slot.done_cv.wait_until(lock, deadline, [&] { return slot.done; })) {
    CheckResult late = unknown(fmt::format(
        "no answer within {:g} s: a tool or a file it reads hangs (the pass went on without it)",
        deadline_s));
    late.seconds = deadline_s;
    return late;
  }
  return slot.result;
}

std::vector<std::string> selectable_names() {
  std::vector<std::string> names;
  for (const CheckSpec& spec : node_checks()) {
    names.push_back(spec.name);
    const std::string category = category_of(spec.name);
    if (std::find(names.begin(), names.end(), category) == names.end()) names.push_back(category);
  }
  return names;
}

}  // namespace

Status NodeReport::status() const {
  Status s = Status::kOk;
  for (const CheckResult& c : checks) {
    if (!c.skipped) s = worse(s, c.status);
  }
  return s;
}

std::vector<const CheckResult*> NodeReport::worst() const {
  std::vector<const CheckResult*> out;
  const Status s = status();
  if (s == Status::kOk) return out;
  for (const CheckResult& c : checks) {
    if (!c.skipped && c.status == s) out.push_back(&c);
  }
  return out;
}

void check_selection(const std::vector<std::string>& names, std::string_view option) {
  const std::vector<std::string> known = selectable_names();
  for (const std::string& name : names) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    throw Error(fmt::format("{} '{}': no check or category of that name{}; `plumb check list` "
                            "shows them",
                            option, name, did_you_mean(name, known)));
  }
}

NodeReport run_node_checks(const NodeContext& context, const CheckFile& file,
                           const NodeRunOptions& options) {
  return run_node_checks(context, file, options, node_checks());
}

NodeReport run_node_checks(const NodeContext& context, const CheckFile& file,
                           const NodeRunOptions& options, std::span<const CheckSpec> table) {
  NodeReport report;
  report.host = context.host;
  report.created = utc_timestamp();
  report.root = context.root;
  report.check_file = file.source;
  report.sku = file.sku;
  const double deadline_s =
      options.deadline_s > 0 ? options.deadline_s : context.tool_timeout_s + kDeadlineMarginS;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s));
  std::vector<std::pair<const CheckSpec*, std::shared_ptr<Slot>>> running;
  for (const CheckSpec& spec : table) {
    if (!selected(spec, file, options)) continue;
    auto slot = std::make_shared<Slot>();
    // The context and the section are copied: a check given up on may outlive this pass.
    std::thread(run_one, slot, std::cref(spec), context, file.section(spec)).detach();
    running.emplace_back(&spec, std::move(slot));
  }
  std::vector<std::string> problems;
  for (auto& [spec, slot] : running) {
    CheckResult result = wait_for(*slot, deadline, deadline_s);
    result.name = spec->name;
    const std::lock_guard<std::mutex> lock(slot->mutex);
    if (!slot->config_problem.empty()) problems.push_back(slot->config_problem);
    report.checks.push_back(std::move(result));
  }
  if (!problems.empty()) throw Error(join(problems, "\n"));
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

}  // namespace plumb::check
