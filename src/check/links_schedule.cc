#include "check/links_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/error.h"
#include "common/strings.h"

namespace plumb::check {
namespace {

constexpr std::string_view kPatterns[] = {"bisection", "shift"};

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

RankPair ordered(int x, int y) { return {std::min(x, y), std::max(x, y)}; }

struct Met {
  std::vector<std::set<int>> partners;
  explicit Met(int ranks) : partners(static_cast<size_t>(ranks)) {}
  bool met(int x, int y) const { return partners[static_cast<size_t>(x)].contains(y); }
  size_t count(int x) const { return partners[static_cast<size_t>(x)].size(); }
  void add(const LinkRound& round) {
    for (const RankPair& p : round.pairs) {
      partners[static_cast<size_t>(p.a)].insert(p.b);
      partners[static_cast<size_t>(p.b)].insert(p.a);
    }
  }
};

// Pairs the `free` ranks among themselves: each with the first free rank it has not met, else
// with the first free rank. One is left out when their count is odd.
void pair_free(std::vector<int> free, const Met& met, LinkRound& round) {
  while (free.size() >= 2) {
    const int x = free.front();
    free.erase(free.begin());
    auto y = std::find_if(free.begin(), free.end(), [&](int c) { return !met.met(x, c); });
    if (y == free.end()) y = free.begin();
    round.pairs.push_back(ordered(x, *y));
    free.erase(y);
  }
}

LinkRound xor_round(int ranks, int bit, const Met& met) {
  LinkRound round{fmt::format("xor {}", 1 << bit), {}};
  std::vector<int> free;
  for (int r = 0; r < ranks; ++r) {
    const int partner = r ^ (1 << bit);
    if (partner >= ranks) {
      free.push_back(r);
    } else if (r < partner) {
      round.pairs.push_back({r, partner});
    }
  }
  pair_free(std::move(free), met, round);
  return round;
}

// A round for the ranks short of partners: those with the fewest first, each with a rank it has
// not met.
LinkRound extra_round(int ranks, const Met& met, int index) {
  std::vector<int> order(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) order[static_cast<size_t>(r)] = r;
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return met.count(x) < met.count(y); });
  LinkRound round{fmt::format("extra {}", index), {}};
  pair_free(std::move(order), met, round);
  return round;
}

bool short_of_partners(int ranks, const Met& met, size_t wanted) {
  for (int r = 0; r < ranks; ++r) {
    if (met.count(r) < wanted) return true;
  }
  return false;
}

void sort_pairs(LinkRound& round) {
  std::sort(round.pairs.begin(), round.pairs.end(),
            [](const RankPair& x, const RankPair& y) { return x.a < y.a; });
}

}  // namespace

std::vector<LinkRound> bisection_schedule(int ranks) {
  std::vector<LinkRound> rounds;
  if (ranks < 2) return rounds;
  Met met(ranks);
  const int bits = ceil_log2(ranks);
  for (int bit = 0; bit < bits; ++bit) {
    rounds.push_back(xor_round(ranks, bit, met));
    met.add(rounds.back());
  }
  const auto wanted = static_cast<size_t>(std::min(ranks - 1, bits));
  // A greedy matching gives the ranks shortest of partners a new one each: at most `bits` more.
  for (int extra = 1; extra <= bits && short_of_partners(ranks, met, wanted); ++extra) {
    rounds.push_back(extra_round(ranks, met, extra));
    met.add(rounds.back());
  }
  for (LinkRound& round : rounds) sort_pairs(round);
  return rounds;
}

std::vector<LinkRound> shift_schedule(int ranks, std::span<const int> shifts) {
  std::vector<LinkRound> rounds;
  for (const int s : shifts) {
    if (s < 1 || s >= ranks) {
      throw Error(fmt::format("--shifts: each shift must be from 1 to {} (ranks − 1), got {}",
                              ranks - 1, s));
    }
    LinkRound parts[3] = {{fmt::format("shift {} (a)", s), {}},
                          {fmt::format("shift {} (b)", s), {}},
                          {fmt::format("shift {} (c)", s), {}}};
    std::vector<bool> seen(static_cast<size_t>(ranks), false);
    for (int start = 0; start < ranks; ++start) {
      if (seen[static_cast<size_t>(start)]) continue;
      std::vector<int> cycle;
      for (int r = start; !seen[static_cast<size_t>(r)]; r = (r + s) % ranks) {
        seen[static_cast<size_t>(r)] = true;
        cycle.push_back(r);
      }
      const size_t len = cycle.size();
      if (len == 2) {  // s = N/2: the cycle's two edges are one pair
        parts[0].pairs.push_back(ordered(cycle[0], cycle[1]));
        continue;
      }
      for (size_t i = 0; i < len; ++i) {
        const size_t part = (len % 2 == 1 && i == len - 1) ? 2 : i % 2;
        parts[part].pairs.push_back(ordered(cycle[i], cycle[(i + 1) % len]));
      }
    }
    for (LinkRound& part : parts) {
      if (part.pairs.empty()) continue;
      sort_pairs(part);
      rounds.push_back(std::move(part));
    }
  }
  return rounds;
}

std::vector<int> default_shifts(int ranks, int stride, int count) {
  std::vector<int> shifts;
  if (stride < 1 || stride >= ranks) stride = 1;
  for (int i = 1; i <= count; ++i) {
    const int s = i * stride;
    if (s > ranks / 2) break;
    shifts.push_back(s);
  }
  if (shifts.empty() && ranks >= 2) shifts.push_back(1);
  return shifts;
}

std::span<const std::string_view> link_patterns() { return kPatterns; }

void check_pattern(std::string_view name) {
  std::vector<std::string> names(std::begin(kPatterns), std::end(kPatterns));
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  throw Error(unknown_name("--pattern", "pattern", name, names));
}

std::vector<std::vector<int>> partners_of(const std::vector<LinkRound>& rounds, int ranks) {
  Met met(ranks);
  for (const LinkRound& round : rounds) met.add(round);
  std::vector<std::vector<int>> out;
  for (const std::set<int>& p : met.partners) out.emplace_back(p.begin(), p.end());
  return out;
}

}  // namespace plumb::check
