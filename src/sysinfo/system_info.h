// plumb env: the versions and settings that change results -- OS, kernel, CPU, compiler, glibc,
// MPI, NVIDIA driver, CUDA runtime, NCCL, Ascend driver and CANN, PyTorch and torch_npu -- and the
// environment variables of the collective libraries, allocators and launchers.
//
// Each fact comes from one probe in a table (system_info.cc); a probe that finds nothing records
// that, so two records always hold the same keys and a diff can say "was 2.18.3, now missing".
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::sysinfo {

inline constexpr const char* kEnvSchema = "plumb.env/1";

// Where the probes look. The defaults read this machine; tests point them at a folder that
// mirrors one (root), a stand-in python and stand-in libraries.
struct ProbeContext {
  std::string root = "/";
  std::string python = "python3";
  double python_timeout_s = 10.0;
  std::vector<std::string> cudart_names = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                           "libcudart.so.11.0"};
  std::vector<std::string> nccl_names = {"libnccl.so.2", "libnccl.so"};
  // "NAME=value" entries; empty means this process's environment.
  std::vector<std::string> environment;
};

struct Item {
  std::string name;                  // stable key: "os", "kernel", "nccl", ...
  std::optional<std::string> value;  // nothing when not found
  std::string source;                // the file, library or program it came from (or why not)
};

struct EnvRecord {
  std::string created;
  std::string host;
  std::vector<Item> items;
  std::map<std::string, std::string> env;

  // The item named `name`, or nullptr.
  const Item* find(std::string_view name) const;
};

// The prefixes of the variables recorded (NCCL_, HCCL_, ..., MASTER_).
std::span<const std::string_view> env_prefixes();

// Runs every probe. Never throws for a missing file, library or program: that is a finding.
EnvRecord collect_env(const ProbeContext& context);

}  // namespace plumb::sysinfo
