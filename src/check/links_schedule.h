// plumb check links: who measures with whom. A schedule is a list of rounds; a round is a set of
// disjoint pairs of ranks, all measured at once. Every pair of N ranks would take N−1 rounds
// (the circle method), too many at 1,000 nodes: the schedules here give each rank a few
// partners in a few rounds, enough to tell a slow node (slow with every partner) from a slow link
// (slow with one). Pure functions of the rank count, so every rank computes the same schedule.
// docs/check.md, "Schedules".
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::check {

struct RankPair {
  int a = 0;  // a < b
  int b = 0;
  bool operator==(const RankPair&) const = default;
};

struct LinkRound {
  std::string name;             // "xor 4", "shift 2 (a)": what the round is, for the outputs
  std::vector<RankPair> pairs;  // disjoint: a rank is in one pair at most
};

// bisection: ⌈log2 N⌉ rounds of hypercube partners (round k pairs r with r XOR 2^k), so every
// rank meets log2 N distinct partners and every half of the ranks exchanges data with the other.
// When N is not a power of two, the ranks whose XOR partner does not exist pair among themselves
// (a new partner first), and extra rounds (at most ⌈log2 N⌉, mostly one or two) give every rank
// at least min(N−1, ⌈log2 N⌉) distinct partners; with N odd one rank sits out each round.
std::vector<LinkRound> bisection_schedule(int ranks);

// shift: for each s of `shifts` (each 1 ≤ s < N), the pairs {r, r+s mod N}. Those edges form
// cycles; alternate edges go to two rounds ("shift s (a)", "(b)"), and an odd cycle's last edge
// to a third. With s a multiple of the ranks per node, every pair is on one rail (the same local
// rank of two nodes).
std::vector<LinkRound> shift_schedule(int ranks, std::span<const int> shifts);

// The shifts `--pattern shift` uses by default: 1..count times `stride` (the ranks per node when
// every node has the same number, so that partners sit on the same rail), fewer when N is small;
// shifts past N/2 repeat earlier pairs and are left out.
std::vector<int> default_shifts(int ranks, int stride, int count);

// The patterns `--pattern` accepts, in order: "bisection", "shift".
std::span<const std::string_view> link_patterns();

// Throws plumb::Error "--pattern: unknown pattern 'bisect' (did you mean 'bisection'?); expected
// one of bisection, shift".
void check_pattern(std::string_view name);

// Every rank's distinct partners over the whole schedule (index: rank).
std::vector<std::vector<int>> partners_of(const std::vector<LinkRound>& rounds, int ranks);

}  // namespace plumb::check
