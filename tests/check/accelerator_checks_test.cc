// The accelerator checks against stand-in nvidia-smi, npu-smi and dmesg (tests/fixtures/check) and
// a sysfs tree of their own: each verdict, its value, expected value and "check first" line.
#include <gtest/gtest.h>

#include <chrono>

#include "accelerator_test_support.h"
#include "check/accel_probe.h"

namespace plumb::check {
namespace {

using plumb::test::error_message;
using test::kEightGpus;
using test::run_check;
using test::StandIns;

void expect_result(const CheckResult& r, Status status, const std::string& value,
                   const std::string& expected, const std::string& detail) {
  EXPECT_EQ(status_name(r.status), status_name(status));
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.value, value);
  EXPECT_EQ(r.expected, expected);
  EXPECT_EQ(r.detail, detail);
}

void expect_skipped(const CheckResult& r, const std::string& why) {
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.detail, why);
}

// ---- accel.count

TEST(AccelCount, PassesWhenToolBusAndCheckFileAgree) {
  StandIns s("accel_count_ok");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/index_bus_8x.csv");
  expect_result(run_check("accel.count", s.context(), "{expected: 8, vendor: nvidia}"), Status::kOk,
                "8 NVIDIA GPUs (nvidia-smi; 8 on the PCI bus)", "8 NVIDIA GPUs", "");
}

TEST(AccelCount, OneDeviceMissingNamesTheBusIdTheToolLacks) {
  StandIns s("accel_count_missing");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/index_bus_7x_3a_missing.csv");
  const std::string detail =
      "the driver does not see 0000:3a:00.0 though the PCI bus does: look for its driver messages "
      "(dmesg | grep -i 0000:3a:00), then reseat it or reboot the node";
  expect_result(run_check("accel.count", s.context(), "{expected: 8}"), Status::kCritical,
                "7 of 8 NVIDIA GPUs: nvidia-smi lacks 0000:3a:00.0 (the PCI bus shows 8)",
                "8 NVIDIA GPUs", detail);
  // Without a check file the PCI bus is the expectation.
  expect_result(run_check("accel.count", s.context()), Status::kCritical,
                "7 of 8 NVIDIA GPUs: nvidia-smi lacks 0000:3a:00.0 (the PCI bus shows 8)",
                "8 NVIDIA GPUs", detail);
}

TEST(AccelCount, ADeviceGoneFromTheBusToo) {
  StandIns s("accel_count_gone");
  s.nvidia_gpus({"18", "2a", "5d", "9a", "ab", "ba", "db"});
  s.cat("nvidia-smi", "nvidia-smi/index_bus_7x_3a_missing.csv");
  expect_result(
      run_check("accel.count", s.context(), "{expected: 8}"), Status::kCritical,
      "7 of 8 NVIDIA GPUs (the PCI bus shows 7)", "8 NVIDIA GPUs",
      "a device is gone from the PCI bus: check the BMC's event log, the riser and the power "
      "cabling (lspci -nn | grep -i -e nvidia -e huawei)");
}

TEST(AccelCount, AGpuTheDriverLostIsNamed) {
  StandIns s("accel_count_lost");
  s.nvidia_gpus(kEightGpus);
  s.tool("nvidia-smi",
         "echo 'Unable to determine the device handle for GPU0000:3A:00.0: Unknown "
         "Error'\n/bin/cat '" +
             StandIns::fixture("nvidia-smi/index_bus_7x_3a_missing.csv") + "'\nexit 15");
  const CheckResult r = run_check("accel.count", s.context(), "{expected: 8}");
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value,
            "7 of 8 NVIDIA GPUs: nvidia-smi lacks 0000:3a:00.0; nvidia-smi cannot reach "
            "0000:3a:00.0 (the PCI bus shows 8)");
}

TEST(AccelCount, MoreThanTheCheckFileExpectsIsAWarning) {
  StandIns s("accel_count_more");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/index_bus_8x.csv");
  expect_result(run_check("accel.count", s.context(), "{expected: 4}"), Status::kWarning,
                "8 NVIDIA GPUs (nvidia-smi; 8 on the PCI bus)", "4 NVIDIA GPUs",
                "more than the check file expects: is it this SKU's? (plumb check genconf on a "
                "known-good node "
                "of the SKU writes one)");
}

TEST(AccelCount, CountsAscendChipsFromNpuSmi) {
  StandIns s("accel_count_ascend");
  s.ascend_npus({"c1", "01"});
  s.cat("npu-smi", "npu-smi/info_8x910B2_23.0.7_excerpt.txt");
  expect_result(run_check("accel.count", s.context(), "{expected: 2, vendor: ascend}"), Status::kOk,
                "2 Ascend NPUs (npu-smi; 2 on the PCI bus)", "2 Ascend NPUs", "");
}

TEST(AccelCount, AnotherVendorThanTheCheckFileSays) {
  StandIns s("accel_count_vendor");
  s.nvidia_gpus(kEightGpus);
  expect_result(run_check("accel.count", s.context(), "{expected: 8, vendor: ascend}"),
                Status::kCritical, "8 NVIDIA GPUs on the PCI bus", "8 Ascend NPUs",
                "this node is not of the check file's SKU: run it with that SKU's check file");
  EXPECT_EQ(error_message([&] { run_check("accel.count", s.context(), "{vendor: amd}"); }),
            "checks.accel.count.vendor: must be nvidia or ascend, got 'amd'");
}

TEST(AccelCount, NoAcceleratorIsSkippedUnlessTheCheckFileExpectsSome) {
  StandIns s("accel_count_none");
  s.pci("0000:ab:00.0", "0x15b3", "0x020000");  // a ConnectX NIC only
  expect_skipped(run_check("accel.count", s.context()),
                 "no NVIDIA or Ascend accelerator on this node");
  expect_result(run_check("accel.count", s.context(), "{expected: 8, vendor: nvidia}"),
                Status::kCritical, "0 of 8 NVIDIA GPUs: none on the PCI bus", "8 NVIDIA GPUs",
                "check that the devices are seated and powered and that the driver is loaded "
                "(lspci -nn | grep "
                "-i -e nvidia -e huawei; lsmod | grep -e nvidia -e drv_pcie)");
  expect_result(run_check("accel.count", s.context(), "{expected: 0}"), Status::kOk,
                "no accelerator", "0", "");
}

TEST(AccelCount, AMissingToolIsUnknownNamingWhatTheBusShows) {
  StandIns s("accel_count_no_tool");
  s.nvidia_gpus(kEightGpus);
  const CheckResult r = run_check("accel.count", s.context(), "{expected: 8}");
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail, "nvidia-smi: not found on PATH; the PCI bus shows 8 NVIDIA GPUs");
}

TEST(AccelCount, AHungNvidiaSmiIsUnknownWithinTheTimeout) {
  StandIns s("accel_count_hung");
  s.nvidia_gpus(kEightGpus);
  s.tool("nvidia-smi", "exec /bin/sleep 30");
  const auto start = std::chrono::steady_clock::now();
  const CheckResult r = run_check("accel.count", s.context(0.5), "{expected: 8}");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail,
            "nvidia-smi: no answer within 0.5 s (stopped); the PCI bus shows 8 NVIDIA GPUs");
  EXPECT_LT(seconds, 10.0);  // far below the stand-in's 30 s: it was stopped
}

TEST(AccelCount, ABusNotVisibleLeavesItToTheTools) {
  StandIns s("accel_count_no_bus");
  s.hide_bus();
  expect_skipped(run_check("accel.count", s.context()),
                 "no NVIDIA or Ascend accelerator on this node");
  s.cat("nvidia-smi", "nvidia-smi/index_bus_8x.csv");
  expect_result(run_check("accel.count", s.context(), "{expected: 8}"), Status::kOk,
                "8 NVIDIA GPUs (nvidia-smi)", "8 NVIDIA GPUs", "");
}

TEST(AccelCount, GenconfRecordsTheCountAndVendor) {
  StandIns s("accel_count_genconf");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/index_bus_8x.csv");
  const YAML::Node node = find_check("accel.count")->observe(s.context());
  EXPECT_EQ(node["expected"].as<int>(), 8);
  EXPECT_EQ(node["vendor"].as<std::string>(), "nvidia");
  // A device the driver lost on the genconf node does not lower the expectation.
  s.cat("nvidia-smi", "nvidia-smi/index_bus_7x_3a_missing.csv");
  EXPECT_EQ(find_check("accel.count")->observe(s.context())["expected"].as<int>(), 8);
  StandIns none("accel_count_genconf_none");
  EXPECT_TRUE(find_check("accel.count")->observe(none.context()).IsNull());
}

// ---- accel.health

TEST(AccelHealth, EveryGpuAnswering) {
  StandIns s("accel_health_ok");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/health_8xH100_ok.csv");
  expect_result(run_check("accel.health", s.context()), Status::kOk,
                "8 NVIDIA GPUs answer nvidia-smi", "every GPU answers nvidia-smi", "");
}

TEST(AccelHealth, AGpuThatRequiresAReset) {
  StandIns s("accel_health_reset");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/health_gpu2_requires_reset.csv");
  expect_result(run_check("accel.health", s.context()), Status::kCritical,
                "GPU 2 (0000:3a:00.0): [GPU requires reset]", "every GPU answers nvidia-smi",
                "reset the GPU when it is idle (nvidia-smi -r -i 2) or reboot the node; its Xid in "
                "the kernel log "
                "says why (accel.xid)");
}

TEST(AccelHealth, AGpuTheDriverLost) {
  StandIns s("accel_health_lost");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/health_gpu_lost.txt");
  expect_result(run_check("accel.health", s.context()), Status::kCritical,
                "GPU 0000:3a:00.0: nvidia-smi cannot reach it (Unknown Error)",
                "every GPU answers nvidia-smi",
                "the driver lost the GPU: reboot the node and look for its Xid 79 in the kernel "
                "log (accel.xid); "
                "reseat it if it repeats");
}

TEST(AccelHealth, OutputItCannotReadIsUnknown) {
  StandIns s("accel_health_garbage");
  s.nvidia_gpus(kEightGpus);
  s.tool("nvidia-smi", "echo 'NVIDIA-SMI has failed'");
  const CheckResult r = run_check("accel.health", s.context());
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail,
            "nvidia-smi: line 1: expected a header of field names ('index, pci.bus_id, ...': "
            "--format=csv without noheader), got 'NVIDIA-SMI has failed'");
  s.tool("nvidia-smi",
         "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
         "driver.\"\nexit 9");
  EXPECT_EQ(run_check("accel.health", s.context()).detail,
            "nvidia-smi: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with "
            "the NVIDIA driver.");
}

TEST(AccelHealth, AnAscendChipInAlarmWithItsErrorCode) {
  StandIns s("accel_health_ascend");
  s.ascend_npus({"c1", "01"});
  s.tool("npu-smi", "case \"$*\" in\n*health*) /bin/cat '" +
                        StandIns::fixture("npu-smi/health_chip_alarm.txt") + "' ;;\n*) /bin/cat '" +
                        StandIns::fixture("npu-smi/info_8x910B2_npu1_alarm.txt") + "' ;;\nesac");
  expect_result(run_check("accel.health", s.context()), Status::kCritical,
                "NPU 1 (0000:01:00.0): Alarm, error code 80E18402", "every NPU's health OK",
                "look the error code up in the board's fault-code list (npu-smi info -t health -i "
                "1 -c 0); reset "
                "the NPU when it is idle (npu-smi set -t reset -i 1 -c 0) if it persists");
  s.cat("npu-smi", "npu-smi/info_A3_25.2.0_excerpt.txt");
  expect_result(run_check("accel.health", s.context()), Status::kOk,
                "2 Ascend NPUs report OK (npu-smi info)", "every NPU's health OK", "");
}

// ---- accel.ecc

const std::string kEccExpected =
    "uncorrectable ECC errors since driver load below 1 (warning) and 1 (critical); no pending or "
    "failed row "
    "remap or page retirement; at most 10 retired pages and 512 rows remapped for uncorrectable "
    "errors";

TEST(AccelEcc, CleanGpus) {
  StandIns s("accel_ecc_ok");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/ecc_8xH100_ok.csv");
  expect_result(
      run_check("accel.ecc", s.context()), Status::kOk,
      "no uncorrectable ECC error since the driver loaded on 8 NVIDIA GPUs, no pending remap (0 "
      "uncorrectable in the GPUs' lifetime)",
      kEccExpected, "");
}

TEST(AccelEcc, ARowRemapPending) {
  StandIns s("accel_ecc_pending");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/ecc_gpu0_remap_pending.csv");
  expect_result(run_check("accel.ecc", s.context()), Status::kCritical,
                "GPU 0 (0000:18:00.0): row remap pending; GPU 0 (0000:18:00.0): 2 uncorrectable "
                "ECC errors since "
                "the driver loaded",
                kEccExpected,
                "reset the GPU when it is idle (nvidia-smi -r -i 0) so the pending retirement or "
                "remap takes effect");
}

TEST(AccelEcc, ARowRemapFailure) {
  StandIns s("accel_ecc_failure");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/ecc_gpu6_remap_failure.csv");
  expect_result(run_check("accel.ecc", s.context()), Status::kCritical,
                "GPU 6 (0000:ba:00.0): row remapping failed", kEccExpected,
                "drain the node and replace the GPU (its memory has no spare rows or pages left)");
}

TEST(AccelEcc, RetiredPagesAgainstGcmsLimitAndAnOverride) {
  StandIns s("accel_ecc_pages");
  s.nvidia_gpus({"3b", "86"});
  s.cat("nvidia-smi", "nvidia-smi/ecc_2xV100_retired_pages.csv");
  const CheckResult r = run_check("accel.ecc", s.context());
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value, "GPU 0 (0000:3b:00.0): 12 retired pages");
  EXPECT_EQ(run_check("accel.ecc", s.context(), "{retired_pages: 20}").status, Status::kOk);
}

TEST(AccelEcc, UncorrectableErrorThresholds) {
  StandIns s("accel_ecc_thresholds");
  s.nvidia_gpus({"18"});
  s.tool("nvidia-smi",
         "echo 'index, pci.bus_id, ecc.errors.uncorrected.volatile.total, remapped_rows.pending'\n"
         "echo '0, 00000000:18:00.0, 2, No'");
  const CheckResult r = run_check("accel.ecc", s.context(), "{warning: 1, critical: 5}");
  EXPECT_EQ(r.status, Status::kWarning);
  EXPECT_EQ(r.value, "GPU 0 (0000:18:00.0): 2 uncorrectable ECC errors since the driver loaded");
  EXPECT_EQ(
      r.detail,
      "drain the node; reset the GPU (nvidia-smi -r -i 0) and run dcgmi diag -r 3 before it takes "
      "jobs again");
  EXPECT_EQ(run_check("accel.ecc", s.context(), "{warning: 3, critical: 5}").status, Status::kOk);
  EXPECT_EQ(run_check("accel.ecc", s.context(), "{critical: 2}").status, Status::kCritical);
  s.tool("nvidia-smi",
         "echo 'index, pci.bus_id, remapped_rows.pending'\necho '0, 00000000:18:00.0, Maybe'");
  EXPECT_EQ(
      run_check("accel.ecc", s.context()).detail,
      "nvidia-smi: GPU 0 (0000:18:00.0): remapped_rows.pending is 'Maybe', expected Yes or No");
}

TEST(AccelEcc, AscendDoubleBitErrors) {
  StandIns s("accel_ecc_ascend");
  s.ascend_npus({"c1", "01"});
  s.tool("npu-smi",
         "case \"$*\" in\n*'-i 1'*) /bin/cat '" +
             StandIns::fixture("npu-smi/ecc_chip_double_bit.txt") + "' ;;\n*ecc*) /bin/cat '" +
             StandIns::fixture("npu-smi/ecc_chip_ok.txt") + "' ;;\n*) /bin/cat '" +
             StandIns::fixture("npu-smi/info_8x910B2_23.0.7_excerpt.txt") + "' ;;\nesac");
  expect_result(run_check("accel.ecc", s.context()), Status::kCritical,
                "NPU 1 (0000:01:00.0): 3 double-bit (uncorrectable) ECC errors",
                "double-bit ECC errors below 1 (warning) and 1 (critical)",
                "drain the node and look at the NPU's health and fault codes (npu-smi info -t "
                "health -i 1 -c 0)");
}

// ---- accel.clocks

TEST(AccelClocks, IdleGpusPass) {
  StandIns s("accel_clocks_ok");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/clocks_8xH100_idle.csv");
  expect_result(run_check("accel.clocks", s.context()), Status::kOk,
                "no thermal or power slowdown on 8 NVIDIA GPUs",
                "no HW slowdown, HW thermal, HW power brake or SW thermal slowdown", "");
}

TEST(AccelClocks, AHardwareThermalSlowdown) {
  StandIns s("accel_clocks_hw");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/clocks_gpu4_hw_thermal.csv");
  expect_result(
      run_check("accel.clocks", s.context()), Status::kCritical,
      "GPU 4 (0000:9a:00.0): SM 1005 of 1980 MHz, HW thermal slowdown, HW slowdown",
      "no HW slowdown, HW thermal, HW power brake or SW thermal slowdown",
      "the GPU is too hot: check the node's fans, airflow and inlet temperature (nvidia-smi -q -d "
      "TEMPERATURE)");
}

TEST(AccelClocks, OlderDriversNameTheReasonsThrottle) {
  StandIns s("accel_clocks_old");
  s.nvidia_gpus(kEightGpus);
  s.tool("nvidia-smi",
         "case \"$*\" in\n*clocks_event_reasons*) /bin/cat '" +
             StandIns::fixture("nvidia-smi/invalid_field.txt") + "'; exit 2 ;;\n*) /bin/cat '" +
             StandIns::fixture("nvidia-smi/clocks_throttle_gpu1_sw_thermal.csv") + "' ;;\nesac");
  expect_result(run_check("accel.clocks", s.context()), Status::kWarning,
                "GPU 1 (0000:2a:00.0): SM 1410 of 1980 MHz, SW thermal slowdown",
                "no HW slowdown, HW thermal, HW power brake or SW thermal slowdown",
                "the GPU is near its slowdown temperature: check the node's fans, airflow and "
                "inlet temperature");
}

TEST(AccelClocks, AscendIsSkippedWithItsReason) {
  StandIns s("accel_clocks_ascend");
  s.ascend_npus({"c1"});
  expect_skipped(run_check("accel.clocks", s.context()),
                 "Ascend: npu-smi reports no throttle reasons, so clocks are not judged "
                 "(accel.temperature and "
                 "accel.health are)");
}

// ---- accel.temperature

TEST(AccelTemperature, BelowTheSeedsThresholds) {
  StandIns s("accel_temp_ok");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/temperature_8xH100.csv");
  expect_result(run_check("accel.temperature", s.context()), Status::kOk,
                "hottest GPU 7 (0000:db:00.0) at 47 C", "below 85 C (warning) and 95 C (critical)",
                "");
}

TEST(AccelTemperature, WarningAndCriticalDevicesNamed) {
  StandIns s("accel_temp_hot");
  s.nvidia_gpus(kEightGpus);
  s.cat("nvidia-smi", "nvidia-smi/temperature_gpu2_88_gpu6_96.csv");
  expect_result(run_check("accel.temperature", s.context()), Status::kCritical,
                "GPU 2 (0000:3a:00.0): 88 C; GPU 6 (0000:ba:00.0): 96 C",
                "below 85 C (warning) and 95 C (critical)",
                "the device is at its slowdown temperature: drain the node and check its fans and "
                "airflow (ipmitool "
                "sdr type Temperature)");
  const CheckResult raised =
      run_check("accel.temperature", s.context(), "{warning: 90, critical: 100}");
  expect_result(
      raised, Status::kWarning, "GPU 6 (0000:ba:00.0): 96 C",
      "below 90 C (warning) and 100 C (critical)",
      "check the node's fans, airflow and inlet temperature (ipmitool sdr type Temperature)");
}

TEST(AccelTemperature, BadThresholdsNameTheKey) {
  StandIns s("accel_temp_bad");
  s.nvidia_gpus(kEightGpus);
  EXPECT_EQ(error_message([&] {
              run_check("accel.temperature", s.context(), "{warning: 97, critical: 95}");
            }),
            "checks.accel.temperature: warning (97) must not be above critical (95)");
  EXPECT_EQ(
      error_message([&] { run_check("accel.temperature", s.context(), "{critical: hot}"); }),
      "site.yaml:1: checks.accel.temperature.critical: must be a number from 0 to 200, got 'hot'");
}

TEST(AccelTemperature, AscendFromTheNpuSmiTable) {
  StandIns s("accel_temp_ascend");
  s.ascend_npus({"c1", "01"});
  s.cat("npu-smi", "npu-smi/info_8x910B2_npu0_91C.txt");
  expect_result(
      run_check("accel.temperature", s.context()), Status::kWarning, "NPU 0 (0000:c1:00.0): 91 C",
      "below 85 C (warning) and 95 C (critical)",
      "check the node's fans, airflow and inlet temperature (ipmitool sdr type Temperature)");
}

// ---- accel.xid

TEST(AccelXid, ApplicationXidsAreWarnings) {
  StandIns s("accel_xid_app");
  s.nvidia_gpus({"cb"});
  s.cat("dmesg", "dmesg/xid_13_109_gpud_readme.log");
  expect_result(run_check("accel.xid", s.context()), Status::kWarning,
                "Xid 13 on 0000:cb:00.0: graphics engine exception (3 times); Xid 109 on "
                "0000:cb:00.0: context "
                "switch timeout",
                "no Xid that needs a reset, a reboot or a replacement",
                "usually the job's own illegal instruction or address; if it repeats under other "
                "jobs, run dcgmi "
                "diag -r 2 on this GPU");
  expect_result(run_check("accel.xid", s.context(), "{ignore: [13, 109]}"), Status::kOk,
                "no Xid of warning or critical severity since boot (dmesg)",
                "no Xid that needs a reset, a reboot or a replacement", "");
}

TEST(AccelXid, FallenOffTheBusIsCritical) {
  StandIns s("accel_xid_79");
  s.nvidia_gpus({"10", "44", "b3"});
  s.cat("dmesg", "dmesg/xid_63_79_fallen_off.log");
  const CheckResult r = run_check("accel.xid", s.context());
  EXPECT_EQ(r.status, Status::kCritical);
  EXPECT_EQ(r.value,
            "Xid 63 on 0000:10:1c.0: ECC page retirement or row remapping recorded; Xid 79 on "
            "0000:b3:00.0: GPU has fallen off the bus; Xid 79 on 0000:44:00.0: GPU has fallen off "
            "the bus");
  EXPECT_EQ(
      r.detail,
      "reset the GPU so the remapping takes effect (nvidia-smi -r -i N), then run plumb check node "
      "--only accel.ecc");
}

TEST(AccelXid, ACleanLogFromTheJournalWhenDmesgIsRefused) {
  StandIns s("accel_xid_journal");
  s.nvidia_gpus({"ab"});
  s.tool("dmesg", "echo 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1");
  s.cat("journalctl", "dmesg/no_xid_mlx5.log");
  expect_result(run_check("accel.xid", s.context()), Status::kOk,
                "no Xid of warning or critical severity since boot (journalctl -k -b)",
                "no Xid that needs a reset, a reboot or a replacement", "");
  std::filesystem::remove(s.context().root + "/../bin/journalctl");
  const CheckResult r = run_check("accel.xid", s.context());
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(
      r.detail,
      "the kernel log could not be read: dmesg: exit status 1; journalctl: not found on PATH");
}

TEST(AccelXid, AHungDmesgIsUnknownWithoutWaitingForTheJournalToo) {
  StandIns s("accel_xid_hung");
  s.nvidia_gpus({"ab"});
  s.tool("dmesg", "exec /bin/sleep 30");
  s.tool("journalctl", "exec /bin/sleep 30");
  const CheckResult r = run_check("accel.xid", s.context(0.5));
  EXPECT_EQ(r.status, Status::kUnknown);
  EXPECT_EQ(r.detail, "the kernel log could not be read: dmesg: no answer within 0.5 s (stopped)");
}

TEST(AccelXid, IgnoreMustListXidNumbers) {
  StandIns s("accel_xid_bad_ignore");
  s.nvidia_gpus({"ab"});
  EXPECT_EQ(error_message([&] { run_check("accel.xid", s.context(), "{ignore: [13, abc]}"); }),
            "checks.accel.xid.ignore: every item must be an Xid number, got 'abc'");
}

TEST(AccelXid, AscendIsSkippedWithItsReason) {
  StandIns s("accel_xid_ascend");
  s.ascend_npus({"c1"});
  expect_skipped(run_check("accel.xid", s.context()),
                 "Ascend: the NPU's fault codes are judged by accel.health (npu-smi info -t "
                 "health); the driver's "
                 "kernel-log lines have no public format plumb could test against");
}

// ---- every check

TEST(AccelChecks, EveryCheckIsSkippedOnANodeWithoutAccelerators) {
  StandIns s("accel_none");
  s.pci("0000:ab:00.0", "0x15b3", "0x020000");
  for (const char* name : {"accel.count", "accel.health", "accel.ecc", "accel.xid", "accel.clocks",
                           "accel.temperature"}) {
    expect_skipped(run_check(name, s.context()), "no NVIDIA or Ascend accelerator on this node");
  }
}

TEST(AccelChecks, EveryNvidiaCheckIsUnknownWhenNvidiaSmiHangs) {
  StandIns s("accel_hung");
  s.nvidia_gpus(kEightGpus);
  s.tool("nvidia-smi", "exec /bin/sleep 30");
  for (const char* name : {"accel.health", "accel.ecc", "accel.clocks", "accel.temperature"}) {
    const CheckResult r = run_check(name, s.context(0.5));
    EXPECT_EQ(r.status, Status::kUnknown) << name;
    EXPECT_EQ(r.detail, "nvidia-smi: no answer within 0.5 s (stopped)") << name;
  }
}

}  // namespace
}  // namespace plumb::check
