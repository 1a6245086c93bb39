// A site's network topology as its own tools describe it -- Slurm's topology.conf, Kubernetes node
// labels, Volcano HyperNodes -- in one plain form: switches, each holding either nodes (a leaf: a
// rack in plumb's cluster map) or other switches (an upper tier: a spine, a core). Each source is
// one small file behind `SiteFormat`, registered in `site_formats()`; the cluster map conversion
// lives in comm/site_map (comm sits above topo).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::topo {

struct SiteSwitch {
  std::string name;
  std::vector<std::string> nodes;     // a leaf: its nodes, in order
  std::vector<std::string> switches;  // an upper tier: the switches below it
  int line = 0;                       // where the source defines it (0: no line, e.g. JSON)
  std::string label;                  // how messages name it: "SwitchName=s1", "HyperNode 's1'"
};

// Accelerators of one node by resource name ("nvidia.com/gpu" -> 8), where the source says.
using NodeDevices = std::map<std::string, long long>;

struct SiteTopology {
  std::string source;                // file name, for messages
  std::vector<SiteSwitch> switches;  // in source order
  std::map<std::string, NodeDevices> devices;  // by node name; empty when the source has none
  std::vector<std::string> notes;    // what the reader chose, for the user ("racks from label ...")

  bool is_leaf(const SiteSwitch& s) const { return !s.nodes.empty(); }
  size_t node_count() const;
};

// One problem, at a 1-based line of the source (0: none).
struct SiteProblem {
  int line = 0;
  std::string message;
};

// Everything wrong with the switch graph, in source order: a name defined twice, a switch with
// both nodes and switches or neither, a child switch that is not defined, a child listed twice, a
// node under two leaves, switches that form a cycle. Messages start with the switch's label.
std::vector<SiteProblem> site_problems(const SiteTopology& site);

// site_problems as one plumb::Error, each line "<source>:<line>: <message>".
void check_site(const SiteTopology& site);

// Each switch's tier: 1 for a leaf, one above its highest child otherwise (Volcano's numbering:
// tier 1 is closest to the nodes). Only for a site that passed check_site.
std::map<std::string, int> site_tiers(const SiteTopology& site);

// Each switch's parents, by name (a fat tree's leaf has one per spine).
std::map<std::string, std::vector<std::string>> site_parents(const SiteTopology& site);

// "512 nodes under 16 leaf switches, 2 switches above them (tiers 1-2)".
std::string site_summary(const SiteTopology& site);

// "nvidia.com/gpu: 8 on 512 nodes" per resource and count, for a note; empty without devices.
std::vector<std::string> device_summary(const SiteTopology& site);

// A Kubernetes node as `kubectl get nodes -o json` lists it: what topology import reads.
struct K8sNode {
  std::string name;                           // metadata.name
  std::map<std::string, std::string> labels;  // metadata.labels
  NodeDevices devices;                        // status.capacity, accelerator resources only
  std::string where;                          // "items[3]", for messages
};

// What an import may need besides the file itself.
struct ImportOptions {
  std::string rack_label;               // k8s-nodes: the leaf label (empty: the defaults)
  std::vector<std::string> tier_labels;  // k8s-nodes: labels of the tiers above, lowest first
  std::optional<std::vector<K8sNode>> nodes;  // hypernodes: the node list, for regex/label members
};

// One source format: reads a file's text into a site, writes a site as the format's text, or both.
struct SiteFormat {
  std::string name;     // as --from/--to spell it: "slurm-topology"
  std::string summary;  // for --help and docs
  size_t max_bytes;     // the largest input file read
  std::function<SiteTopology(std::string_view text, const std::string& source,
                             const ImportOptions& options)>
      read;  // empty: export only
  std::function<std::string(const SiteTopology& site)> write;  // empty: import only
};

std::span<const SiteFormat> site_formats();

// The format named `name`, or plumb::Error "<option>: unknown format 'x' (did you mean ...)".
// `direction` is "import" or "export": a format that cannot go that way is refused too.
const SiteFormat& find_site_format(std::string_view name, std::string_view option,
                                   std::string_view direction);

// The formats, one file each.
SiteTopology read_slurm_topology(std::string_view text, const std::string& source);
std::string write_slurm_topology(const SiteTopology& site);
std::vector<K8sNode> parse_k8s_nodes(std::string_view text, const std::string& source);
SiteTopology site_from_k8s_nodes(const std::vector<K8sNode>& nodes, const std::string& source,
                                 const ImportOptions& options);
SiteTopology read_hypernodes(std::string_view text, const std::string& source,
                             const ImportOptions& options);
std::string write_hypernodes(const SiteTopology& site);

}  // namespace plumb::topo
