// Stand-in tools and a node tree for the accelerator checks' tests: small shell scripts
// ("#!/bin/sh\n/bin/cat FIXTURE") in a temporary bin/ that is the whole PATH while the test runs,
// and a root with /sys/bus/pci/devices/<bus>/{vendor,class} as sysfs has them.
#pragma once

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/node_context.h"
#include "support/subprocess.h"

namespace plumb::check::test {

inline const std::string kCheckFixtures = std::string(PLUMB_TEST_FIXTURES) + "/check";

class StandIns {
 public:
  explicit StandIns(const std::string& name) : dir_(plumb::test::temp_dir(name)) {
    std::filesystem::create_directories(dir_ + "/bin");
    std::filesystem::create_directories(dir_ + "/root/sys/bus/pci/devices");
    const char* path = std::getenv("PATH");
    saved_path_ = path ? path : "";
    ::setenv("PATH", (dir_ + "/bin").c_str(), 1);
  }
  ~StandIns() { ::setenv("PATH", saved_path_.c_str(), 1); }
  StandIns(const StandIns&) = delete;
  StandIns& operator=(const StandIns&) = delete;

  // bin/NAME running `body` under /bin/sh.
  void tool(const std::string& name, const std::string& body) const {
    const std::string path = dir_ + "/bin/" + name;
    plumb::test::write_file(path, "#!/bin/sh\n" + body + "\n");
    ::chmod(path.c_str(), 0755);
  }
  // bin/NAME printing a fixture of tests/fixtures/check ("nvidia-smi/index_bus_8x.csv").
  void cat(const std::string& name, const std::string& fixture) const {
    tool(name, "/bin/cat '" + kCheckFixtures + "/" + fixture + "'");
  }
  static std::string fixture(const std::string& relative) {
    return kCheckFixtures + "/" + relative;
  }

  // A PCI function under the root: vendor "0x10de", class "0x030200".
  void pci(const std::string& bus, const std::string& vendor, const std::string& klass) const {
    const std::string device = dir_ + "/root/sys/bus/pci/devices/" + bus;
    std::filesystem::create_directories(device);
    plumb::test::write_file(device + "/vendor", vendor + "\n");
    plumb::test::write_file(device + "/class", klass + "\n");
  }
  // NVIDIA 3D controllers (class 0x030200) at 0000:BB:00.0 for each BB.
  void nvidia_gpus(const std::vector<std::string>& buses) const {
    for (const std::string& bus : buses) pci("0000:" + bus + ":00.0", "0x10de", "0x030200");
  }
  // Ascend NPUs (processing accelerators, class 0x120000).
  void ascend_npus(const std::vector<std::string>& buses) const {
    for (const std::string& bus : buses) pci("0000:" + bus + ":00.0", "0x19e5", "0x120000");
  }
  // No PCI devices at all under the root (a container's view): drop the folder.
  void hide_bus() const { std::filesystem::remove_all(dir_ + "/root/sys"); }

  NodeContext context(double timeout_s = 5) const {
    NodeContext context;
    context.root = dir_ + "/root";
    context.tool_timeout_s = timeout_s;
    return context;
  }

 private:
  std::string dir_;
  std::string saved_path_;
};

// The PCI buses of the 8-GPU node in the fixtures (index_bus_8x.csv and the others).
inline const std::vector<std::string> kEightGpus = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};

inline CheckSection section(const std::string& name, const std::string& yaml = "{}") {
  return CheckSection(YAML::Load(yaml), "site.yaml", "checks." + name);
}

// Runs the table's check `name`.
inline CheckResult run_check(const std::string& name, const NodeContext& context,
                             const std::string& yaml = "{}") {
  const CheckSpec* spec = find_check(name);
  if (spec == nullptr) return unknown("no such check: " + name);
  return spec->run(context, section(name, yaml));
}

}  // namespace plumb::check::test
