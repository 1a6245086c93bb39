#include "cli/env_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include "common/error.h"
#include "common/output_file.h"
#include "report/env_reporter.h"
#include "sysinfo/system_info.h"

namespace plumb::cli {

void setup_env(CLI::App& app, EnvOptions& o) {
  app.add_option("--json", o.json, "Write plumb.env/1 JSON here (- for standard output)");
  app.add_option("--python-timeout", o.python_timeout,
                 "Seconds to wait for python3 when asking for framework versions")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

int run_env(const EnvOptions& o) {
  std::optional<OutputFile> file;
  if (!o.json.empty()) file.emplace("--json", o.json);  // a bad path fails before the probes
  sysinfo::ProbeContext context;
  context.python_timeout_s = o.python_timeout;
  const sysinfo::EnvRecord record = sysinfo::collect_env(context);
  report::EnvConsoleReporter().report(record, o.json == "-" ? std::cerr : std::cout);
  if (!file) return 0;
  report::EnvJsonReporter().report(record, file->stream());
  file->commit();
  if (!file->is_stdout()) fmt::print(std::cerr, "plumb: wrote {}\n", o.json);
  return 0;
}

}  // namespace plumb::cli
