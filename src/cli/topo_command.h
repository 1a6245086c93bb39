// plumb topo: where every rank sits -- packages, NUMA nodes, PCI accelerators and NICs, CPU
// binding -- with a warning and its fix for each rank bound badly.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace plumb::cli {

struct TopoOptions {
  std::string json;  // file, or "-" for standard output
  std::string xml;   // an hwloc XML export to read instead of this machine
  bool quiet = false;
};

void setup_topo(CLI::App& app, TopoOptions& options);
int run_topo(const TopoOptions& options);

}  // namespace plumb::cli
