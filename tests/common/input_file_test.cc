#include "common/input_file.h"

#include <gtest/gtest.h>

#include <functional>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

TEST(ReadWholeFile, ReadsAFileAndRefusesWhatCannotBeALog) {
  const std::string dir = test::temp_dir("read-whole");
  test::write_file(dir + "/log.txt", "# nccl-tests\n");
  EXPECT_EQ(read_whole_file(dir + "/log.txt", "a log file"), "# nccl-tests\n");
  EXPECT_EQ(test::error_message([&] { read_whole_file(dir, "a log file"); }),
            dir + ": is a directory; expected a log file");
  EXPECT_EQ(test::error_message([&] { read_whole_file(dir + "/none", "a log file"); }),
            dir + "/none: cannot read: No such file or directory");
  EXPECT_EQ(test::error_message([] { read_whole_file("/dev/zero", "a log file"); }),
            "/dev/zero: starts with NUL bytes; expected a log file");
  test::write_file(dir + "/big.txt", std::string(3 << 20, 'x'));
  EXPECT_EQ(test::error_message([&] { read_whole_file(dir + "/big.txt", "a log file", 2 << 20); }),
            dir + "/big.txt: more than 2 MiB; expected a log file");
}

}  // namespace
}  // namespace plumb
