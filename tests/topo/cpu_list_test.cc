#include "topo/cpu_list.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb::topo {
namespace {

TEST(CpuList, FormatsRunsAsRanges) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({5}), "5");
  EXPECT_EQ(format_cpu_list({}), "");
  CpuSet two_ranges;
  for (int cpu = 0; cpu < 16; ++cpu) two_ranges.insert(cpu);
  for (int cpu = 32; cpu < 48; ++cpu) two_ranges.insert(cpu);
  EXPECT_EQ(format_cpu_list(two_ranges), "0-15,32-47");
}

TEST(CpuList, ParsesWhatItFormats) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11", "t"), (CpuSet{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("", "t"), CpuSet{});
  EXPECT_EQ(format_cpu_list(parse_cpu_list("0-15,32-47", "t")), "0-15,32-47");
}

TEST(CpuList, AcceptsAnyOrderOverlapAndSpaces) {
  EXPECT_EQ(parse_cpu_list(" 10-11 , 8,0-3,2-4", "t"), (CpuSet{0, 1, 2, 3, 4, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("65535", "t"), CpuSet{kMaxCpu});
}

TEST(CpuList, RejectsWhatIsNotAList) {
  for (const char* bad : {"a", "3-1", "-1", "1-", "0x3", "1.5", "65536", "0-99999", "1 2"}) {
    try {
      parse_cpu_list(bad, "--cpus");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.what(), std::string("--cpus: expected a CPU list such as 0-3,8 (indices up to "
                                      "65535), got '") +
                              bad + "'");
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
    }
  }
}

}  // namespace
}  // namespace plumb::topo
