// The table of vendor strategies behind the built-in recovery steps (recovery.h): how a vendor
// lists its devices and the processes holding them, resets one device, and which links it checks
// and how. recovery.cc runs the steps the same way for every vendor.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "supervise/recovery.h"
#include "supervise/tool_process.h"

namespace plumb::supervise {

// A device as the recovery steps see it.
struct RecoveryDevice {
  std::string name;                     // in events and down_devices: NVIDIA index, Ascend logical id
  int select_id = 0;                    // what --devices matches: NVIDIA index, Ascend NPU ID
  std::vector<std::string> reset_argv;  // the command that resets it
};

// A process still holding a device after the job was stopped.
struct DeviceHolder {
  long pid = 0;
  std::string name;
};

// One link to check: a tool to run (Ascend) or a sysfs file to read (NVIDIA's RDMA ports).
struct LinkTarget {
  std::string name;                     // in events and down_devices
  std::vector<std::string> argv;
  std::string state_file;
};

struct VendorStrategy;

// Thrown out of a step when its deadline passed or plumb was stopped; `detail` says which.
struct StepInterrupted {
  std::string detail;
  bool stopped = false;
};

// What a vendor strategy may do inside one step: run tools within the step's deadline (throws
// StepInterrupted), list the devices (once per step, --devices applied), read the plan.
class StepContext {
 public:
  StepContext(const RecoveryPlan& plan, const VendorStrategy* vendor,
              std::chrono::steady_clock::time_point deadline, const std::atomic<bool>* stop)
      : plan_(plan), vendor_(vendor), deadline_(deadline), stop_(stop) {}

  ToolResult run(const std::vector<std::string>& argv, const std::string& input = "");
  void sleep(double seconds);  // within the deadline; throws StepInterrupted
  const std::vector<RecoveryDevice>& devices();
  const RecoveryPlan& plan() const { return plan_; }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }
  const std::atomic<bool>* stop() const { return stop_; }
  const std::string& transcript() const { return transcript_; }

 private:
  const RecoveryPlan& plan_;
  const VendorStrategy* vendor_;
  std::chrono::steady_clock::time_point deadline_;
  const std::atomic<bool>* stop_;
  std::string transcript_;  // "$ command\n" + output of every tool run, for the output tail
  std::vector<RecoveryDevice> devices_;
  bool listed_ = false;
};

struct VendorStrategy {
  std::string_view vendor;                  // --vendor name
  std::string_view smi;                     // its management tool; in PATH chooses --vendor auto
  std::vector<std::string_view> link_tools; // also needed in PATH for link-check
  std::string reset_input;                  // written to the reset tool's standard input
  std::vector<RecoveryDevice> (*devices)(StepContext&);
  std::vector<DeviceHolder> (*holders)(StepContext&);
  std::vector<LinkTarget> (*links)(StepContext&);
  bool (*link_up)(StepContext&, const LinkTarget&);
};

const std::vector<VendorStrategy>& vendor_strategies();

// The strategy named `vendor` ("nvidia", "ascend"); nullptr when there is none.
const VendorStrategy* find_vendor(std::string_view vendor);

}  // namespace plumb::supervise
