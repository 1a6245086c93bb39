// The model catalog in data/models/: every file loads, and the parameters its shapes imply match
// the count its source publishes.
#include <gtest/gtest.h>

#include <filesystem>

#include "plan/model.h"

namespace plumb::plan {
namespace {

// Published counts are rounded (Megatron's Table 1 to one decimal: 1.7B computes to 1.65B) and
// leave small parts out (biases, position embeddings). They count the main model:
// main_parameter_count, without DeepSeek-V3's multi-token prediction module.
constexpr double kTolerance = 0.035;

TEST(ModelCatalog, EveryModelLoadsAndMatchesItsPublishedCount) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUMB_DATA_DIR "/models")) {
    if (entry.path().extension() != ".yaml") continue;
    const ModelSpec m = load_model(entry.path().string());
    ASSERT_GT(m.params_b, 0) << entry.path() << " has no params_b";
    const double computed = static_cast<double>(main_parameter_count(m)) / 1e9;
    EXPECT_NEAR(computed / m.params_b, 1.0, kTolerance)
        << entry.path() << ": " << computed << "B computed, " << m.params_b << "B published";
    ++models;
  }
  EXPECT_GE(models, 18);  // GPT-3, ten Megatron sizes, three Llama 3, Mixtral, DeepSeek-V3, Qwen3 ×2
}

}  // namespace
}  // namespace plumb::plan

#include "common/error.h"
#include "plan/hardware.h"
#include "support/subprocess.h"

namespace plumb::plan {
namespace {

TEST(HardwareCatalog, EveryDeviceLoads) {
  int devices = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUMB_DATA_DIR "/hardware")) {
    if (entry.path().extension() != ".yaml") continue;
    const HardwareSpec h = load_hardware(entry.path().string());
    EXPECT_FALSE(h.peak_tflops.empty()) << entry.path();
    EXPECT_GT(h.hbm_gb, 0) << entry.path();
    ++devices;
  }
  EXPECT_GE(devices, 10);  // A100, H100, H200, B200, MI300X, MI355X, 910B, 910C, 950DT, TPU v4
}

// H100 SXM as its datasheet gives it: 989.4 dense BF16 TFLOP/s, 80 GB at 3.35 TB/s, NVLink 4's
// 900 GB/s both ways = 450 GB/s per direction.
TEST(HardwareCatalog, H100Values) {
  const HardwareSpec h = load_hardware(PLUMB_DATA_DIR "/hardware/h100-sxm.yaml");
  EXPECT_DOUBLE_EQ(h.peak_tflops.at("bf16"), 989.4);
  EXPECT_DOUBLE_EQ(h.hbm_gb, 80);
  EXPECT_DOUBLE_EQ(h.hbm_tbps, 3.35);
  EXPECT_EQ(h.devices_per_node, 8);
  EXPECT_DOUBLE_EQ(*h.scaleup_gbps_per_device, 450);
  // An announced part: what no source gives is absent, not zero.
  const HardwareSpec a = load_hardware(PLUMB_DATA_DIR "/hardware/ascend-950dt.yaml");
  EXPECT_FALSE(a.devices_per_node.has_value());
  EXPECT_FALSE(a.price_usd.has_value());
  EXPECT_EQ(a.peak_tflops.count("bf16"), 0u);
}

TEST(HardwareFile, EveryProblemAtOnce) {
  const std::string path = test::temp_dir("hardware-bad") + "/bad.yaml";
  test::write_file(path, "name: x\npeak_tflops: {bf16: 100, fp6: 3}\nhbm_gb: -1\nefficiency: 1.5\n");
  try {
    load_hardware(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: unknown key 'fp6' in peak_tflops (did you mean 'fp16'?); expected one "
                     "of bf16, fp16, fp8, fp4\n" +
              path + ":3: 'hbm_gb' must be a number from 0.001 to 1e+06, got '-1'\n" +
              path + ": missing key 'hbm_tbps'\n" +
              path + ":4: 'efficiency' must be a number from 0.01 to 1, got '1.5'");
  }
}

// Issue 10: duplicate and unknown keys, a directory, non-finite and out-of-range numbers.
TEST(HardwareFile, DuplicateUnknownKeysAndAbsurdNumbers) {
  const std::string path = test::temp_dir("hardware-strict") + "/hw.yaml";
  test::write_file(path,
                   "name: x\npeak_tflops: {bf16: 100, bf16: 200}\nhbm_gb: 80\nhbm_tbps: .inf\n"
                   "hbm_gb: 40\ntdpw: 700\nscaleout_gbps_per_device: 1e300\n");
  try {
    load_hardware(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":5: duplicate key 'hbm_gb' (first at line 3)\n" +
              path + ":6: unknown key 'tdpw' (did you mean 'tdp_w'?); expected one of name, "
                     "peak_tflops, hbm_gb, hbm_tbps, devices_per_node, scaleup_gbps_per_device, "
                     "scaleout_gbps_per_device, tdp_w, price_usd, rent_usd_per_hour, efficiency, price_date, rent_date\n" +
              path + ":2: duplicate key 'bf16' (first at line 2)\n" +
              path + ":4: 'hbm_tbps' must be a number from 0.001 to 10000, got '.inf'\n" +
              path + ":7: 'scaleout_gbps_per_device' must be a number from 0.01 to 1e+06, got "
                     "'1e300'");
  }
  const std::string dir = test::temp_dir("hardware-dir");
  try {
    load_hardware(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": is a directory, not a hardware file");
  }
}

}  // namespace
}  // namespace plumb::plan
