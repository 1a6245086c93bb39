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

// The watchdog's verdict when a measurement ran past --timeout: who did not answer, or who is
// behind when everyone did.
TEST(WatchdogMessage, NamesTheRanksThatDidNotAnswer) {
  const std::vector<std::string> hosts = {"a", "b", "c"};
  std::vector<std::optional<RankStatus>> heard(3);
  heard[0] = RankStatus{7, "world · allreduce · 1 KiB", true};
  heard[2] = RankStatus{7, "world · allreduce · 1 KiB", false};
  EXPECT_EQ(timeout_message(heard, hosts, 3),
            "world · allreduce · 1 KiB did not finish within --timeout 3 s: rank 1 on host b did "
            "not answer (stopped, dead, or its host hangs); the job is aborted");
  EXPECT_EQ(reporter(heard), 0);
  heard[0].reset();
  EXPECT_EQ(reporter(heard), 2);
  EXPECT_EQ(timeout_message(heard, hosts, 3),
            "world · allreduce · 1 KiB did not finish within --timeout 3 s: rank 0 on host a, "
            "rank 1 on host b did not answer (stopped, dead, or its host hangs); the job is "
            "aborted");
}

TEST(WatchdogMessage, EveryRankAnswered) {
  const std::vector<std::string> hosts = {"a", "b"};
  std::vector<std::optional<RankStatus>> heard = {RankStatus{4, "node · alltoall · 8 B", true},
                                                  RankStatus{3, "node · alltoall · 2 B", false}};
  EXPECT_EQ(timeout_message(heard, hosts, 300),
            "node · alltoall · 8 B did not finish within --timeout 300 s: every rank answered; "
            "behind the others: rank 1 on host b (at node · alltoall · 2 B); the job is aborted");
  heard[1] = RankStatus{4, "node · alltoall · 8 B", true};
  EXPECT_EQ(timeout_message(heard, hosts, 300),
            "node · alltoall · 8 B did not finish within --timeout 300 s: every rank answered and "
            "is in it, so the collective is slow or hangs in the library (raise --timeout if it is "
            "only slow); the job is aborted");
}

}  // namespace
}  // namespace plumb::comm
