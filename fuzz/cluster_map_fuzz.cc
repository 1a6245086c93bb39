// libFuzzer target: any bytes as a cluster map. Parsing, placing 8 ranks and building the layers
// must either succeed or throw plumb::Error -- never crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "comm/cluster_map.h"
#include "comm/placement.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const plumb::comm::ClusterMap map = plumb::comm::parse_cluster_map(text, "fuzz.yaml");
    const std::vector<std::string> hosts = {"node0", "node1", "node2", "node3",
                                            "node0", "node1", "node2", "node3"};
    const plumb::comm::Placement placement = plumb::comm::place_by_map(map, hosts);
    const std::vector<std::string> layers = {"world", "node", "rail", "spine"};
    plumb::comm::make_layers(placement, layers);
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
