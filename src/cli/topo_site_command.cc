// plumb topo import / plumb topo export: the topology a site already maintains (Slurm's
// topology.conf, Kubernetes node labels, Volcano HyperNodes) into plumb's cluster map, and back.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>

#include "cli/topo_command.h"
#include "comm/cluster_map.h"
#include "comm/site_map.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/number_option.h"
#include "common/output_file.h"
#include "common/strings.h"
#include "topo/site_topology.h"

namespace plumb::cli {
namespace {

// Ranks one node runs, as the cluster map's own ranks_per_node.
constexpr NumberRange kRanksPerNode{1, 1'000'000, false, true};

std::string format_names(std::string_view direction) {
  std::vector<std::string> names;
  for (const topo::SiteFormat& f : topo::site_formats()) {
    if (direction == "import" ? bool(f.read) : bool(f.write)) names.push_back(f.name);
  }
  return join(names, ", ");
}

// Options that only one format reads are refused with the others, not silently ignored.
void check_import_options(const TopoImportOptions& o) {
  if (o.from != "k8s-nodes" && (!o.rack_label.empty() || !o.tier_labels.empty())) {
    throw Error(fmt::format("{}: only --from k8s-nodes reads node labels",
                            o.rack_label.empty() ? "--tier-label" : "--rack-label"));
  }
  if (!o.nodes.empty() && o.from != "hypernodes") {
    throw Error("--nodes: only --from hypernodes reads a node list (for regexMatch and labelMatch members)");
  }
}

topo::ImportOptions import_options(const TopoImportOptions& o) {
  topo::ImportOptions io{o.rack_label, o.tier_labels, std::nullopt};
  if (!o.nodes.empty()) {
    const topo::SiteFormat& k8s = topo::find_site_format("k8s-nodes", "--nodes", "import");
    io.nodes = topo::parse_k8s_nodes(read_whole_file(o.nodes, "a node list", k8s.max_bytes), o.nodes);
  }
  return io;
}

std::vector<std::string> map_comments(const TopoImportOptions& o, const topo::SiteTopology& site) {
  std::vector<std::string> comments = {
      fmt::format("plumb cluster map from plumb topo import --from {} {}", o.from, o.file),
      site_summary(site)};
  for (const std::string& line : topo::device_summary(site)) comments.push_back("devices: " + line);
  for (const std::string& note : site.notes) comments.push_back(note);
  return comments;
}

void commit(OutputFile& out, const std::string& text) {
  out.stream() << text;
  out.commit();
  if (!out.is_stdout()) fmt::print(std::cerr, "plumb: wrote {}\n", out.path());
}

}  // namespace

void setup_topo_site(CLI::App& app, TopoOptions& o) {
  app.require_subcommand(0, 1);
  CLI::App* imp = app.add_subcommand(
      "import", "A site's topology (Slurm topology.conf, Kubernetes nodes, Volcano HyperNodes) into "
                "a cluster map for plumb comm/baseline --cluster");
  imp->add_option("--from", o.import.from, "Source format: " + format_names("import"))->required();
  imp->add_option("FILE", o.import.file, "The file to read")->required();
  imp->add_option("-o,--output", o.import.output, "Write the cluster map here (- for standard output)")
      ->capture_default_str();
  imp->add_option("--rack-label", o.import.rack_label,
                  "k8s-nodes: the node label naming a node's leaf switch (its rack); default: the "
                  "first of Volcano's, Topograph's and the zone labels that nodes carry");
  imp->add_option("--tier-label", o.import.tier_labels,
                  "k8s-nodes: a node label naming a switch above the racks (repeatable, lowest "
                  "tier first)")
      ->allow_extra_args(false);
  imp->add_option("--nodes", o.import.nodes,
                  "hypernodes: kubectl get nodes -o json, to resolve regexMatch and labelMatch members");
  imp->add_option("--ranks-per-node", o.import.ranks_per_node,
                  "Write ranks_per_node into the map (ranks placed in order, whatever their host)")
      ->transform(number_option(kRanksPerNode));
  imp->callback([&o] { o.mode = TopoMode::kImport; });

  CLI::App* exp = app.add_subcommand("export", "A cluster map as a site's topology file");
  exp->add_option("--to", o.export_.to, "Target format: " + format_names("export"))->required();
  exp->add_option("--cluster", o.export_.cluster, "The cluster map to export")->required();
  exp->add_option("-o,--output", o.export_.output, "Write the result here (- for standard output)")
      ->capture_default_str();
  exp->callback([&o] { o.mode = TopoMode::kExport; });
}

int run_topo_import(const TopoImportOptions& o) {
  const topo::SiteFormat& format = topo::find_site_format(o.from, "--from", "import");
  check_import_options(o);
  const std::vector<NamedPath> outputs = {{"-o", o.output}};
  const std::vector<NamedPath> inputs = {{"FILE", o.file}, {"--nodes", o.nodes}};
  refuse_overlapping_paths(outputs, inputs);
  OutputFile out("-o", o.output);  // before any work: a path that cannot be written fails at once
  const topo::ImportOptions io = import_options(o);
  const topo::SiteTopology site =
      format.read(read_whole_file(o.file, "a topology file", format.max_bytes), o.file, io);
  comm::ClusterMap map = comm::cluster_map_from_site(site);
  map.ranks_per_node = o.ranks_per_node;
  const std::string text = comm::format_cluster_map(map, map_comments(o, site));
  comm::parse_cluster_map(text, o.output);  // what plumb comm --cluster will accept, or a bug here
  fmt::print(std::cerr, "plumb: {}: {}\n", o.file, site_summary(site));
  for (const std::string& note : site.notes) fmt::print(std::cerr, "plumb: note: {}\n", note);
  commit(out, text);
  return 0;
}

int run_topo_export(const TopoExportOptions& o) {
  const topo::SiteFormat& format = topo::find_site_format(o.to, "--to", "export");
  const std::vector<NamedPath> outputs = {{"-o", o.output}};
  const std::vector<NamedPath> inputs = {{"--cluster", o.cluster}};
  refuse_overlapping_paths(outputs, inputs);
  OutputFile out("-o", o.output);
  const topo::SiteTopology site = comm::site_from_cluster_map(comm::load_cluster_map(o.cluster));
  commit(out, format.write(site));
  return 0;
}

}  // namespace plumb::cli
