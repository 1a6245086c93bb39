// plumb topo: where every rank sits -- packages, NUMA nodes, PCI accelerators and NICs, CPU
// binding -- with a warning and its fix for each rank bound badly.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// plumb topo import: a site's topology file into a cluster map (docs/topo.md, "Import and export").
struct TopoImportOptions {
  std::string from;                      // a format of topo::site_formats()
  std::string file;
  std::string output = "-";              // the cluster map; "-": standard output
  std::string rack_label;                // k8s-nodes
  std::vector<std::string> tier_labels;  // k8s-nodes, lowest tier first
  std::string nodes;                     // hypernodes: kubectl get nodes -o json
  int ranks_per_node = 0;                // written into the map when set
};

// plumb topo export: a cluster map into a site's format.
struct TopoExportOptions {
  std::string to;
  std::string cluster;
  std::string output = "-";
};

enum class TopoMode { kProbe, kImport, kExport };

struct TopoOptions {
  std::string json;  // file, or "-" for standard output
  std::string xml;   // an hwloc XML export to read instead of this machine
  bool quiet = false;
  TopoMode mode = TopoMode::kProbe;
  TopoImportOptions import;
  TopoExportOptions export_;
};

void setup_topo(CLI::App& app, TopoOptions& options);
int run_topo(const TopoOptions& options);

// The import and export subcommands (topo_site_command.cc).
void setup_topo_site(CLI::App& app, TopoOptions& options);
int run_topo_import(const TopoImportOptions& options);
int run_topo_export(const TopoExportOptions& options);

}  // namespace plumb::cli
