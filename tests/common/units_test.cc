#include "common/units.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb {
namespace {

TEST(ParseBytes, PlainAndSuffixes) {
  EXPECT_EQ(parse_bytes("8", "-b"), 8u);
  EXPECT_EQ(parse_bytes("0", "-b"), 0u);
  EXPECT_EQ(parse_bytes("1K", "-b"), 1024u);
  EXPECT_EQ(parse_bytes("64k", "-b"), 65536u);
  EXPECT_EQ(parse_bytes("1M", "-b"), 1048576u);
  EXPECT_EQ(parse_bytes("128MB", "-b"), 134217728u);
  EXPECT_EQ(parse_bytes("2G", "-b"), 2147483648u);
  EXPECT_EQ(parse_bytes("2GiB", "-b"), 2147483648u);
  EXPECT_EQ(parse_bytes("1T", "-b"), 1099511627776u);
  EXPECT_EQ(parse_bytes("512B", "-b"), 512u);
}

TEST(ParseBytes, RejectsWithTheOptionNamed) {
  try {
    parse_bytes("1X", "--min-bytes");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--min-bytes: expected a byte count such as 8, 64K, 1M or 2G, got '1X'");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  EXPECT_THROW(parse_bytes("", "-e"), Error);
  EXPECT_THROW(parse_bytes("M", "-e"), Error);
  EXPECT_THROW(parse_bytes("-1", "-e"), Error);
  EXPECT_THROW(parse_bytes("1.5M", "-e"), Error);
}

TEST(ParseBytes, Overflow) {
  try {
    parse_bytes("99999999999999999999", "-e");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "-e: '99999999999999999999' is too large");
  }
  EXPECT_THROW(parse_bytes("20000000000G", "-e"), Error);
}

TEST(FormatBytes, HumanForm) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(64 * kMiB), "64 MiB");
  EXPECT_EQ(format_bytes(3 * kGiB), "3 GiB");
}

}  // namespace
}  // namespace plumb
