#include "common/regex.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace plumb {
namespace {

TEST(Regex, SearchFindsTheLeftmostMatchAndItsGroups) {
  const Regex re(R"(\bstep=(\d+),\s*skipped=(\d+)?)");
  std::string_view g[3];
  ASSERT_TRUE(re.search("[Rank 0] step=120, skipped=", g));
  EXPECT_EQ(g[0], "step=120, skipped=");
  EXPECT_EQ(g[1], "120");
  EXPECT_EQ(g[2].data(), nullptr);  // took no part in the match
  EXPECT_EQ(re.captures(), 2);
  EXPECT_FALSE(re.search("mystep=120, skipped=0"));  // \b
}

TEST(Regex, MatchIsAnchoredAtBothEnds) {
  const Regex re("davinci[0-9]+");
  EXPECT_TRUE(re.match("davinci12"));
  EXPECT_FALSE(re.match("davinci12x"));
  EXPECT_FALSE(re.match("xdavinci1"));
  EXPECT_TRUE(re.search("xdavinci1"));
}

TEST(Regex, MoreGroupsAskedThanThePatternHasAreEmpty) {
  const Regex re("a(b)");
  std::string_view g[4] = {"x", "x", "x", "x"};
  ASSERT_TRUE(re.search("zab", g));
  EXPECT_EQ(g[1], "b");
  EXPECT_EQ(g[3].data(), nullptr);
}

TEST(Regex, RefusesWhatRe2CannotMatchInLinearTimeWithItsReason) {
  try {
    Regex("(?=x)y", "--progress-regex");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--progress-regex '(?=x)y': not a valid regular expression (invalid perl "
              "operator: (?=)");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  EXPECT_THROW(Regex(R"((a)\1)"), Error);  // backreference
  EXPECT_THROW(Regex("(unclosed"), Error);
}

// The cases std::regex crashed or spun on (issue 28): each is linear in RE2.
TEST(Regex, PathologicalPatternsOnLongLinesFinish) {
  const std::string as(30000, 'a');
  EXPECT_FALSE(Regex("(a|aa)*c").search(as));
  EXPECT_FALSE(Regex("(a+)+b").search(as));
  const std::string line = std::string(60000, 'x') + " step 42 " + std::string(1000, 'y');
  std::string_view g[2];
  ASSERT_TRUE(Regex(R"(.*step (\d+).*)").search(line, g));
  EXPECT_EQ(g[1], "42");
  EXPECT_EQ(g[0].size(), line.size());
}

TEST(Regex, BytesThatAreNotUtf8StillMatch) {
  const std::string line = "\xff\xfe step 7 \x80";
  std::string_view g[2];
  ASSERT_TRUE(Regex(R"(.*step (\d+).*)").match(line, g));
  EXPECT_EQ(g[1], "7");
  // A UTF-8 literal in the pattern matches its own bytes.
  EXPECT_TRUE(Regex("█+").search(" 12%|██▏ |"));
}

TEST(Regex, IgnoreCase) {
  EXPECT_TRUE(Regex("nccl error", "p", true).search("NCCL Error here"));
  EXPECT_FALSE(Regex("nccl error").search("NCCL Error here"));
}

TEST(Regex, CopiesShareTheCompiledPattern) {
  const Regex a("x(\\d)");
  const Regex b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  std::string_view g[2];
  EXPECT_TRUE(b.search("x5", g));
  EXPECT_EQ(g[1], "5");
  EXPECT_EQ(b.pattern(), "x(\\d)");
}

}  // namespace
}  // namespace plumb
