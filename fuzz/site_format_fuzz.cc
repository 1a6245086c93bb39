// libFuzzer target, one per site format that reads JSON or YAML (PLUMB_FUZZ_SITE_FORMAT:
// k8s-nodes, hypernodes): any bytes as the format's file. Reading must either succeed or throw
// plumb::Error -- never crash, hang or throw anything else, however deep the document nests. The
// HyperNodes' regexMatch members are matched against a node list whose last name is 64 KiB long.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "topo/site_topology.h"

namespace {

plumb::topo::ImportOptions options() {
  plumb::topo::ImportOptions o;
  o.nodes = std::vector<plumb::topo::K8sNode>{};
  for (std::string name : {"gpu001", "gpu002", "npu-a3-017"}) {
    o.nodes->push_back({name, {{"rack", "r1"}}, {}, "items"});
  }
  constexpr size_t kLongName = 64 << 10;
  o.nodes->push_back({std::string(kLongName, 'a'), {}, {}, "items"});
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const plumb::topo::ImportOptions kOptions = options();
  static const plumb::topo::SiteFormat& kFormat =
      plumb::topo::find_site_format(PLUMB_FUZZ_SITE_FORMAT, "fuzz", "import");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)kFormat.read(text, "fuzz", kOptions);
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  return 0;
}
