// plumb exporter: serves Prometheus metrics of this host (/metrics, text format 0.0.4) and
// /healthz, from the sources the options ask for (device fallbacks, training events, comm probe;
// exporter/source_table.h). Each source collects on its own thread; a scrape is answered from the
// last good values, never waiting for a slow source (exporter/exporter.h).
#pragma once

#include <string>

#include "exporter/source_table.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";
  exporter::SourceOptions sources;
  bool once = false;  // collect every source once, print /metrics on stdout, exit
};

void setup_exporter(CLI::App& app, ExporterOptions& options);
int run_exporter(const ExporterOptions& options);

}  // namespace plumb::cli
