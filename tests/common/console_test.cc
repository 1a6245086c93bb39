#include "common/console.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

namespace plumb {
namespace {

// What a stream over a TerminalSafeBuffer delivers, read back from a temporary C stream.
std::string through_buffer(const std::function<void(std::ostream&)>& write) {
  std::FILE* file = std::tmpfile();
  {
    TerminalSafeBuffer buffer(file);
    std::ostream out(&buffer);
    write(out);
    out.flush();
  }
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char chunk[256];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, n);
  std::fclose(file);
  return text;
}

TEST(TerminalSafeBuffer, EscapesControlsKeepsLayoutAndUtf8) {
  EXPECT_EQ(through_buffer([](std::ostream& o) { o << "id\tlabel\n1\t\x1b[2Jwiped\n"; }),
            "id\tlabel\n1\t\\x1b[2Jwiped\n");
  EXPECT_EQ(through_buffer([](std::ostream& o) { o << "bell\a" << '\x9b' << "end"; }),
            "bell\\x07\\x9bend");
}

TEST(TerminalSafeBuffer, AUtf8SequenceSplitAcrossWritesStaysWhole) {
  // "≥" is E2 89 A5: written one byte at a time it must not become three escapes.
  EXPECT_EQ(through_buffer([](std::ostream& o) {
              o << '\xe2';
              o << '\x89';
              o << '\xa5' << " 1 MiB";
            }),
            "≥ 1 MiB");
  // A sequence that never completes is escaped when the buffer is done.
  EXPECT_EQ(through_buffer([](std::ostream& o) { o << "cut \xe2\x89"; }), "cut \\xe2\\x89");
}

}  // namespace
}  // namespace plumb
