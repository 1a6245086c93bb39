// accel.ecc, accel.clocks and accel.temperature (docs/check.md).
#include <fmt/format.h>

#include <array>

#include "check/accel_checks.h"
#include "check/npu_health.h"
#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"
#include "exporter/rules.h"

namespace plumb::check {
namespace {

constexpr NumberRange kErrorCountRange{1, 1e12, false, true};
constexpr NumberRange kTemperatureRange{0, 200};
// Meta GCM's check-nvidia-smi gpu_retired_pages: more than 10 retired pages fails a GPU.
constexpr double kRetiredPagesMax = 10;
// Azure aznhc (customTests/azure_gpu_ecc.nhc): more than 512 rows remapped for uncorrectable
// errors fails a GPU.
constexpr double kUncorrectableRowsMax = 512;
// Any uncorrectable error since the driver loaded fails a GPU: aznhc dies on the first SRAM one,
// GCM on the first pending retirement or remap.
constexpr double kUncorrectableWarning = 1;
constexpr double kUncorrectableCritical = 1;

std::optional<double> count_cell(const GpuTable& table, size_t row, std::string_view field) {
  const std::string_view cell = table.cell(row, field);
  if (cell_state(cell) != CellState::kValue) return std::nullopt;
  const std::optional<double> value = cell_number(cell);
  if (!value) {
    throw Error(fmt::format("nvidia-smi: {}: {} is '{}', expected a number", gpu_name(table, row),
                            field, terminal_safe(shorten(cell))));
  }
  return value;
}

bool yes_cell(const GpuTable& table, size_t row, std::string_view field) {
  const std::string_view cell = table.cell(row, field);
  if (cell_state(cell) != CellState::kValue) return false;
  const std::optional<bool> value = cell_yes(cell);
  if (!value) {
    throw Error(fmt::format("nvidia-smi: {}: {} is '{}', expected Yes or No", gpu_name(table, row),
                            field, terminal_safe(shorten(cell))));
  }
  return *value;
}

struct EccLimits {
  double warning = kUncorrectableWarning;
  double critical = kUncorrectableCritical;
  double retired_pages = kRetiredPagesMax;
  double uncorrectable_rows = kUncorrectableRowsMax;
};

EccLimits ecc_limits(const CheckSection& section) {
  EccLimits limits;
  limits.warning = section.number("warning", kErrorCountRange).value_or(limits.warning);
  limits.critical = section.number("critical", kErrorCountRange).value_or(limits.critical);
  limits.retired_pages =
      section.number("retired_pages", {0, 1e9, false, true}).value_or(limits.retired_pages);
  limits.uncorrectable_rows = section.number("uncorrectable_rows", {0, 1e9, false, true})
                                  .value_or(limits.uncorrectable_rows);
  return limits;
}

std::string ecc_expected(const EccLimits& l) {
  return fmt::format(
      "uncorrectable ECC errors since driver load below {:g} (warning) and {:g} "
      "(critical); no pending or failed row remap or page retirement; at most {:g} "
      "retired pages and {:g} rows remapped for uncorrectable errors",
      l.warning, l.critical, l.retired_pages, l.uncorrectable_rows);
}

void judge_gpu_ecc(const GpuTable& t, size_t row, const EccLimits& l, Findings& f) {
  const std::string gpu = gpu_name(t, row);
  const std::string_view index = t.cell(row, "index");
  const std::string reset = fmt::format(
      "reset the GPU when it is idle (nvidia-smi -r -i {}) so the "
      "pending retirement or remap takes effect",
      index);
  const std::string replace =
      "drain the node and replace the GPU (its memory has no spare rows or pages left)";
  if (yes_cell(t, row, "remapped_rows.failure"))
    f.add(Status::kCritical, gpu + ": row remapping failed", replace);
  if (yes_cell(t, row, "remapped_rows.pending"))
    f.add(Status::kCritical, gpu + ": row remap pending", reset);
  if (yes_cell(t, row, "retired_pages.pending"))
    f.add(Status::kCritical, gpu + ": page retirement pending", reset);
  const double pages = count_cell(t, row, "retired_pages.double_bit.count").value_or(0) +
                       count_cell(t, row, "retired_pages.single_bit_ecc.count").value_or(0);
  if (pages > l.retired_pages)
    f.add(Status::kCritical, fmt::format("{}: {:g} retired pages", gpu, pages), replace);
  const double rows = count_cell(t, row, "remapped_rows.uncorrectable").value_or(0);
  if (rows > l.uncorrectable_rows) {
    f.add(Status::kCritical,
          fmt::format("{}: {:g} rows remapped for uncorrectable errors", gpu, rows), replace);
  }
  const double volatile_errors =
      count_cell(t, row, "ecc.errors.uncorrected.volatile.total").value_or(0);
  const std::string memory_test = fmt::format(
      "drain the node; reset the GPU (nvidia-smi -r -i {}) and run dcgmi diag -r 3 before it takes "
      "jobs again",
      index);
  if (volatile_errors >= l.critical || volatile_errors >= l.warning) {
    f.add(volatile_errors >= l.critical ? Status::kCritical : Status::kWarning,
          fmt::format("{}: {:g} uncorrectable ECC errors since the driver loaded", gpu,
                      volatile_errors),
          memory_test);
  }
}

}  // namespace

CheckResult nvidia_ecc(const AccelRun& run) {
  const EccLimits limits = ecc_limits(run.section);
  constexpr std::string_view kFields[] = {"index",
                                          "pci.bus_id",
                                          "ecc.errors.uncorrected.volatile.total",
                                          "ecc.errors.uncorrected.aggregate.total",
                                          "retired_pages.pending",
                                          "retired_pages.double_bit.count",
                                          "retired_pages.single_bit_ecc.count",
                                          "remapped_rows.uncorrectable",
                                          "remapped_rows.pending",
                                          "remapped_rows.failure"};
  const GpuQuery query = query_gpus(run, kFields);
  if (!query.table) return query.failure;
  try {
    Findings findings;
    double lifetime = 0;
    for (size_t row = 0; row < query.table->rows.size(); ++row) {
      judge_gpu_ecc(*query.table, row, limits, findings);
      lifetime +=
          count_cell(*query.table, row, "ecc.errors.uncorrected.aggregate.total").value_or(0);
    }
    return findings.result(
        fmt::format("no uncorrectable ECC error since the driver loaded on {}, no pending "
                    "remap ({:g} uncorrectable in the GPUs' lifetime)",
                    device_count_text(AccelVendor::kNvidia, query.table->rows.size()), lifetime),
        ecc_expected(limits));
  } catch (const Error& e) {
    return unknown(e.what());
  }
}

CheckResult ascend_ecc(const AccelRun& run) {
  const EccLimits limits = ecc_limits(run.section);
  const NpuQuery query = query_npus(run);
  if (!query.info) return query.failure;
  std::vector<std::vector<std::string>> commands;
  for (const sysinfo::NpuChip& chip : query.info->chips) {
    commands.push_back({"npu-smi", "info", "-t", "ecc", "-i", std::to_string(chip.npu_id), "-c",
                        std::to_string(chip.chip_id)});
  }
  const std::vector<ToolRun> runs = run_tools(run.context, commands);
  Findings findings;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].ok()) return tool_failure(runs[i], false);
    const sysinfo::NpuChip& chip = query.info->chips[i];
    std::optional<double> errors;
    try {
      errors = npu_double_bit_errors(runs[i].output);
    } catch (const Error& e) {
      return unknown(fmt::format("{}: {}", npu_name(*query.info, chip), e.what()));
    }
    if (!errors || *errors < limits.warning) continue;
    findings.add(
        *errors >= limits.critical ? Status::kCritical : Status::kWarning,
        fmt::format("{}: {:g} double-bit (uncorrectable) ECC errors", npu_name(*query.info, chip),
                    *errors),
        fmt::format("drain the node and look at the NPU's health and fault codes (npu-smi info -t "
                    "health -i {} -c {})",
                    chip.npu_id, chip.chip_id));
  }
  return findings.result(
      fmt::format("no double-bit ECC error on {}",
                  device_count_text(AccelVendor::kAscend, query.info->chips.size())),
      fmt::format("double-bit ECC errors below {:g} (warning) and {:g} (critical)", limits.warning,
                  limits.critical));
}

// accel.clocks

namespace {

struct ClockReason {
  uint64_t bit;  // NVML's nvmlClocksEventReason* / nvmlClocksThrottleReason* bit
  std::string_view name;
  Status status;
  std::string_view action;
};

// NVML (nvml.h, "Clocks Event Reasons"): idle, application clocks, the software power cap, sync
// boost and display clocks are the GPU doing as told; the hardware slowdowns halve the clocks or
// worse and mean heat or a power fault. aznhc (azure_gpu_clock_throttling.nhc) accepts idle, none
// and SW power cap.
constexpr std::array<ClockReason, 9> kClockReasons = {{
    {0x1, "idle", Status::kOk, ""},
    {0x2, "application clocks setting", Status::kOk, ""},
    {0x4, "SW power cap", Status::kOk, ""},
    {0x10, "sync boost", Status::kOk, ""},
    {0x20, "SW thermal slowdown", Status::kWarning,
     "the GPU is near its slowdown temperature: check the node's fans, airflow and inlet "
     "temperature"},
    {0x40, "HW thermal slowdown", Status::kCritical,
     "the GPU is too hot: check the node's fans, airflow and inlet temperature (nvidia-smi -q -d "
     "TEMPERATURE)"},
    {0x80, "HW power brake slowdown", Status::kCritical,
     "the power supply asserted power brake: check the PSUs and the BMC's power events"},
    {0x100, "display clock setting", Status::kOk, ""},
    // Set with the thermal and power-brake bits too: last, so that their line is the one shown.
    {0x8, "HW slowdown", Status::kCritical,
     "look at why the GPU slowed down (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER) and at the "
     "BMC's event log"},
}};

GpuQuery clock_query(const AccelRun& run) {
  // Drivers from R535 name the reasons clocks_event_reasons; older ones clocks_throttle_reasons.
  constexpr std::string_view kEvent[] = {"index", "pci.bus_id", "clocks.current.sm",
                                         "clocks.max.sm", "clocks_event_reasons.active"};
  constexpr std::string_view kThrottle[] = {"index", "pci.bus_id", "clocks.current.sm",
                                            "clocks.max.sm", "clocks_throttle_reasons.active"};
  GpuQuery query = query_gpus(run, kEvent);
  if (!query.table && query.refused) query = query_gpus(run, kThrottle);
  return query;
}

void judge_gpu_clocks(const GpuTable& t, size_t row, Findings& f) {
  std::string_view mask_cell = t.cell(row, "clocks_event_reasons.active");
  if (mask_cell.empty()) mask_cell = t.cell(row, "clocks_throttle_reasons.active");
  if (cell_state(mask_cell) != CellState::kValue) return;
  const std::optional<uint64_t> mask = cell_mask(mask_cell);
  if (!mask) {
    throw Error(fmt::format(
        "nvidia-smi: {}: the active clock reasons are '{}', expected a bit mask (0x...)",
        gpu_name(t, row), terminal_safe(shorten(mask_cell))));
  }
  Status worst = Status::kOk;
  std::vector<std::string> names;
  std::string_view action;
  for (const ClockReason& reason : kClockReasons) {
    if ((*mask & reason.bit) == 0 || reason.status == Status::kOk) continue;
    names.emplace_back(reason.name);
    if (worse(worst, reason.status) != worst) {
      worst = reason.status;
      action = reason.action;
    }
  }
  if (names.empty()) return;
  const std::optional<double> sm = count_cell(t, row, "clocks.current.sm");
  const std::optional<double> max = count_cell(t, row, "clocks.max.sm");
  const std::string clocks =
      sm && max ? fmt::format("SM {:g} of {:g} MHz, ", *sm, *max) : std::string();
  f.add(worst, fmt::format("{}: {}{}", gpu_name(t, row), clocks, join(names, ", ")), action);
}

}  // namespace

CheckResult nvidia_clocks(const AccelRun& run) {
  const GpuQuery query = clock_query(run);
  if (!query.table) return query.failure;
  try {
    Findings findings;
    for (size_t row = 0; row < query.table->rows.size(); ++row)
      judge_gpu_clocks(*query.table, row, findings);
    return findings.result(
        fmt::format("no thermal or power slowdown on {}",
                    device_count_text(AccelVendor::kNvidia, query.table->rows.size())),
        "no HW slowdown, HW thermal, HW power brake or SW thermal slowdown");
  } catch (const Error& e) {
    return unknown(e.what());
  }
}

CheckResult ascend_clocks(const AccelRun&) {
  return skipped(
      "Ascend: npu-smi reports no throttle reasons, so clocks are not judged (accel.temperature "
      "and accel.health are)");
}

// accel.temperature

namespace {

struct TemperatureLimits {
  double warning = exporter::AlertOptions{}.temp_warn;  // the seed's 85 C, as PlumbDeviceHot
  double critical =
      exporter::AlertOptions{}.temp_crit;  // the seed's 95 C, as PlumbDeviceThrottling
};

TemperatureLimits temperature_limits(const CheckSection& section) {
  TemperatureLimits limits;
  limits.warning = section.number("warning", kTemperatureRange).value_or(limits.warning);
  limits.critical = section.number("critical", kTemperatureRange).value_or(limits.critical);
  if (limits.warning > limits.critical) {
    throw Error(
        fmt::format("checks.accel.temperature: warning ({:g}) must not be above critical ({:g})",
                    limits.warning, limits.critical));
  }
  return limits;
}

struct Reading {
  std::string device;
  double celsius;
};

CheckResult judge_temperatures(const std::vector<Reading>& readings,
                               const TemperatureLimits& limits, std::string_view tool) {
  if (readings.empty()) return unknown(fmt::format("{} gives no temperature for any device", tool));
  Findings findings;
  const Reading* hottest = &readings.front();
  for (const Reading& r : readings) {
    if (r.celsius > hottest->celsius) hottest = &r;
    if (r.celsius < limits.warning) continue;
    const bool hot = r.celsius >= limits.critical;
    findings.add(hot ? Status::kCritical : Status::kWarning,
                 fmt::format("{}: {:g} C", r.device, r.celsius),
                 hot ? "the device is at its slowdown temperature: drain the node and check its "
                       "fans and airflow "
                       "(ipmitool sdr type Temperature)"
                     : "check the node's fans, airflow and inlet temperature (ipmitool sdr type "
                       "Temperature)");
  }
  return findings.result(
      fmt::format("hottest {} at {:g} C", hottest->device, hottest->celsius),
      fmt::format("below {:g} C (warning) and {:g} C (critical)", limits.warning, limits.critical));
}

}  // namespace

CheckResult nvidia_temperature(const AccelRun& run) {
  const TemperatureLimits limits = temperature_limits(run.section);
  constexpr std::string_view kFields[] = {"index", "pci.bus_id", "temperature.gpu"};
  const GpuQuery query = query_gpus(run, kFields);
  if (!query.table) return query.failure;
  try {
    std::vector<Reading> readings;
    for (size_t row = 0; row < query.table->rows.size(); ++row) {
      if (const std::optional<double> t = count_cell(*query.table, row, "temperature.gpu")) {
        readings.push_back({gpu_name(*query.table, row), *t});
      }
    }
    return judge_temperatures(readings, limits, "nvidia-smi");
  } catch (const Error& e) {
    return unknown(e.what());
  }
}

CheckResult ascend_temperature(const AccelRun& run) {
  const TemperatureLimits limits = temperature_limits(run.section);
  const NpuQuery query = query_npus(run);
  if (!query.info) return query.failure;
  std::vector<Reading> readings;
  for (const sysinfo::NpuChip& chip : query.info->chips) {
    if (chip.temperature_celsius)
      readings.push_back({npu_name(*query.info, chip), *chip.temperature_celsius});
  }
  return judge_temperatures(readings, limits, "npu-smi");
}

}  // namespace plumb::check
