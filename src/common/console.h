// The console (standard output and standard error as std::cout and std::cerr) never passes a
// control character from a file to the terminal: every byte written through them is escaped as
// terminal_safe() does, newlines and tabs kept. The human tables, notes and messages of every
// command go through them; JSON written to "-" is unchanged in meaning (nlohmann escapes C0
// itself, and a C1 character becomes the JSON escape "\u009b" of the same character).
#pragma once

#include <cstdio>
#include <streambuf>
#include <string>

namespace plumb {

// A stream buffer that escapes what it is given and writes it to a C stream.
class TerminalSafeBuffer : public std::streambuf {
 public:
  explicit TerminalSafeBuffer(std::FILE* out) : out_(out) {}
  ~TerminalSafeBuffer() override;

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool write_out(bool all);  // escapes and writes the complete part of pending_ (all: every byte)
  std::FILE* out_;
  std::string pending_;
};

// Points std::cout and std::cerr at escaping buffers over stdout and stderr, for the life of the
// process (called once by the CLI before a command runs).
void make_console_terminal_safe();

}  // namespace plumb
