#include "exporter/source_table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "common/error.h"
#include "common/number_option.h"
#include "common/strings.h"
#include "exporter/events_source.h"
#include "exporter/npu_smi_source.h"
#include "exporter/nvidia_smi_source.h"
#include "exporter/probe_source.h"

namespace plumb::exporter {
namespace {

namespace fs = std::filesystem;

constexpr double kDay = 86400;
constexpr NumberRange kInterval{0, kDay, true};           // seconds between collects
constexpr NumberRange kTimeout{0, 3600, true};            // a device tool's time limit
constexpr NumberRange kProbeInterval{0, kDay};            // 0 = off
constexpr NumberRange kProbeTimeout{0, kDay, true};
constexpr NumberRange kMedianWindow{1, 100000, false, true};  // steps

const std::array<std::string, 4> kDeviceSources = {"auto", "nvidia-smi", "npu-smi", "none"};

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name) != 0) return "localhost";
  return name;
}

// `command` as the exec call will find it: a path as given, a name through PATH; "" if neither.
std::string resolve(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    return access(command.c_str(), X_OK) == 0 ? command : "";
  }
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split_list(path ? path : "", ':')) {
    const std::string candidate = dir + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
  }
  return "";
}

std::string self_binary() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "plumb" : self.string();
}

}  // namespace

void add_source_options(CLI::App& app, SourceOptions& o) {
  app.add_option("--host", o.host, "The host label of every series (default: this host's name)");
  app.add_option("--device-source", o.device_source,
                 "Device fallback: auto (nvidia-smi if on PATH, else npu-smi, else none), "
                 "nvidia-smi, npu-smi, none")->capture_default_str();
  app.add_option("--nvidia-smi", o.nvidia_smi, "nvidia-smi to run: a name looked up in PATH, or a path")
      ->capture_default_str();
  app.add_option("--npu-smi", o.npu_smi, "npu-smi to run: a name looked up in PATH, or a path")
      ->capture_default_str();
  app.add_option("--device-interval", o.device_interval_seconds, "Seconds between device reads")
      ->capture_default_str()->transform(number_option(kInterval));
  app.add_option("--tool-timeout", o.tool_timeout_seconds,
                 "Seconds a device tool may take before it is stopped")
      ->capture_default_str()->transform(number_option(kTimeout));
  app.add_option("--events", o.events,
                 "plumb.train-events/1 JSONL to tail (docs/train-events.md; may not exist yet)");
  app.add_option("--events-interval", o.events_interval_seconds, "Seconds between reads of --events")
      ->capture_default_str()->transform(number_option(kInterval));
  app.add_option("--median-window", o.median_window, "Steps (or calls) in the rolling medians")
      ->capture_default_str()->transform(number_option(kMedianWindow));
  app.add_option("--probe-interval", o.probe_interval_seconds,
                 "Seconds between active comm probe sweeps; 0 = no probe")
      ->capture_default_str()->transform(number_option(kProbeInterval));
  app.add_option("--probe-command", o.probe_command,
                 "Shell command printing plumb.comm/1 JSON (default: this plumb's comm, "
                 "allreduce,allgather 1M..64M, --json -)");
  app.add_option("--probe-timeout", o.probe_timeout_seconds, "Seconds a probe sweep may take")
      ->capture_default_str()->transform(number_option(kProbeTimeout));
}

namespace {

void log_line(const SourceOptions& o, const std::string& line) {
  if (o.log) return o.log(line);
  std::cerr << line << '\n';
}

// The tool a named device source runs, which must exist: exit 2 naming the option otherwise.
std::string required_tool(const std::string& option, const std::string& command) {
  const std::string found = resolve(command);
  if (!found.empty()) return command;
  if (command.find('/') != std::string::npos) {
    throw Error(fmt::format("{} {}: no such executable file", option, command));
  }
  throw Error(fmt::format("{} {}: not found in PATH (give its path with {})", option, command,
                          option));
}

// "nvidia-smi", "npu-smi" or "none" for --device-source auto, and the log line saying which.
std::string pick_device_source(const SourceOptions& o) {
  if (o.nvidia_smi.find('/') != std::string::npos) required_tool("--nvidia-smi", o.nvidia_smi);
  if (o.npu_smi.find('/') != std::string::npos) required_tool("--npu-smi", o.npu_smi);
  std::string picked = "none";
  std::string found = resolve(o.nvidia_smi);
  if (!found.empty()) {
    picked = "nvidia-smi";
  } else if (!(found = resolve(o.npu_smi)).empty()) {
    picked = "npu-smi";
  }
  log_line(o, picked == "none"
                  ? fmt::format("--device-source auto: neither {} nor {} found: no "
                                "device source", o.nvidia_smi, o.npu_smi)
                  : fmt::format("--device-source auto: {} ({})", picked, found));
  return picked;
}

std::unique_ptr<Source> device_source(const SourceOptions& o, const std::string& host) {
  if (std::find(kDeviceSources.begin(), kDeviceSources.end(), o.device_source) ==
      kDeviceSources.end()) {
    throw Error(unknown_name("--device-source", "device source", o.device_source, kDeviceSources));
  }
  const std::string kind = o.device_source == "auto" ? pick_device_source(o) : o.device_source;
  if (kind == "nvidia-smi") {
    return std::make_unique<NvidiaSmiSource>(DeviceToolOptions{
        host, required_tool("--nvidia-smi", o.nvidia_smi), o.device_interval_seconds,
        o.tool_timeout_seconds, o.log, {}});
  }
  if (kind == "npu-smi") {
    return std::make_unique<NpuSmiSource>(DeviceToolOptions{
        host, required_tool("--npu-smi", o.npu_smi), o.device_interval_seconds,
        o.tool_timeout_seconds, o.log, {}});
  }
  return nullptr;
}

}  // namespace

std::vector<std::unique_ptr<Source>> make_sources(const SourceOptions& o) {
  const std::string host = o.host.empty() ? this_host() : o.host;
  std::vector<std::unique_ptr<Source>> sources;
  if (std::unique_ptr<Source> device = device_source(o, host)) sources.push_back(std::move(device));
  if (!o.events.empty()) {
    EventsSourceOptions events{host, o.events, o.events_interval_seconds, o.median_window,
                               kMaxEventKeys, o.log, {}};
    sources.push_back(std::make_unique<EventsSource>(std::move(events)));
  }
  if (o.probe_interval_seconds > 0) {
    const std::string command =
        o.probe_command.empty() ? default_probe_command(self_binary()) : o.probe_command;
    sources.push_back(std::make_unique<ProbeSource>(
        ProbeSourceOptions{host, command, o.probe_interval_seconds, o.probe_timeout_seconds,
                           o.log, {}}));
  }
  return sources;
}

}  // namespace plumb::exporter
