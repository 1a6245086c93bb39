#include "cli/exporter_command.h"

#include <CLI/CLI.hpp>
#include <signal.h>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "cli/stop_signal.h"
#include "common/error.h"
#include "exporter/exporter.h"
#include "exporter/http_server.h"

namespace plumb::cli {
namespace {

std::string names_text(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

}  // namespace

void setup_exporter(CLI::App& app, ExporterOptions& o) {
  app.add_option("--listen", o.listen,
                 "HOST:PORT to serve /metrics and /healthz on: 127.0.0.1:9464, [::1]:9464, "
                 ":9464 for every address, port 0 for any free port")
      ->capture_default_str();
  exporter::add_source_options(app, o.sources);
  app.add_flag("--once", o.once,
               "Collect every source once, print /metrics on standard output and exit (exit 1 "
               "when a source failed)");
  app.footer("Exit status: 0 stopped by SIGINT/SIGTERM (or --once with every source ok); 1 --once "
             "and a source failed; 2 bad usage (a malformed or busy --listen address, a bad "
             "source option). See docs/exporter-http.md.");
}

int run_exporter(const ExporterOptions& o) {
  // The sources' lines (the device tool picked, malformed events lines) carry the same prefix
  // as the exporter's own.
  exporter::SourceOptions sources = o.sources;
  sources.log = [](const std::string& line) {
    fmt::print(stderr, "plumb exporter: {}\n", line);
    std::fflush(stderr);
  };
  exporter::Exporter ex(exporter::make_sources(sources), {PLUMB_VERSION, {}, {}});
  if (o.once) {
    const bool ok = ex.collect_once();
    std::cout << ex.metrics() << std::flush;
    return ok ? 0 : 1;
  }
  exporter::HttpServerOptions server_options;
  server_options.listen = o.listen;
  // Bound before any source starts: a busy or malformed address fails at once, with exit 2.
  exporter::HttpServer server(server_options,
                              [&ex](const exporter::HttpRequest& r) { return ex.handle(r); });
  const std::atomic<bool>& stop = stop_on_signals();
  ex.start();
  fmt::print(stderr, "plumb exporter: serving http://{}/metrics; sources: {}\n",
             server.bound_address(), names_text(ex.source_names()));
  std::fflush(stderr);
  server.serve(stop);
  ex.stop();
  return 0;
}

}  // namespace plumb::cli
