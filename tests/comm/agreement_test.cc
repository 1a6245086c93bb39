#include "comm/agreement.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/fake_communicator.h"

namespace plumb::comm {
namespace {

TEST(Agree, NothingFailedNothingThrown) {
  test::FakeCommunicator fake;
  int ran = 0;
  agree(fake, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

TEST(Agree, EveryRankFailedAlikeGivesTheMessageAlone) {
  test::FakeCommunicator fake;
  try {
    agree(fake, [] { throw Error("map.yaml:3: bad", ExitCode::kBadInput); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "map.yaml:3: bad");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

// Wire format of a failure: code, host and message separated by the ASCII unit separator.
TEST(Agree, AnotherRanksFailureReachesThisRank) {
  test::FakeCommunicator fake;
  fake.peer_strings = {"", "1\x1f" "gpu-7\x1f" "CUDA error in cudaMalloc: out of memory"};
  try {
    agree(fake, [] {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "rank 2 on host gpu-7: CUDA error in cudaMalloc: out of memory "
                           "(1 of 3 ranks failed)");
    EXPECT_EQ(e.code(), ExitCode::kCheckFailed);
  }
}

TEST(Agree, OtherExceptionsBecomeErrors) {
  test::FakeCommunicator fake;
  try {
    agree(fake, [] { throw std::runtime_error("boom"); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unexpected error: boom");
  }
}

}  // namespace
}  // namespace plumb::comm
