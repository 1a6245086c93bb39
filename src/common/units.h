// Byte sizes as users write them on the command line ("8", "64K", "1M", "2G") and as tables
// print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;

// Parses a byte count with an optional binary suffix K, M, G or T (also KB/KiB, ...), as
// nccl-tests' -b/-e do (suffixes are powers of 1024). Throws plumb::Error naming `what` (the
// option) on anything else, on overflow and on an empty string.
uint64_t parse_bytes(std::string_view text, std::string_view what);

// "512 B", "64 KiB", "1.5 MiB": a short human form for messages and progress lines.
std::string format_bytes(uint64_t bytes);

}  // namespace plumb
