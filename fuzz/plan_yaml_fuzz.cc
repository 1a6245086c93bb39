// libFuzzer target: any bytes as a `plumb plan` YAML file -- a model, a hardware and a cluster
// file at once. Each reader must either succeed or throw plumb::Error -- never crash, hang or
// throw anything else (a YAML::Exception from a conversion, std::out_of_range, ...).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "plan/cluster.h"
#include "plan/hardware.h"
#include "plan/model.h"

namespace {

// The readers take a path: one file per process, rewritten for every input and removed at exit.
const std::string& input_path() {
  static const std::string path =
      "/tmp/plumb_plan_yaml_fuzz." + std::to_string(getpid()) + ".yaml";
  // Registered after `path` is built, so it runs before `path` is destroyed.
  static const bool removed_at_exit =
      std::atexit([] { std::remove(input_path().c_str()); }) == 0;
  (void)removed_at_exit;
  return path;
}

bool write_input(const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(input_path().c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

plumb::plan::HardwareSpec fuzz_hardware() {
  plumb::plan::HardwareSpec hw;
  hw.name = "fuzz-gpu";
  hw.peak_tflops = {{"bf16", 989.4}, {"fp8", 1978.9}};
  hw.hbm_gb = 80;
  hw.hbm_tbps = 3.35;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 450;
  hw.scaleout_gbps_per_device = 50;
  return hw;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!write_input(data, size)) return 0;
  const std::string& path = input_path();
  try {
    plumb::plan::load_model(path);
  } catch (const plumb::Error&) {
    // a clear message for the user: fine
  }
  try {
    plumb::plan::load_hardware(path);
  } catch (const plumb::Error&) {
  }
  static const plumb::plan::HardwareSpec hw = fuzz_hardware();
  try {
    plumb::plan::load_cluster(path, hw);
  } catch (const plumb::Error&) {
  }
  return 0;
}
