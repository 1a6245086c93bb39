// Reading a whole input file (a log to import) into memory, with the failures a user can cause
// turned into one message each: a directory, an unreadable path, and endless or enormous input
// (/dev/zero, /dev/urandom, a pipe that never ends) refused instead of read until memory runs out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb {

// Half of this machine's memory: the most one input may take.
uint64_t input_limit_bytes();

// The whole file at `path`, described as `what` in messages ("a log file"):
// "<path>: is a directory; expected <what>", "<path>: cannot read: <reason>",
// "<path>: starts with NUL bytes; expected <what>", "<path>: more than N GiB; expected <what>".
std::string read_whole_file(const std::string& path, std::string_view what,
                            uint64_t limit = input_limit_bytes());

}  // namespace plumb
