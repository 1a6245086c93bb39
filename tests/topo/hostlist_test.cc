#include "topo/hostlist.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb::topo {
namespace {

using Names = std::vector<std::string>;

std::string error_of(std::string_view text, size_t limit = kMaxHostlistNames) {
  try {
    expand_hostlist(text, limit);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Hostlist, ExpandsRangesKeepingZeroPadding) {
  EXPECT_EQ(expand_hostlist("node[01-03]"), (Names{"node01", "node02", "node03"}));
  EXPECT_EQ(expand_hostlist("node[08-10]"), (Names{"node08", "node09", "node10"}));
  EXPECT_EQ(expand_hostlist("n[9-11]"), (Names{"n9", "n10", "n11"}));
  EXPECT_EQ(expand_hostlist("n[098-101]"), (Names{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(expand_hostlist("tux5"), (Names{"tux5"}));
}

TEST(Hostlist, ExpandsListsAcrossCommasInsideAndOutsideBrackets) {
  EXPECT_EQ(expand_hostlist("gpu[1-3,7],cpu5"), (Names{"gpu1", "gpu2", "gpu3", "gpu7", "cpu5"}));
  // Slurm's own example: tux[0-3,12,18-20]
  EXPECT_EQ(expand_hostlist("tux[0-3,12,18-20]").size(), 8u);
  EXPECT_EQ(expand_hostlist("a[1-2]-ib,b"), (Names{"a1-ib", "a2-ib", "b"}));
}

TEST(Hostlist, SeveralBracketGroupsExpandAsTheirProductLastFastest) {
  EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]"), (Names{"a1b3", "a1b4", "a2b3", "a2b4"}));
  EXPECT_EQ(expand_hostlist("rack[1-2]-n[01,03]").size(), 4u);
}

TEST(Hostlist, BadExpressionsNameTheBadPart) {
  EXPECT_EQ(error_of("node[01-1x]"), "bad range '01-1x' in a hostlist (expected numbers such as 01-16)");
  EXPECT_EQ(error_of("node[5-3]"), "bad range '5-3' in a hostlist (it goes backwards)");
  EXPECT_EQ(error_of("node[1-010]"),
            "bad range '1-010' in a hostlist (its bounds are zero-padded to different widths)");
  EXPECT_EQ(error_of("node[01-16"), "'[' without ']' in hostlist 'node[01-16'");
  EXPECT_EQ(error_of("node01]"), "']' without '[' in hostlist 'node01]'");
  EXPECT_EQ(error_of("n[1-[2]]"), "'[' inside brackets in hostlist 'n[1-[2]]'");
  EXPECT_EQ(error_of("n[]"), "empty brackets in 'n[]' in a hostlist");
  EXPECT_EQ(error_of("n[1,]"), "bad range '' in a hostlist (expected numbers such as 01-16)");
  EXPECT_EQ(error_of("a,,b"), "an empty name in a hostlist (two commas, or one at an end)");
  EXPECT_EQ(error_of("n\x1b[1]"),
            "'n\\x1b[1]' in a hostlist holds a blank, a control character or bytes that are not UTF-8");
  EXPECT_EQ(error_of("n\xff"), "'n\\xff' in a hostlist holds a blank, a control character or bytes that are not UTF-8");
  EXPECT_EQ(error_of(std::string("aaaaaaaaaaaaaaaaa[1]") + "[1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1]"),
            "'aaaaaaaaaaaaaaaaa[1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1]' in a hostlist has more than 16 bracket groups");
  EXPECT_EQ(error_of("n[1-1234567890123456789]"),
            "bad range '1-1234567890123456789' in a hostlist (numbers have at most 18 digits)");
}

TEST(Hostlist, ExpansionIsLimited) {
  EXPECT_EQ(error_of("n[0-99999999]"), "hostlist 'n[0-99999999]' expands to more than 1048576 names");
  EXPECT_EQ(error_of("a[1-4]b[1-4]", 15), "hostlist 'a[1-4]b[1-4]' expands to more than 15 names");
  EXPECT_EQ(expand_hostlist("a[1-4]b[1-4]", 16).size(), 16u);
  EXPECT_EQ(error_of("a,b,c", 2), "hostlist 'c' expands to more than 2 names");
}

TEST(Hostlist, CompressesRunsInOrder) {
  EXPECT_EQ(compress_hostlist(Names{"n01", "n02", "n03", "n07"}), "n[01-03,07]");
  EXPECT_EQ(compress_hostlist(Names{"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(compress_hostlist(Names{"gpu1", "gpu2", "cpu5"}), "gpu[1-2],cpu5");
  EXPECT_EQ(compress_hostlist(Names{"a1-ib", "a2-ib"}), "a[1-2]-ib");
  EXPECT_EQ(compress_hostlist(Names{"solo"}), "solo");
  // Out of order: the order is kept, so n3 starts a new group.
  EXPECT_EQ(compress_hostlist(Names{"n1", "n2", "n3", "n1"}), "n[1-3],n1");
  // Padding changes start a new range: 09 then 10 is one range at width 2, 9 then 010 is not.
  EXPECT_EQ(compress_hostlist(Names{"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(compress_hostlist(Names{"n9", "n010"}), "n[9,010]");
}

TEST(Hostlist, CompressThenExpandGivesTheNamesBack) {
  const Names names = {"gpu001", "gpu002", "gpu010", "gpu011", "n9", "n10", "x", "rack1-n07",
                       "rack1-n08", "n9", "a0", "a00", "a000"};
  EXPECT_EQ(expand_hostlist(compress_hostlist(names)), names);
}

TEST(Hostlist, NamesThatCannotBeWrittenAreRefused) {
  try {
    compress_hostlist(Names{"ok", "a,b"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the name 'a,b' cannot be written in a hostlist (it is empty or holds ',', "
                           "'[', ']' or a blank)");
  }
}

}  // namespace
}  // namespace plumb::topo
