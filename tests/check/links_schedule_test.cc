#include "check/links_schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "support/subprocess.h"

namespace plumb::check {
namespace {

// Every pair in range, ordered, and no rank twice in one round.
void expect_matchings(const std::vector<LinkRound>& rounds, int ranks) {
  for (const LinkRound& round : rounds) {
    std::set<int> seen;
    for (const RankPair& p : round.pairs) {
      EXPECT_LT(p.a, p.b) << round.name;
      EXPECT_GE(p.a, 0);
      EXPECT_LT(p.b, ranks);
      EXPECT_TRUE(seen.insert(p.a).second) << round.name << " has rank " << p.a << " twice";
      EXPECT_TRUE(seen.insert(p.b).second) << round.name << " has rank " << p.b << " twice";
    }
  }
}

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

TEST(LinksSchedule, BisectionOfEightIsTheHypercube) {
  const auto rounds = bisection_schedule(8);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].name, "xor 1");
  EXPECT_EQ(rounds[0].pairs, (std::vector<RankPair>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(rounds[1].pairs, (std::vector<RankPair>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(rounds[2].name, "xor 4");
  EXPECT_EQ(rounds[2].pairs, (std::vector<RankPair>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(partners_of(rounds, 8)[3], (std::vector<int>{1, 2, 7}));
}

// A power of two: log2 N rounds, every rank in every round, its partners r XOR 2^k.
TEST(LinksSchedule, BisectionOfAPowerOfTwoPairsEveryRankEveryRound) {
  for (const int n : {2, 4, 16, 64, 1024}) {
    const auto rounds = bisection_schedule(n);
    ASSERT_EQ(static_cast<int>(rounds.size()), ceil_log2(n)) << n;
    expect_matchings(rounds, n);
    for (const LinkRound& round : rounds) EXPECT_EQ(static_cast<int>(round.pairs.size()), n / 2);
    const auto partners = partners_of(rounds, n);
    for (int r = 0; r < n; ++r) {
      std::vector<int> want;
      for (int k = 0; k < ceil_log2(n); ++k) want.push_back(r ^ (1 << k));
      std::sort(want.begin(), want.end());
      EXPECT_EQ(partners[static_cast<size_t>(r)], want) << n << " rank " << r;
    }
  }
}

// Any other count, odd ones included: disjoint pairs, at most one rank idle per round, and every
// rank with min(N−1, ⌈log2 N⌉) distinct partners in ⌈log2 N⌉ more rounds at most.
TEST(LinksSchedule, BisectionOfAnyCountGivesEveryRankItsPartners) {
  for (int n = 2; n <= 130; ++n) {
    const auto rounds = bisection_schedule(n);
    expect_matchings(rounds, n);
    EXPECT_LE(static_cast<int>(rounds.size()), 2 * ceil_log2(n)) << n;
    const auto partners = partners_of(rounds, n);
    const size_t wanted = static_cast<size_t>(std::min(n - 1, ceil_log2(n)));
    for (int r = 0; r < n; ++r) {
      EXPECT_GE(partners[static_cast<size_t>(r)].size(), wanted) << n << " rank " << r;
    }
    for (const LinkRound& round : rounds) {
      if (round.name.starts_with("xor")) {
        EXPECT_EQ(static_cast<int>(round.pairs.size()), n / 2) << n;
      }
    }
  }
  EXPECT_TRUE(bisection_schedule(1).empty());
  const auto three = bisection_schedule(3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[2].name, "extra 1");
  EXPECT_EQ(three[2].pairs, (std::vector<RankPair>{{1, 2}}));
}

TEST(LinksSchedule, ShiftSplitsEachShiftIntoMatchings) {
  const std::vector<int> one = {1};
  const auto rounds = shift_schedule(8, one);
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0].name, "shift 1 (a)");
  EXPECT_EQ(rounds[0].pairs, (std::vector<RankPair>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(rounds[1].pairs, (std::vector<RankPair>{{0, 7}, {1, 2}, {3, 4}, {5, 6}}));
  // An odd cycle needs a third round for its closing edge.
  const auto odd = shift_schedule(5, one);
  ASSERT_EQ(odd.size(), 3u);
  EXPECT_EQ(odd[2].pairs, (std::vector<RankPair>{{0, 4}}));
  // Rail-aligned: 4 nodes of 2 ranks, shift 2 pairs local rank k with local rank k.
  const std::vector<int> rail = {2};
  for (const LinkRound& round : shift_schedule(8, rail)) {
    for (const RankPair& p : round.pairs) EXPECT_EQ(p.a % 2, p.b % 2) << round.name;
  }
  // s = N/2: one round of N/2 pairs.
  const std::vector<int> half = {4};
  ASSERT_EQ(shift_schedule(8, half).size(), 1u);
  EXPECT_EQ(shift_schedule(8, half)[0].pairs.size(), 4u);
}

TEST(LinksSchedule, ShiftCoversEveryEdgeOnce) {
  for (int n = 2; n <= 40; ++n) {
    for (int s = 1; s < n; ++s) {
      const std::vector<int> shifts = {s};
      const auto rounds = shift_schedule(n, shifts);
      expect_matchings(rounds, n);
      std::set<std::pair<int, int>> edges;
      for (const LinkRound& round : rounds) {
        for (const RankPair& p : round.pairs) edges.insert({p.a, p.b});
      }
      std::set<std::pair<int, int>> want;
      for (int r = 0; r < n; ++r) want.insert({std::min(r, (r + s) % n), std::max(r, (r + s) % n)});
      EXPECT_EQ(edges, want) << n << " shift " << s;
    }
  }
}

TEST(LinksSchedule, DefaultShiftsAreRailAlignedAndBounded) {
  EXPECT_EQ(default_shifts(16, 2, 3), (std::vector<int>{2, 4, 6}));
  EXPECT_EQ(default_shifts(8, 1, 3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(default_shifts(4, 1, 3), (std::vector<int>{1, 2}));
  EXPECT_EQ(default_shifts(8, 8, 3), (std::vector<int>{1, 2, 3}));  // one node: stride 1
  EXPECT_EQ(default_shifts(2, 1, 3), (std::vector<int>{1}));
}

TEST(LinksSchedule, BadPatternsAndShiftsAreNamed) {
  EXPECT_EQ(test::error_message([] { check_pattern("bisecton"); }),
            "--pattern: unknown pattern 'bisecton' (did you mean 'bisection'?); expected one of "
            "bisection, shift");
  check_pattern("shift");
  const std::vector<int> shifts = {8};
  EXPECT_EQ(test::error_message([&] { shift_schedule(8, shifts); }),
            "--shifts: each shift must be from 1 to 7 (ranks − 1), got 8");
}

}  // namespace
}  // namespace plumb::check
