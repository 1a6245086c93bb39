#include "check/links_analysis.h"

#include <gtest/gtest.h>

#include <functional>

#include "check/links_report.h"

namespace plumb::check {
namespace {

using BusbwFn = std::function<double(int round, int a, int b)>;

// The bisection schedule of `ranks` measured with `busbw`; every pair on one layer, p99 10 us.
std::vector<PairResult> measured(int ranks, const BusbwFn& busbw, const std::string& layer = "node") {
  std::vector<PairResult> pairs;
  const auto rounds = bisection_schedule(ranks);
  for (size_t i = 0; i < rounds.size(); ++i) {
    for (const RankPair& p : rounds[i].pairs) {
      PairResult r;
      r.round = static_cast<int>(i);
      r.ranks = p;
      r.layer = layer;
      r.busbw_gbps = busbw(static_cast<int>(i), p.a, p.b);
      r.p99_us = 10.0;
      pairs.push_back(r);
    }
  }
  return pairs;
}

// A healthy fleet's few per cent of noise, the same for every run of the test.
double healthy(int round, int a, int b) { return 40.0 + ((a * 7 + b * 3 + round) % 5) * 0.4; }

TEST(LinksAnalysis, AHealthyFleetHasNoSuspect) {
  const LinksAnalysis a = analyze_links(measured(16, healthy), {});
  EXPECT_TRUE(a.suspects.empty());
  ASSERT_EQ(a.layers.size(), 1u);
  EXPECT_EQ(a.layers[0].name, "node");
  EXPECT_EQ(a.layers[0].pairs, 32);
  EXPECT_NEAR(a.layers[0].median_busbw_gbps, 40.8, 0.41);
  EXPECT_EQ(links_status(a), Status::kOk);
}

TEST(LinksAnalysis, ARankSlowWithEveryPartnerIsANode) {
  const LinksAnalysis a = analyze_links(measured(8, [](int round, int x, int y) {
    return x == 3 || y == 3 ? 12.0 : healthy(round, x, y);
  }), {});
  ASSERT_EQ(a.suspects.size(), 1u);
  const Suspect& s = a.suspects[0];
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.kind, "node");
  EXPECT_EQ(s.layer, "node");
  EXPECT_EQ(s.partners, (std::vector<int>{1, 2, 7}));
  EXPECT_NEAR(s.ratio, 0.3, 0.02);
  EXPECT_EQ(links_status(a), Status::kCritical);
}

// A throttled node that looked fine in one measurement (on a loaded host, its partner's slot
// lined up with its own) is still a node: slow with two partners of three.
TEST(LinksAnalysis, SlowWithMostPartnersIsANode) {
  const LinksAnalysis a = analyze_links(measured(8, [](int round, int x, int y) {
    return (x == 3 || y == 3) && round != 0 ? 4.0 : healthy(round, x, y);
  }), {});
  ASSERT_EQ(a.suspects.size(), 1u);
  EXPECT_EQ(a.suspects[0].rank, 3);
  EXPECT_EQ(a.suspects[0].kind, "node");
  EXPECT_EQ(a.suspects[0].partners, (std::vector<int>{1, 7}));
  EXPECT_NEAR(a.suspects[0].ratio, 0.1, 0.01);  // the median of all its pairs
}

// Slow with one partner of three: the two slow links of rank 3 are links, not a node.
TEST(LinksAnalysis, SlowWithOnePartnerIsALinkNotANode) {
  const LinksAnalysis a = analyze_links(measured(8, [](int round, int x, int y) {
    return (x == 3 && y == 7) || (x == 0 && y == 4) ? 4.0 : healthy(round, x, y);
  }), {});
  ASSERT_EQ(a.suspects.size(), 2u);
  EXPECT_EQ(a.suspects[0].kind, "link");
  EXPECT_EQ(a.suspects[0].rank, 0);
  EXPECT_EQ(a.suspects[1].kind, "link");
  EXPECT_EQ(a.suspects[1].rank, 3);
  EXPECT_EQ(a.suspects[1].partners, (std::vector<int>{7}));
}

TEST(LinksAnalysis, APairSlowOnlyTogetherIsALink) {
  const LinksAnalysis a = analyze_links(measured(8, [](int round, int x, int y) {
    return x == 2 && y == 6 ? 20.0 : healthy(round, x, y);
  }), {});
  ASSERT_EQ(a.suspects.size(), 1u);
  EXPECT_EQ(a.suspects[0].rank, 2);
  EXPECT_EQ(a.suspects[0].kind, "link");
  EXPECT_EQ(a.suspects[0].partners, (std::vector<int>{6}));
  EXPECT_NEAR(a.suspects[0].ratio, 0.5, 0.03);
  EXPECT_EQ(links_status(a), Status::kWarning);
}

TEST(LinksAnalysis, ASlowNodeAndASlowLinkAreBothNamed) {
  const LinksAnalysis a = analyze_links(measured(16, [](int round, int x, int y) {
    if (x == 5 || y == 5) return 8.0;
    if (x == 8 && y == 12) return 16.0;
    return healthy(round, x, y);
  }), {});
  ASSERT_EQ(a.suspects.size(), 2u);
  EXPECT_EQ(a.suspects[0].rank, 5);
  EXPECT_EQ(a.suspects[0].kind, "node");
  EXPECT_EQ(a.suspects[0].partners, (std::vector<int>{1, 4, 7, 13}));
  EXPECT_EQ(a.suspects[1].rank, 8);
  EXPECT_EQ(a.suspects[1].kind, "link");
  EXPECT_EQ(a.suspects[1].partners, (std::vector<int>{12}));
}

// Each pair is judged against its own layer: intra-node pairs ten times faster than the spine's
// make no spine pair slow.
TEST(LinksAnalysis, EachLayerHasItsOwnReference) {
  std::vector<PairResult> pairs = measured(8, [](int round, int x, int y) {
    return round == 0 ? 400.0 + x : healthy(round, x, y);
  });
  for (PairResult& p : pairs) p.layer = p.round == 0 ? "node" : "spine";
  const LinksAnalysis a = analyze_links(pairs, {});
  EXPECT_TRUE(a.suspects.empty());
  ASSERT_EQ(a.layers.size(), 2u);
  EXPECT_EQ(a.layers[1].name, "spine");
  EXPECT_EQ(a.layers[1].pairs, 8);
}

// A round slower as a whole (a congested moment) names nobody: pairs are compared with their
// own round.
TEST(LinksAnalysis, ARoundSlowAsAWholeNamesNobody) {
  const LinksAnalysis a = analyze_links(measured(8, [](int round, int x, int y) {
    return round == 2 ? healthy(round, x, y) / 3 : healthy(round, x, y);
  }), {});
  EXPECT_TRUE(a.suspects.empty());
}

// A fleet whose own noise spans the threshold: a pair at 0.75 of the median is within it.
TEST(LinksAnalysis, TheMadGuardKeepsANoisyFleetQuiet) {
  const auto noisy = [](int /*round*/, int x, int y) { return 10.0 + ((x * 5 + y) % 9) * 1.5; };
  const LinksAnalysis a = analyze_links(measured(16, noisy), {});
  EXPECT_TRUE(a.suspects.empty());
  EXPECT_GT(a.layers[0].mad_log_ratio, 0.1);
  // Without the guard the same numbers name pairs.
  EXPECT_FALSE(analyze_links(measured(16, noisy), {0.8, 0.0, 0.0}).suspects.empty());
}

TEST(LinksAnalysis, ATailBeyondTheP99ThresholdIsSlow) {
  std::vector<PairResult> pairs = measured(8, healthy);
  for (PairResult& p : pairs) {
    if (p.ranks.a == 1 && p.ranks.b == 5) p.p99_us = 80.0;
  }
  EXPECT_TRUE(analyze_links(pairs, {}).suspects.empty());  // p99 not judged by default
  const LinksAnalysis a = analyze_links(pairs, {0.8, 3.0, 4.0});
  ASSERT_EQ(a.suspects.size(), 1u);
  EXPECT_EQ(a.suspects[0].kind, "link");
  EXPECT_EQ(a.suspects[0].rank, 1);
  EXPECT_DOUBLE_EQ(a.suspects[0].p99_ratio, 8.0);
}

// A rank with one partner only (two ranks) cannot be told from its link.
TEST(LinksAnalysis, OnePartnerOnlyIsALink) {
  std::vector<PairResult> pairs = measured(16, healthy);
  pairs.push_back({9, {0, 1}, "rail", 5.0, 10.0, {}, 0, 0, false});
  pairs.push_back({9, {2, 3}, "rail", 40.0, 10.0, {}, 0, 0, false});
  pairs.push_back({9, {4, 5}, "rail", 40.0, 10.0, {}, 0, 0, false});
  const LinksAnalysis a = analyze_links(pairs, {});
  ASSERT_EQ(a.suspects.size(), 1u);
  EXPECT_EQ(a.suspects[0].kind, "link");
  EXPECT_EQ(a.suspects[0].layer, "rail");
}

TEST(LinksAnalysis, MedianAndMad) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(mad_of({1, 2, 3, 4, 100}), 1.0);
}

TEST(LinksReport, JsonHoldsSuspectsLayersAndRounds) {
  LinksReport r;
  r.created = "2026-12-07T00:00:00Z";
  r.backend = "mpi";
  r.hosts = {"n0", "n0", "n1", "n1", "n2", "n2", "n3", "n3"};
  r.pattern = "bisection";
  r.rounds = bisection_schedule(8);
  r.analysis = analyze_links(measured(8, [](int round, int x, int y) {
    return x == 3 || y == 3 ? 12.0 : healthy(round, x, y);
  }), {});
  const nlohmann::json j = links_json(r);
  EXPECT_EQ(j["schema"], "plumb.check-links/1");
  EXPECT_EQ(j["status"], "critical");
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["settings"]["threshold"], 0.8);
  ASSERT_EQ(j["suspects"].size(), 1u);
  const nlohmann::json& s = j["suspects"][0];
  EXPECT_EQ(s["rank"], 3);
  EXPECT_EQ(s["host"], "n1");
  EXPECT_EQ(s["kind"], "node");
  EXPECT_EQ(s["layer"], "node");
  EXPECT_EQ(s["partners"], nlohmann::json({1, 2, 7}));
  EXPECT_NEAR(s["ratio"].get<double>(), 0.3, 0.02);
  ASSERT_EQ(j["rounds"].size(), 3u);
  EXPECT_EQ(j["rounds"][2]["name"], "xor 4");
  ASSERT_EQ(j["rounds"][2]["pairs"].size(), 4u);
  const nlohmann::json& p = j["rounds"][2]["pairs"][3];
  EXPECT_EQ(p["ranks"], nlohmann::json({3, 7}));
  EXPECT_EQ(p["hosts"], nlohmann::json({"n1", "n3"}));
  EXPECT_TRUE(p["slow"].get<bool>());
  EXPECT_EQ(j["layers"][0]["pairs"], 12);

  std::ostringstream console;
  print_links_console(r, console);
  EXPECT_NE(console.str().find("  SUSPECT rank 3 (n1): node, slow with partners 1 (n0), 2 (n1), "
                               "7 (n3), busbw 0.29 of the median"),
            std::string::npos)
      << console.str();
  EXPECT_NE(console.str().find("CHECK LINKS CRITICAL - 1 node suspect(s): rank 3 (n1)\n"),
            std::string::npos)
      << console.str();
}

}  // namespace
}  // namespace plumb::check
