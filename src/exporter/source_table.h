// The table of `plumb exporter`'s metric sources: which ones run, built from the command's
// options (device fallbacks nvidia-smi / npu-smi, the training events file, the comm probe).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exporter/source.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::exporter {

struct SourceOptions {
  std::string host;                      // the host label; "" = this machine's host name
  std::string device_source = "auto";    // auto | nvidia-smi | npu-smi | none
  std::string nvidia_smi = "nvidia-smi"; // command or path
  std::string npu_smi = "npu-smi";
  double device_interval_seconds = 5;
  double tool_timeout_seconds = 5;
  std::string events;                    // plumb.train-events/1 JSONL to tail; "" = none
  double events_interval_seconds = 1;
  int median_window = 100;               // steps in the rolling medians
  double probe_interval_seconds = 0;     // 0 = no active probe
  std::string probe_command;             // what runs the probe sweep (a plumb comm command line)
  double probe_timeout_seconds = 120;    // a probe sweep not done by then is stopped
  // Where the sources' log lines go (the device source picked, malformed events lines); unset:
  // standard error.
  std::function<void(const std::string&)> log;
};

// Declares the sources' options on the exporter's subcommand.
void add_source_options(CLI::App& app, SourceOptions& options);

// The sources the options ask for. Throws plumb::Error naming the option for a bad value (an
// unknown --device-source, a tool given by path that does not exist, ...).
std::vector<std::unique_ptr<Source>> make_sources(const SourceOptions& options);

}  // namespace plumb::exporter
