#include "check/clock_sync.h"

#include <fmt/format.h>

#include <vector>

#include "common/strings.h"

namespace plumb::check {
namespace {

// "System time     : 0.000006523 seconds slow of NTP time" -> "0.000006523 seconds slow of NTP time"
std::optional<std::string> field(std::string_view text, std::string_view name) {
  for (const std::string& line : split_list(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim_blanks(std::string_view(line).substr(0, colon)) == name) {
      return std::string(trim_blanks(std::string_view(line).substr(colon + 1)));
    }
  }
  return std::nullopt;
}

// "0.000006523 seconds slow of NTP time": slow is behind the reference, a negative offset.
std::optional<double> chrony_offset(const std::string& text) {
  try {
    size_t used = 0;
    const double seconds = std::stod(text, &used);
    const std::string rest = text.substr(used);
    if (rest.find("slow") != std::string::npos) return -seconds;
    if (rest.find("fast") != std::string::npos) return seconds;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::optional<ClockState> parse_chronyc_tracking(std::string_view text) {
  const std::optional<std::string> leap = field(text, "Leap status");
  const std::optional<std::string> system = field(text, "System time");
  if (!leap && !system) return std::nullopt;
  ClockState s;
  s.source = "chronyc tracking";
  s.advice = "chronyc tracking; chronyc sources -v";
  // chrony's leap status is "Normal", "Insert second", "Delete second" or "Not synchronised".
  s.synchronised = leap && *leap != "Not synchronised";
  if (system) s.offset_s = chrony_offset(*system);
  if (system && !s.offset_s) s.problem = fmt::format("chronyc tracking: unreadable System time '{}'", *system);
  return s;
}

std::optional<ClockState> parse_timedatectl_show(std::string_view text) {
  for (const std::string& line : split_list(text, '\n')) {
    if (line.rfind("NTPSynchronized=", 0) != 0) continue;
    ClockState s;
    s.source = "timedatectl";
    s.advice = "timedatectl timesync-status";
    s.synchronised = line == "NTPSynchronized=yes";
    return s;
  }
  return std::nullopt;
}

ClockState read_clock_state(const NodeContext& ctx) {
  std::vector<std::string> tried;
  const ToolRun chrony = ctx.tool({"chronyc", "-n", "tracking"});
  if (chrony.ok()) {
    if (std::optional<ClockState> s = parse_chronyc_tracking(chrony.output)) return *s;
    return {"chronyc tracking", false, std::nullopt, "chronyc tracking: unreadable output", ""};
  }
  if (chrony.state == ToolRun::State::kTimedOut) {
    return {"chronyc tracking", false, std::nullopt, chrony.problem(), ""};
  }
  tried.push_back(chrony.problem());
  const ToolRun timedatectl = ctx.tool({"timedatectl", "show"});
  if (timedatectl.ok()) {
    if (std::optional<ClockState> s = parse_timedatectl_show(timedatectl.output)) return *s;
  }
  if (timedatectl.state == ToolRun::State::kTimedOut) {
    return {"timedatectl", false, std::nullopt, timedatectl.problem(), ""};
  }
  tried.push_back(timedatectl.ok() ? "timedatectl: no NTPSynchronized property"
                                   : timedatectl.problem());
  ClockState none;
  none.problem = "no time daemon answered: " + join(tried, "; ");
  return none;
}

}  // namespace plumb::check
