#include "common/huge_pages.h"

#include <gtest/gtest.h>

namespace plumb {
namespace {

TEST(HugePages, ModeIsTheBracketedWordOfTheSysfsFile) {
  EXPECT_EQ(huge_page_mode_from("[always] madvise never\n"), HugePageMode::kAlways);
  EXPECT_EQ(huge_page_mode_from("always [madvise] never\n"), HugePageMode::kMadvise);
  EXPECT_EQ(huge_page_mode_from("always madvise [never]\n"), HugePageMode::kNever);
  EXPECT_EQ(huge_page_mode_from(""), HugePageMode::kNever);  // no THP in this kernel
}

TEST(HugePages, HintOnlyWhereTheKernelNeedsItToUseHugePages) {
  EXPECT_FALSE(huge_page_hint_wanted(HugePageMode::kAlways));  // would add direct compaction
  EXPECT_TRUE(huge_page_hint_wanted(HugePageMode::kMadvise));
  EXPECT_FALSE(huge_page_hint_wanted(HugePageMode::kNever));
}

TEST(HugePages, GivenBackWherePageReportingTakesBlocksOfAHugePageOrLess) {
  EXPECT_TRUE(huge_pages_given_back("9\n", "21564068\n"));  // this project's VM
  EXPECT_TRUE(huge_pages_given_back("9\n", ""));             // a kernel without reported_kib
  EXPECT_FALSE(huge_pages_given_back("9\n", "0\n"));        // loaded, nothing reported yet
  EXPECT_FALSE(huge_pages_given_back("10\n", "512\n"));     // only blocks bigger than a huge page
  EXPECT_FALSE(huge_pages_given_back("", ""));                // no page reporting
  EXPECT_FALSE(huge_pages_given_back("x", "1"));
}

}  // namespace
}  // namespace plumb
