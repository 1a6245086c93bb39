// plumb check links: from each pair's measurement to the suspects. Pure: the tests feed it
// synthetic pair results. docs/check.md, "Statistics" and "Verdicts".
#pragma once

#include <string>
#include <vector>

#include "check/links_schedule.h"

namespace plumb::check {

// One pair's measurement in one round (the median over its repetitions).
struct PairResult {
  int round = 0;          // index into the schedule
  RankPair ranks;
  std::string layer;      // "node", "rail" or "spine" (pair_layer)
  double busbw_gbps = 0;  // bidirectional sendrecv: bytes / mean time per operation
  double p99_us = 0;      // 99th percentile of the per-operation times
  std::vector<double> busbw_repeats;  // each repetition's busbw (busbw is their median)
  // Filled by analyze_links: against the reference of the pair's layer (reference_of).
  double ratio = 0;       // busbw / reference busbw
  double p99_ratio = 0;   // p99 / reference p99
  bool slow = false;
};

// The fleet's figures for one layer, over every round.
struct LayerStats {
  std::string name;
  int pairs = 0;
  double median_busbw_gbps = 0;
  double median_p99_us = 0;
  // The median absolute deviation of the pairs' ln(ratio) from their median: throughput noise is
  // multiplicative (a pair at half speed and one at double are equally far from the median).
  double mad_log_ratio = 0;
};

// A pair is compared with the pairs of its layer measured in the same round (at the same
// moment, under the same traffic) when the round holds at least this many of them, else with
// every pair of its layer.
inline constexpr int kMinPairsPerRoundReference = 3;

struct Suspect {
  int rank = 0;
  std::string kind;           // "node" or "link"
  std::string layer;          // link: the pair's layer; node: the layers of its pairs, joined by ","
  std::vector<int> partners;  // node: the partners it was slow with; link: the other rank
  double ratio = 0;           // node: the median of all its pairs' ratios; link: the pair's
  double p99_ratio = 0;
};

struct LinkThresholds {
  // A pair is slow when its busbw is below this share of its reference ...
  double busbw_ratio = 0.8;
  // ... and −ln(ratio) exceeds this many scaled MADs of the layer's ln(ratio) (1.4826·MAD
  // estimates σ of normally distributed values), so that a fleet whose own noise spans the
  // threshold does not name its noisiest pairs;
  double mad_factor = 3.0;
  // or when its p99 exceeds this multiple of the layer's median p99 (0: p99 not judged).
  double p99_ratio = 0;
};

struct LinksAnalysis {
  std::vector<LayerStats> layers;  // in order of first appearance
  std::vector<PairResult> pairs;   // the input with ratio, p99_ratio and slow filled
  std::vector<Suspect> suspects;   // nodes first (by rank), then links (by rank, partner)
};

// Median and median absolute deviation (the lower middle for an even count is not used: the
// mean of the two middle values, as percentile 50 does).
double median_of(std::vector<double> values);
double mad_of(const std::vector<double>& values);

// The rules (docs/check.md, "Verdicts"): each pair's reference is the median busbw (and
// p99) of its layer's pairs in its round (kMinPairsPerRoundReference) or in every round; a rank
// slow with more than half of its partners (two or more; with two: both) is a node suspect -- not
// "every partner", so that one lucky measurement of a throttled node does not hide it; a slow
// pair with neither rank a node suspect is a link suspect (a rank with one partner only cannot be
// told from its link, so its slow pair is named as a link).
LinksAnalysis analyze_links(std::vector<PairResult> pairs, const LinkThresholds& thresholds);

}  // namespace plumb::check
