// libFuzzer target: any bytes as a Slurm topology.conf. Reading must either succeed or throw
// plumb::Error; a topology that reads must become a cluster map plumb reads back, and when it can
// be written as topology.conf again, that text must read back to the same switches.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/cluster_map.h"
#include "comm/site_map.h"
#include "common/error.h"
#include "topo/site_topology.h"

namespace {

using Shape = std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>>;

Shape shape(const plumb::topo::SiteTopology& site) {
  Shape out;
  for (const auto& s : site.switches) out[s.name] = {s.nodes, s.switches};
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  plumb::topo::SiteTopology site;
  try {
    site = plumb::topo::read_slurm_topology(text, "fuzz.conf");
  } catch (const plumb::Error&) {
    return 0;  // a clear message for the user: fine
  }
  const plumb::comm::ClusterMap map = plumb::comm::cluster_map_from_site(site);
  plumb::comm::parse_cluster_map(plumb::comm::format_cluster_map(map), "fuzz.yaml");  // must not throw
  std::string written;
  try {
    written = plumb::topo::write_slurm_topology(site);
  } catch (const plumb::Error&) {
    return 0;  // a name topology.conf cannot hold
  }
  if (shape(plumb::topo::read_slurm_topology(written, "again.conf")) != shape(site)) __builtin_trap();
  return 0;
}
