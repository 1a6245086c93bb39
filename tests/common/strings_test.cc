#include "common/strings.h"

#include <gtest/gtest.h>

namespace plumb {
namespace {

TEST(SplitList, TrimsAndDropsEmpty) {
  EXPECT_EQ(split_list("a, b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split_list("").empty());
  EXPECT_EQ(split_list("x:y", ':'), (std::vector<std::string>{"x", "y"}));
}

TEST(EditDistance, Classic) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("comm", "comm"), 0u);
}

TEST(DidYouMean, SuggestsOnlyCloseWords) {
  const std::vector<std::string> names = {"allreduce", "allgather", "alltoall"};
  EXPECT_EQ(did_you_mean("allredcue", names), " (did you mean 'allreduce'?)");
  EXPECT_EQ(did_you_mean("xyz", names), "");
  EXPECT_EQ(closest_match("comn", std::vector<std::string>{"comm", "plan"}), "comm");
}

}  // namespace
}  // namespace plumb
