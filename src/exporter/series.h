// The names that `plumb exporter`, `plumb alerts rules` and `plumb dashboard` agree on. Every
// name is in base units (Prometheus naming: bytes, seconds, ratios 0..1, watts, celsius).
// docs/monitor.md lists each with its meaning.
#pragma once

namespace plumb::exporter::series {

// ---- Labels every device series carries, whatever the source called them.
inline constexpr const char* kHost = "host";      // the host name (plumb exporter: --host)
inline constexpr const char* kDevice = "device";  // GPU index or NPU id (A3: "NPU-CHIP")

// ---- Device series written by plumb exporter's fallback sources (nvidia-smi, npu-smi), with
// labels host, device, vendor ("nvidia"/"ascend"), model ("NVIDIA A100-SXM4-80GB", "910B2").
inline constexpr const char* kHbmUsed = "plumb_device_hbm_used_bytes";
inline constexpr const char* kHbmTotal = "plumb_device_hbm_total_bytes";
inline constexpr const char* kTemperature = "plumb_device_temperature_celsius";
inline constexpr const char* kPower = "plumb_device_power_watts";
inline constexpr const char* kUtilization = "plumb_device_utilization_ratio";
inline constexpr const char* kHealthy = "plumb_device_healthy";  // 1 healthy, 0 not

// ---- The normalised series the recording rules make from every source (plumb alerts rules);
// alerts and the dashboard use only these.
inline constexpr const char* kRecHbmUsed = "plumb:device_hbm_used_bytes";
inline constexpr const char* kRecHbmTotal = "plumb:device_hbm_total_bytes";
inline constexpr const char* kRecTemperature = "plumb:device_temperature_celsius";
inline constexpr const char* kRecPower = "plumb:device_power_watts";
inline constexpr const char* kRecUtilization = "plumb:device_utilization_ratio";
inline constexpr const char* kRecHealthy = "plumb:device_healthy";

// ---- Training events (plumb.train-events/1, --events FILE): labels host, rank, device.
inline constexpr const char* kStep = "plumb_train_step";                      // last step number
inline constexpr const char* kStepSeconds = "plumb_train_step_seconds";       // last step's time
inline constexpr const char* kStepMedian = "plumb_train_step_median_seconds"; // rolling median
inline constexpr const char* kStepRatio = "plumb_train_step_ratio";           // last / median
inline constexpr const char* kTokensPerSecond = "plumb_train_tokens_per_second";
inline constexpr const char* kMemAllocated = "plumb_train_memory_allocated_bytes";
inline constexpr const char* kMemReserved = "plumb_train_memory_reserved_bytes";
inline constexpr const char* kMemPeak = "plumb_train_memory_peak_bytes";
// Per operator (label `operator`): last duration, rolling median, ratio last / median.
inline constexpr const char* kOpSeconds = "plumb_train_operator_seconds";
inline constexpr const char* kOpMedian = "plumb_train_operator_median_seconds";
inline constexpr const char* kOpRatio = "plumb_train_operator_ratio";
inline constexpr const char* kEventLines = "plumb_train_events_lines_total";
inline constexpr const char* kEventMalformed = "plumb_train_events_malformed_total";
// Values not kept because the source already holds its limit of ranks, operators and collective
// keys (a job that names operators per step cannot grow the exporter without end).
inline constexpr const char* kEventDropped = "plumb_train_events_dropped_total";

// ---- Collective bandwidth (labels layer, collective, bytes; plus source="events"|"probe").
inline constexpr const char* kBusbw = "plumb_comm_busbw_bytes_per_second";

// ---- plumb run --metrics (node_exporter textfile; supervise/recovery_metrics.h).
inline constexpr const char* kRunRestarts = "plumb_run_restarts_total";

// ---- The exporter about itself and its sources (label `source`).
inline constexpr const char* kSourceUp = "plumb_exporter_source_up";  // last collect ok
inline constexpr const char* kSourceAge = "plumb_exporter_source_age_seconds";  // since last ok
inline constexpr const char* kSourceErrors = "plumb_exporter_source_errors_total";
// Rows and values a source refused as no measurement (value_bounds.h; labels host, source): the
// probe's rows, the device tools' values. The events file's lines: kEventMalformed.
inline constexpr const char* kSourceMalformed = "plumb_exporter_source_malformed_total";
inline constexpr const char* kSourceSeconds = "plumb_exporter_source_collect_seconds";
inline constexpr const char* kBuildInfo = "plumb_exporter_build_info";  // {version} 1
inline constexpr const char* kScrapes = "plumb_exporter_scrapes_total";  // answers to /metrics

}  // namespace plumb::exporter::series
