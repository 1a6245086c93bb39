// The bounds past which a value the exporter reads cannot be a measurement: a bus bandwidth no
// link or memory reaches, a duration or size out of range, a layer plumb does not know. A value
// past them is refused and counted as malformed (the training events' line, the probe's row, the
// device tool's value), never exported: one absurd sample would otherwise hide an alert (a busbw
// of 1.8e306 B/s keeps PlumbCollectiveBandwidthLow quiet for the whole median window). Each bound
// is far outside what any device does, so that no real reading is ever refused; the derivations
// are in docs/train-events.md ("Values refused") and docs/device-sources.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plumb::exporter {

// 100 TB/s. The fastest scale-up link per device is NVLink 6 (Rubin, announced 2025) at 3.6 TB/s
// both directions together (NVLink 5, B200: 1.8 TB/s); the fastest device memory announced is
// Rubin's HBM4, at most about 22 TB/s, and a one-rank "collective" is a copy inside it. 1e14 is 4.5
// times that memory and 28 times that link: an algbw or busbw above it is a wrong time, not a fast
// network.
inline constexpr double kMaxBandwidthBytesPerSecond = 1e14;

// 100 ns. A collective call, even of one rank, launches at least one kernel (several µs on CUDA
// and CANN alike) and a training step many: nothing a job times is shorter. Below it, bytes /
// seconds turns a timer's rounding into bandwidth (the 1e-300 s collective).
inline constexpr double kMinTimedSeconds = 1e-7;
// A day for one collective call: the watchdogs stop a stuck one long before (PyTorch's NCCL
// timeout 10 min by default; HCCL_EXEC_TIMEOUT at most 17,340 s).
inline constexpr double kMaxCollectiveSeconds = 86400;
// A week for one step or one operator in it.
inline constexpr double kMaxStepSeconds = 7 * 86400;

// 1 PiB (2^50). A collective's size is one device's buffer (nccl-tests' size column) and memory
// figures are one device's or host's: the largest device holds 288 GB (B300), the largest single
// hosts tens of TiB.
inline constexpr double kMaxBytes = 1125899906842624.0;
// Tokens in one step: 60,000 times Llama 3 405B's 16M-token batch.
inline constexpr double kMaxStepTokens = 1e12;
// The last step number exactly representable in the float64 Prometheus stores.
inline constexpr int64_t kMaxStep = int64_t{1} << 53;
// 2^20 ranks: ten times the largest clusters plumb's users run (100,000 devices).
inline constexpr int64_t kMaxRanks = int64_t{1} << 20;

// Device readings (docs/device-sources.md). Temperature: absolute zero to 200 °C, above the
// melting point of nothing on a board but far above any junction's shutdown (about 90-105 °C).
inline constexpr double kMinCelsius = -273.15;
inline constexpr double kMaxCelsius = 200;
// 10 kW for one device: seven times B300's 1,400 W board power.
inline constexpr double kMaxDeviceWatts = 10000;
// 16 TiB (2^44) of device memory: 57 times B300's 288 GB.
inline constexpr double kMaxDeviceMemoryBytes = 17592186044416.0;

// A bound as a message shows it: a whole number up to 2^53 in full ("604800",
// "1125899906842624"), else "%g" ("1e-07").
std::string bound_text(double bound);

// "'collectives[0].layer': unknown layer 'fabric'; expected one of world, node, rail, spine" for a
// layer other than plumb comm's (comm::layer_names()); nothing for a known one.
std::optional<std::string> layer_problem(std::string_view layer, std::string_view where);

// "a busbw of 1.88e+15 B/s (algbw 1.07e+15 B/s), above the 1e+14 B/s no link or memory reaches"
// when either bandwidth is above kMaxBandwidthBytesPerSecond (or not a number); nothing otherwise.
std::optional<std::string> bandwidth_problem(double algbw_bytes_per_second,
                                             double busbw_bytes_per_second);

}  // namespace plumb::exporter
