// The host checks of plumb check node (docs/check.md, "Host"): irqbalance, huge pages, free space
// where checkpoints go, clock synchronisation. The NIC-interrupt and accelerator-NUMA checks of the
// host category live with the network checks (network_checks.cc), beside the PCI data they need.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/clock_sync.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

// ---- host.irqbalance --------------------------------------------------------------------------

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The pids whose /proc/<pid>/comm is `name`.
std::vector<std::string> pids_named(const NodeContext& ctx, std::string_view name) {
  std::vector<std::string> pids;
  for (const std::string& entry : ctx.list("/proc")) {
    if (!all_digits(entry)) continue;
    if (ctx.read_value("/proc/" + entry + "/comm") == std::string(name)) pids.push_back(entry);
  }
  return pids;
}

// The Ascend bring-up team's finding (issue 30): irqbalance moved the NIC interrupts the site had
// pinned; NVIDIA's and Huawei's tuning guides say to stop it and pin them. A warning, not
// critical: the node computes correctly, only slower; `allowed: true` accepts a site's
// irqbalance configured with banned CPUs.
CheckResult irqbalance(const NodeContext& ctx, const CheckSection& section) {
  if (ctx.list("/proc").empty()) return unknown(fmt::format("{} cannot be listed", ctx.path("/proc")));
  const std::vector<std::string> pids = pids_named(ctx, "irqbalance");
  const bool allowed = section.flag("allowed").value_or(false);
  const std::string expected = allowed ? "allowed" : "not running";
  if (pids.empty()) return ok("not running", expected);
  const std::string value = fmt::format("running (pid {})", join(pids, ", "));
  if (allowed) return ok(value, expected);
  return warning(value, expected,
                 "irqbalance moves pinned NIC interrupts: systemctl disable --now irqbalance, then "
                 "pin them (see host.nic_irq)");
}

// ---- host.hugepages ---------------------------------------------------------------------------

// "HugePages_Total:    1024" -> {"HugePages_Total", 1024}; sizes in kB stay in kB.
std::map<std::string, double> meminfo(const std::string& text) {
  std::map<std::string, double> fields;
  for (const std::string& line : split_list(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      fields[line.substr(0, colon)] = std::stod(line.substr(colon + 1));
    } catch (const std::exception&) {
    }
  }
  return fields;
}

// "always [madvise] never" -> "madvise".
std::optional<std::string> bracketed(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const size_t open = text->find('['), close = text->find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  return text->substr(open + 1, close - open - 1);
}

constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";
constexpr NumberRange kPagesRange{0, 1e9};

std::string pages_text(double total, double size_kb) {
  return fmt::format("{:.0f} pages of {:.0f} kB", total, size_kb);
}

CheckResult hugepages(const NodeContext& ctx, const CheckSection& section) {
  const std::optional<std::string> text = ctx.read("/proc/meminfo");
  if (!text) return unknown(fmt::format("{} cannot be read", ctx.path("/proc/meminfo")));
  const std::map<std::string, double> m = meminfo(*text);
  const double total = m.count("HugePages_Total") ? m.at("HugePages_Total") : 0;
  const double size = m.count("Hugepagesize") ? m.at("Hugepagesize") : 0;
  const std::optional<std::string> thp = bracketed(ctx.read(kThpPath));
  const std::string value = pages_text(total, size) + ", THP " + thp.value_or("(unknown)");
  const std::optional<double> want_pages = section.number("pages", kPagesRange);
  const std::optional<std::string> want_thp = section.text("thp");
  std::string expected;
  if (want_pages) expected = fmt::format("{:.0f} pages", *want_pages);
  if (want_thp) expected += (expected.empty() ? "" : ", ") + ("THP " + *want_thp);
  if (want_pages && total < *want_pages) {
    return warning(value, expected,
                   "fewer huge pages than the site reserves: check vm.nr_hugepages in "
                   "/etc/sysctl.d and the kernel command line (hugepages=)");
  }
  if (want_thp && thp != want_thp) {
    return warning(value, expected, fmt::format("set it: echo {} > {}", *want_thp, kThpPath));
  }
  return ok(value, expected);
}

YAML::Node observe_hugepages(const NodeContext& ctx) {
  YAML::Node section(YAML::NodeType::Map);
  if (const std::optional<std::string> text = ctx.read("/proc/meminfo")) {
    const std::map<std::string, double> m = meminfo(*text);
    if (m.count("HugePages_Total")) section["pages"] = m.at("HugePages_Total");
  }
  if (const std::optional<std::string> thp = bracketed(ctx.read(kThpPath))) section["thp"] = *thp;
  return section;
}

// ---- host.disk --------------------------------------------------------------------------------

// A checkpoint of a 405B model with its optimizer state is ~5 TB across the job; a node's share
// must fit with room for the next one. NHC's examples warn at a few percent free; we warn at 10%
// and fail at 5% unless the site gives `min_free_gb` (critical below it).
constexpr double kWarnFreeFraction = 0.10;
constexpr double kCriticalFreeFraction = 0.05;
constexpr double kGB = 1e9;
constexpr NumberRange kFreeGbRange{0, 1e9};
constexpr NumberRange kFractionRange{0, 1};

CheckResult disk(const NodeContext& ctx, const CheckSection& section) {
  if (ctx.checkpoint_dir.empty()) return skipped("no checkpoint directory given (--checkpoint-dir)");
  const std::string where = ctx.path(ctx.checkpoint_dir);
  const std::optional<FreeSpace> space = free_space(where);
  if (!space || space->total_bytes <= 0) return unknown(fmt::format("{}: cannot be read (statvfs)", where));
  const double fraction = space->free_bytes / space->total_bytes;
  const std::string value = fmt::format("{:.1f} GB free of {:.1f} GB ({:.1f}%) in {}",
                                        space->free_bytes / kGB, space->total_bytes / kGB,
                                        100 * fraction, ctx.checkpoint_dir);
  const std::optional<double> min_gb = section.number("min_free_gb", kFreeGbRange);
  const double warn = section.number("warning", kFractionRange).value_or(kWarnFreeFraction);
  const double crit = section.number("critical", kFractionRange).value_or(kCriticalFreeFraction);
  const std::string expected =
      min_gb ? fmt::format(">= {:g} GB free", *min_gb) : fmt::format(">= {:g}% free", 100 * warn);
  const std::string advice = "the next checkpoint may not fit: remove old checkpoints or move them";
  if (min_gb && space->free_bytes < *min_gb * kGB) return critical(value, expected, advice);
  if (fraction < crit) return critical(value, expected, advice);
  if (!min_gb && fraction < warn) return warning(value, expected, advice);
  return ok(value, expected);
}

// ---- host.clock -------------------------------------------------------------------------------

// Traces of all ranks are lined up by their clocks (plumb step); a node off by more than the
// skew being measured makes a straggler out of nothing. chrony's own `makestep 1.0 3` steps the
// clock beyond 1 s; we warn at 10 ms and fail at 1 s, or when the daemon says it is not
// synchronised.
constexpr double kWarnOffsetS = 0.010;
constexpr double kCriticalOffsetS = 1.0;
constexpr NumberRange kOffsetRange{0, 3600};

CheckResult clock(const NodeContext& ctx, const CheckSection& section) {
  const ClockState state = read_clock_state(ctx);
  if (state.source.empty()) {
    return section.flag("required").value_or(false)
               ? critical("no time daemon answered", "synchronised", state.problem)
               : skipped(state.problem);
  }
  if (!state.problem.empty()) return unknown(state.problem);
  const double warn = section.number("warning", kOffsetRange).value_or(kWarnOffsetS);
  const double crit = section.number("critical", kOffsetRange).value_or(kCriticalOffsetS);
  const std::string expected = fmt::format("synchronised, offset < {:g} ms", warn * 1e3);
  std::string value = state.synchronised ? "synchronised" : "not synchronised";
  if (state.offset_s) value += fmt::format(", offset {:.3f} ms", *state.offset_s * 1e3);
  value += " (" + state.source + ")";
  const std::string advice = fmt::format("check the time daemon: {}", state.advice);
  if (!state.synchronised) return critical(value, expected, advice);
  if (state.offset_s && std::fabs(*state.offset_s) >= crit) return critical(value, expected, advice);
  if (state.offset_s && std::fabs(*state.offset_s) >= warn) return warning(value, expected, advice);
  return ok(value, expected);
}

}  // namespace

std::vector<CheckSpec> host_checks() {
  return {
      {"host.irqbalance", "irqbalance is not running (it moves the NIC interrupts a site pins)",
       {"allowed"}, irqbalance, {}},
      {"host.hugepages", "huge pages reserved and transparent huge pages as the site sets them",
       {"pages", "thp"}, hugepages, observe_hugepages},
      {"host.disk", "free space where checkpoints are written (10% warning, 5% critical)",
       {"min_free_gb", "warning", "critical"}, disk, {}},
      {"host.clock", "the clock is synchronised (chrony, ntpd or systemd-timesyncd) within 10 ms",
       {"warning", "critical", "required"}, clock, {}},
  };
}

}  // namespace plumb::check
