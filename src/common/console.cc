#include "common/console.h"

#include <iostream>

#include "common/strings.h"

namespace plumb {

TerminalSafeBuffer::~TerminalSafeBuffer() { write_out(true); }

bool TerminalSafeBuffer::write_out(bool all) {
  const size_t n = all ? pending_.size() : complete_utf8_prefix(pending_);
  if (n == 0) return true;
  const std::string safe = terminal_safe(std::string_view(pending_).substr(0, n), true);
  pending_.erase(0, n);
  return std::fwrite(safe.data(), 1, safe.size(), out_) == safe.size();
}

TerminalSafeBuffer::int_type TerminalSafeBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  pending_.push_back(traits_type::to_char_type(ch));
  return write_out(false) ? ch : traits_type::eof();
}

std::streamsize TerminalSafeBuffer::xsputn(const char* s, std::streamsize n) {
  // Written through at once (into stdio's buffer), so that text printed with fmt::print(stdout)
  // keeps its order with this; only a UTF-8 sequence cut at the end waits for the next piece.
  pending_.append(s, static_cast<size_t>(n));
  return write_out(false) ? n : 0;
}

int TerminalSafeBuffer::sync() {
  if (!write_out(false)) return -1;
  return std::fflush(out_) == 0 ? 0 : -1;
}

void make_console_terminal_safe() {
  // Never destroyed: the iostreams flush std::cout at exit, after every static object has gone.
  auto* out = new TerminalSafeBuffer(stdout);
  auto* err = new TerminalSafeBuffer(stderr);
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  std::cerr.setf(std::ios::unitbuf);  // as before: every message at once
}

}  // namespace plumb
