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

namespace plumb {
namespace {

TEST(TerminalSafe, EscapesControlsAndBrokenUtf8KeepsText) {
  EXPECT_EQ(terminal_safe("gpu-001"), "gpu-001");
  EXPECT_EQ(terminal_safe("\x1b]0;owned\x07label"), "\\x1b]0;owned\\x07label");
  EXPECT_EQ(terminal_safe("a\nb\tc\r"), "a\\nb\\tc\\r");
  EXPECT_EQ(terminal_safe("a\nb\tc", true), "a\nb\tc");
  EXPECT_EQ(terminal_safe("del\x7f"), "del\\x7f");
  EXPECT_EQ(terminal_safe("c1 \xc2\x9b" "31m"), "c1 \\u009b31m");  // CSI as a C1 control
  EXPECT_EQ(terminal_safe("≥ 1 MiB · ü"), "≥ 1 MiB · ü");         // UTF-8 stays
  EXPECT_EQ(terminal_safe("bad \xff\xc3"), "bad \\xff\\xc3");       // not UTF-8
  EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");     // a surrogate
}

TEST(ValidUtf8Text, ReplacesWhatIsNotUtf8AndNul) {
  using namespace std::string_literals;
  EXPECT_EQ(valid_utf8_text("≥ 1 MiB · ü"), "≥ 1 MiB · ü");
  EXPECT_EQ(valid_utf8_text("bad \xff!"), "bad \xEF\xBF\xBD!");
  EXPECT_EQ(valid_utf8_text("\xc3"), "\xEF\xBF\xBD");                       // cut at the end
  EXPECT_EQ(valid_utf8_text("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(valid_utf8_text("a\0b"s), "a\xEF\xBF\xBD" "b");
}

TEST(CompleteUtf8Prefix, HoldsBackACutSequence) {
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  EXPECT_EQ(complete_utf8_prefix("a\xe2\x89"), 1u);      // ≥ cut after two of three bytes
  EXPECT_EQ(complete_utf8_prefix("a\xe2\x89\xa5"), 4u);  // whole
  EXPECT_EQ(complete_utf8_prefix("a\xf0"), 1u);
  EXPECT_EQ(complete_utf8_prefix("\x80\x80\x80\x80"), 4u);  // stray continuations: nothing to wait for
}

}  // namespace
}  // namespace plumb
