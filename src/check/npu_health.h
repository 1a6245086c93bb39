// `npu-smi info -t health -i N` (every chip of NPU N) and `npu-smi info -t health -i N -c C` (one
// chip, with its error codes), as Huawei's npu-smi reference prints them: "Key : value" lines.
// The per-NPU form lists each chip's "Chip ID" and "Health", then the board's MCU ("Health", "Chip
// Name : MCU"); the per-chip form gives "Health Status", "Error Code" and "Error Information".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check/status.h"

namespace plumb::check {

struct NpuChipHealth {
  std::optional<int> chip_id;  // "Chip ID", when given
  std::string name;            // "Chip Name" ("MCU"), when given
  std::string health;          // "OK", "Warning", "Alarm", "Critical", "UNKNOWN"
  std::string error_code;      // "Error Code": "NA" or the codes
  std::string error_info;      // "Error Information"
};

struct NpuHealth {
  std::optional<int> npu_id;         // "NPU ID", when given
  std::vector<NpuChipHealth> chips;  // in output order
};

// The "key : value" lines of any `npu-smi info -t TYPE -i N [-c C]` output, in order, blanks
// trimmed. Throws plumb::Error naming the line for a line that is not "key : value".
std::vector<std::pair<std::string, std::string>> parse_npu_key_values(std::string_view text);

// `npu-smi info -t ecc -i N -c C`: the sum of its "...Double-bit Error Count" values (uncorrectable
// errors), or nothing when it has none. Throws plumb::Error for such a value that is not a count.
std::optional<double> npu_double_bit_errors(std::string_view text);

// Throws plumb::Error naming the line for a line that is not "key : value" and for a text without
// any Health line.
NpuHealth parse_npu_health(std::string_view text);

// What a chip's health means for plumb check: OK ok, Warning warning, Alarm and Critical critical
// ("major" and "urgent" alarms), UNKNOWN critical (the device is absent or did not start); any
// other word is a warning naming it.
Status npu_health_status(std::string_view health);

// True for an "Error Code" that names no error ("NA", "", "0").
bool no_error_code(std::string_view code);

}  // namespace plumb::check
