// Parsers for the text files and codes that carry versions. Pure functions, tested against real
// file contents (tests/fixtures/sysinfo).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace plumb::sysinfo {

// /etc/os-release: PRETTY_NAME, unquoted ("Debian GNU/Linux 12 (bookworm)").
std::optional<std::string> os_pretty_name(std::string_view os_release);

// /proc/cpuinfo: the first "model name" (x86) or "Model"/"CPU part" line's value.
std::optional<std::string> cpu_model(std::string_view cpuinfo);
// /proc/cpuinfo: the number of "processor" entries.
int cpu_count(std::string_view cpuinfo);

// /proc/driver/nvidia/version: the driver version after "Kernel Module" ("535.104.05").
std::optional<std::string> nvidia_driver_version(std::string_view text);

// KEY=VALUE files (Ascend driver version.info "Version=23.0.7", CANN
// ascend_toolkit_install.info "version=8.0.RC1"): the value of `key`, compared case-insensitively.
std::optional<std::string> key_value(std::string_view text, std::string_view key);

// ncclGetVersion's code: 22902 -> "2.29.2" (since 2.9: major·10000 + minor·100 + patch; before:
// major·1000 + minor·100 + patch).
std::string nccl_version(int code);

// cudaRuntimeGetVersion's code: 12040 -> "12.4" (major·1000 + minor·10).
std::string cuda_version(int code);

}  // namespace plumb::sysinfo
