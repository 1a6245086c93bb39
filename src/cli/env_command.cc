#include "cli/env_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "common/error.h"
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
  std::ofstream file;
  if (!o.json.empty() && o.json != "-") {
    file.open(o.json);
    if (!file) throw Error(fmt::format("--json {}: cannot write: {}", o.json, std::strerror(errno)));
  }
  sysinfo::ProbeContext context;
  context.python_timeout_s = o.python_timeout;
  const sysinfo::EnvRecord record = sysinfo::collect_env(context);
  report::EnvConsoleReporter().report(record, o.json == "-" ? std::cerr : std::cout);
  if (o.json == "-") report::EnvJsonReporter().report(record, std::cout);
  if (file.is_open()) {
    report::EnvJsonReporter().report(record, file);
    file.close();
    if (file.fail()) throw Error(fmt::format("{}: writing failed (disk full?)", o.json));
    fmt::print(stderr, "plumb: wrote {}\n", o.json);
  }
  return 0;
}

}  // namespace plumb::cli
