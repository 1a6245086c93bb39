#include "check/npu_health.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "check/gpu_query.h"
#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

std::optional<int> whole_of(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// The documented key ("Double-bit Error Count"), compared without case, blanks and hyphens.
constexpr std::string_view kDoubleBitKey = "doublebiterrorcount";

bool ends_with_folded(std::string_view key, std::string_view folded_suffix) {
  std::string folded;
  for (const char c : key) {
    if (c == ' ' || c == '-' || c == '_') continue;
    folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return folded.size() >= folded_suffix.size() &&
         folded.compare(folded.size() - folded_suffix.size(), folded_suffix.size(),
                        folded_suffix) == 0;
}

NpuChipHealth& current(NpuHealth& out) {
  if (out.chips.empty()) out.chips.emplace_back();
  return out.chips.back();
}

void apply(NpuHealth& out, std::string_view key, std::string_view value) {
  if (key == "NPU ID") {
    out.npu_id = whole_of(value);
    if (!out.npu_id) {
      throw Error(fmt::format("npu-smi: 'NPU ID' is '{}', expected a whole number",
                              terminal_safe(shorten(value))));
    }
  } else if (key == "Chip ID") {
    out.chips.emplace_back();
    out.chips.back().chip_id = whole_of(value);
  } else if (key == "Health" || key == "Health Status") {
    // A second Health line starts the next part (the MCU after the chips).
    if (out.chips.empty() || !out.chips.back().health.empty()) out.chips.emplace_back();
    out.chips.back().health = std::string(value);
  } else if (key == "Chip Name") {
    current(out).name = std::string(value);
  } else if (key == "Error Code") {
    current(out).error_code = std::string(value);
  } else if (key == "Error Information") {
    current(out).error_info = std::string(value);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_npu_key_values(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  int number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim_blanks(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || trim_blanks(line.substr(0, colon)).empty()) {
      throw Error(fmt::format("npu-smi: line {}: expected 'key : value', got '{}'", number,
                              shown_text(line)));
    }
    pairs.emplace_back(trim_blanks(line.substr(0, colon)), trim_blanks(line.substr(colon + 1)));
  }
  return pairs;
}

NpuHealth parse_npu_health(std::string_view text) {
  NpuHealth out;
  for (const auto& [key, value] : parse_npu_key_values(text)) apply(out, key, value);
  bool any_health = false;
  for (const NpuChipHealth& chip : out.chips) any_health = any_health || !chip.health.empty();
  if (!any_health)
    throw Error("npu-smi: no 'Health' line (expected npu-smi info -t health output)");
  return out;
}

std::optional<double> npu_double_bit_errors(std::string_view text) {
  std::optional<double> sum;
  for (const auto& [key, value] : parse_npu_key_values(text)) {
    if (!ends_with_folded(key, kDoubleBitKey)) continue;
    const std::optional<int> count = whole_of(value);
    if (!count) {
      throw Error(fmt::format("npu-smi: '{}' is '{}', expected a count",
                              terminal_safe(shorten(key)), terminal_safe(shorten(value))));
    }
    sum = sum.value_or(0) + *count;
  }
  return sum;
}

Status npu_health_status(std::string_view health) {
  if (health == "OK") return Status::kOk;
  if (health == "Alarm" || health == "Critical" || health == "UNKNOWN") return Status::kCritical;
  return Status::kWarning;
}

bool no_error_code(std::string_view code) { return code.empty() || code == "NA" || code == "0"; }

}  // namespace plumb::check
