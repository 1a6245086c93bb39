// libFuzzer target: any bytes as text from a file shown on the terminal, and as a --launcher
// string. terminal_safe() must leave no control character and only valid UTF-8;
// complete_utf8_prefix() must cut at most a 3-byte tail; split_words() must return or throw
// plumb::Error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/baseline_command.h"
#include "common/error.h"
#include "common/strings.h"

namespace {

// True when `s` is UTF-8 without C0 (but newline and tab when `layout`), DEL or C1 characters.
bool clean(std::string_view s, bool layout) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 && !(layout && (c == '\n' || c == '\t'))) return false;
    if (c == 0x7F) return false;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) return false;
  }
  return plumb::complete_utf8_prefix(s) == s.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!clean(plumb::terminal_safe(text), false)) std::abort();
  if (!clean(plumb::terminal_safe(text, true), true)) std::abort();
  if (plumb::complete_utf8_prefix(text) + 3 < text.size()) std::abort();
  try {
    (void)plumb::cli::split_words(text, "--launcher");
  } catch (const plumb::Error&) {
  }
  return 0;
}
