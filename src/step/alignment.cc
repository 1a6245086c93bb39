#include "step/alignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "common/stats.h"
#include "step/classify.h"

namespace plumb::step {
namespace {

constexpr size_t kNoCall = std::numeric_limits<size_t>::max();
// Ranks out of line at an instance that are tried as the one with a call too many or too few;
// beyond this many the instance is a clock matter, not one rank's.
constexpr size_t kMaxSkipCandidates = 4;
constexpr size_t kDetailedNotes = 3;      // per group; one more note counts the rest
// A re-synchronisation needs at least this many instances of its window to line up under it, and
// more than half of those the window can judge (two calls or more): on a short trace one or two
// lucky instances must not set a clock offset (kineto-2ranks-of-128's alltoalls, 21-91 ms long,
// overlap 2 of 4 under a 62.8 ms offset that the same ranks' allreduces and allgathers belie).
constexpr size_t kMinResyncEvidence = 2;
constexpr size_t kOffsetsNamed = 4;  // ranks a re-synchronisation note names

using Offsets = std::vector<int64_t>;
using Position = std::vector<size_t>;  // per member: its call index, or kNoCall
using Cursor = std::vector<int64_t>;   // per member: index into its calls (< 0: not yet)

// How a window of instances fares under one way of lining them up.
struct Score {
  size_t lined_up = 0;  // instances of two calls or more that line up
  size_t judged = 0;    // instances of two calls or more

  // Enough to change how the rest of the trace is matched (kMinResyncEvidence).
  bool convincing() const { return lined_up >= kMinResyncEvidence && 2 * lined_up > judged; }
};

// A way past an instance that does not line up, scored by the instances after it.
enum class Resync { kKeep, kExtraCall, kMissingCall, kReclock };

struct Candidate {
  Resync kind = Resync::kKeep;
  size_t member = 0;
  Cursor next;  // where matching goes on
  Offsets offsets;
  Score score;
};

class Aligner {
 public:
  Aligner(const std::vector<RankTrace>& traces, const GroupSequence& group)
      : traces_(traces), group_(group), offsets_(group.traces.size(), 0) {}

  size_t members() const { return group_.traces.size(); }
  const Offsets& offsets() const { return offsets_; }
  void set_offsets(Offsets offsets) { offsets_ = std::move(offsets); }

  const CollectiveCall& call(size_t m, size_t c) const {
    return traces_[group_.traces[m]].calls[c];
  }
  int rank(size_t m) const { return traces_[group_.traces[m]].rank; }

  // Whether the calls are one instance: of one kind, overlapping in time on the common clock
  // (every rank is inside the collective when the last one arrives).
  bool lines_up(const Position& p, const Offsets& o) const {
    int64_t latest_start = std::numeric_limits<int64_t>::min();
    int64_t earliest_end = std::numeric_limits<int64_t>::max();
    std::optional<CollectiveKind> kind;
    for (size_t m = 0; m < p.size(); ++m) {
      if (p[m] == kNoCall) continue;
      const CollectiveCall& c = call(m, p[m]);
      if (kind && *kind != c.kind) return false;
      kind = c.kind;
      latest_start = std::max(latest_start, c.start_ns - o[m]);
      earliest_end = std::min(earliest_end, c.end_ns - o[m]);
    }
    return latest_start <= earliest_end;
  }

  // How many instances of the window line up; one call alone says nothing.
  Score score(const std::vector<Position>& window, const Offsets& o) const {
    Score out;
    for (const Position& p : window) {
      if (std::count(p.begin(), p.end(), kNoCall) + 2 > static_cast<std::ptrdiff_t>(p.size())) {
        continue;
      }
      ++out.judged;
      if (lines_up(p, o)) ++out.lined_up;
    }
    return out;
  }

  // Each member's offset: the median over the window of how far its call ends from the median
  // end of the instance (a collective ends at nearly the same moment on every rank); members the
  // window does not hold keep theirs.
  Offsets estimate(const std::vector<Position>& window) const {
    std::vector<std::vector<int64_t>> diffs(members());
    for (const Position& p : window) {
      std::vector<int64_t> ends;
      for (size_t m = 0; m < p.size(); ++m) {
        if (p[m] != kNoCall) ends.push_back(call(m, p[m]).end_ns);
      }
      if (ends.size() < 2) continue;
      const int64_t median = lower_median(ends);
      for (size_t m = 0; m < p.size(); ++m) {
        if (p[m] != kNoCall) diffs[m].push_back(call(m, p[m]).end_ns - median);
      }
    }
    Offsets out = offsets_;
    for (size_t m = 0; m < members(); ++m) {
      if (!diffs[m].empty()) out[m] = lower_median(diffs[m]);
    }
    return out;
  }

  // Members whose call does not cover the moment most of the position's calls cover.
  std::vector<size_t> outliers(const Position& p) const {
    std::vector<std::pair<int64_t, int>> edges;  // (time, +1 start / −1 end), starts first
    for (size_t m = 0; m < p.size(); ++m) {
      if (p[m] == kNoCall) continue;
      edges.emplace_back(call(m, p[m]).start_ns - offsets_[m], -1);
      edges.emplace_back(call(m, p[m]).end_ns - offsets_[m], 1);
    }
    std::sort(edges.begin(), edges.end());
    int covering = 0;
    int most = 0;
    int64_t moment = 0;
    for (const auto& [time, edge] : edges) {
      covering -= edge;
      if (covering > most) {
        most = covering;
        moment = time;
      }
    }
    std::vector<size_t> out;
    for (size_t m = 0; m < p.size(); ++m) {
      if (p[m] == kNoCall) continue;
      const CollectiveCall& c = call(m, p[m]);
      if (c.start_ns - offsets_[m] > moment || c.end_ns - offsets_[m] < moment) out.push_back(m);
    }
    return out;
  }

  void emit(const Position& p, Alignment& out) const {
    std::vector<AlignedCall> calls;
    for (size_t m = 0; m < p.size(); ++m) {
      if (p[m] != kNoCall) calls.push_back({group_.traces[m], p[m], offsets_[m]});
    }
    if (calls.empty()) return;
    (calls.size() == members() ? out.counts.matched : out.counts.partial) += 1;
    out.instances.push_back(std::move(calls));
  }

  // "instance 57 (step 12)" or, matching by sequence number, "seq 56 (step 12)": where a note's
  // instance is.
  std::string where(size_t number, const Position& p, bool by_seq = false) const {
    for (size_t m = 0; m < p.size(); ++m) {
      if (p[m] == kNoCall) continue;
      const CollectiveCall& c = call(m, p[m]);
      const int64_t step = step_at(traces_[group_.traces[m]], c.start_ns);
      if (by_seq) return fmt::format("seq {} (step {})", c.seq, step);
      return fmt::format("instance {} (step {})", number, step);
    }
    return fmt::format("instance {}", number);
  }

  // "rank 3 outside the others' time": why a position does not line up.
  std::string out_of_line(const Position& p) const {
    const std::vector<size_t> odd = outliers(p);
    if (odd.empty()) return "the calls differ in kind";
    std::string list;
    for (size_t m : odd) list += fmt::format("{}{}", list.empty() ? "" : ", ", rank(m));
    return fmt::format("rank{} {} outside the others' time", odd.size() == 1 ? "" : "s", list);
  }

  // "rank 3 +1520.000 µs, rank 5 −2.500 µs": the offsets that changed most.
  std::string offsets_named(const Offsets& before, const Offsets& after) const {
    std::vector<size_t> changed;
    for (size_t m = 0; m < members(); ++m) {
      if (after[m] != before[m]) changed.push_back(m);
    }
    std::stable_sort(changed.begin(), changed.end(), [&](size_t a, size_t b) {
      return std::llabs(after[a] - before[a]) > std::llabs(after[b] - before[b]);
    });
    std::string out;
    for (size_t i = 0; i < changed.size() && i < kOffsetsNamed; ++i) {
      out += fmt::format("{}rank {} {:+.3f} µs", out.empty() ? "" : ", ", rank(changed[i]),
                         static_cast<double>(after[changed[i]]) / kNsPerUs);
    }
    if (changed.size() > kOffsetsNamed) {
      out += fmt::format(", {} more", changed.size() - kOffsetsNamed);
    }
    return out;
  }

  void note(std::string text, Alignment& out) {
    if (++noted_ <= kDetailedNotes) out.notes.push_back(group_.label + ": " + std::move(text));
  }

  void finish(Alignment& out) const {
    if (noted_ > kDetailedNotes) {
      out.notes.push_back(fmt::format(
          "{}: {} more instance(s) did not line up or were re-synchronised (the first {} are "
          "noted above)",
          group_.label, noted_ - kDetailedNotes, kDetailedNotes));
    }
  }

 private:
  const std::vector<RankTrace>& traces_;
  const GroupSequence& group_;
  Offsets offsets_;
  size_t noted_ = 0;
};

// ---- by issue order ----

class OrderMatcher {
 public:
  OrderMatcher(const std::vector<RankTrace>& traces, const GroupSequence& group)
      : group_(group), aligner_(traces, group) {}

  Alignment run(std::vector<size_t> leading) {
    const std::vector<size_t> none(leading.size(), 0);
    if (leading != none) {
      const Score clocks = start_score(none, true);
      if (clocks.convincing() && clocks.lined_up > start_score(leading, false).lined_up) {
        leading = none;
      }
    }
    for (size_t l : leading) out_.leading += l;
    Cursor cur = start(leading);
    while (!exhausted(cur)) {
      const Position p = at(cur);
      if (aligner_.lines_up(p, aligner_.offsets())) {
        aligner_.emit(p, out_);
        cur = advanced(cur);
      } else {
        cur = resync(cur, p);
      }
      ++number_;
    }
    aligner_.finish(out_);
    return std::move(out_);
  }

 private:
  // The first instance every member recorded at position max(leading), each member's leading
  // calls before it.
  static Cursor start(const std::vector<size_t>& leading) {
    const size_t most = *std::max_element(leading.begin(), leading.end());
    Cursor cur(leading.size());
    for (size_t m = 0; m < cur.size(); ++m) {
      cur[m] = static_cast<int64_t>(leading[m]) - static_cast<int64_t>(most);
    }
    return cur;
  }

  // How many of the first instances line up from `leading`, under offsets estimated from them
  // (`reclock`) or the clocks as recorded.
  Score start_score(const std::vector<size_t>& leading, bool reclock) const {
    const std::vector<Position> first = window(start(leading));
    return aligner_.score(first, reclock ? aligner_.estimate(first) : aligner_.offsets());
  }

  bool exhausted(const Cursor& cur) const {
    for (size_t m = 0; m < cur.size(); ++m) {
      if (cur[m] < static_cast<int64_t>(group_.calls[m].size())) return false;
    }
    return true;
  }

  Position at(const Cursor& cur) const {
    Position p(cur.size(), kNoCall);
    for (size_t m = 0; m < cur.size(); ++m) {
      if (cur[m] >= 0 && cur[m] < static_cast<int64_t>(group_.calls[m].size())) {
        p[m] = group_.calls[m][static_cast<size_t>(cur[m])];
      }
    }
    return p;
  }

  static Cursor advanced(Cursor cur) {
    for (int64_t& c : cur) ++c;
    return cur;
  }

  std::vector<Position> window(Cursor cur) const {
    std::vector<Position> out;
    for (; out.size() < kResyncWindow && !exhausted(cur); cur = advanced(cur)) {
      out.push_back(at(cur));
    }
    return out;
  }

  Candidate candidate(Resync kind, size_t member, Cursor next, const Offsets& offsets) const {
    const Score score = aligner_.score(window(next), offsets);
    return {kind, member, std::move(next), offsets, score};
  }

  // The candidates in order of preference; of those convincing (and keeping the clocks), the
  // first with the most instances lined up is taken.
  std::vector<Candidate> candidates(const Cursor& cur, const Position& p) const {
    const Cursor next = advanced(cur);
    const Offsets& offsets = aligner_.offsets();
    std::vector<Candidate> out{candidate(Resync::kKeep, 0, next, offsets)};
    const std::vector<size_t> odd = aligner_.outliers(p);
    for (size_t i = 0; i < odd.size() && i < kMaxSkipCandidates; ++i) {
      Cursor extra = cur;
      ++extra[odd[i]];
      out.push_back(candidate(Resync::kExtraCall, odd[i], std::move(extra), offsets));
      Cursor missing = next;
      --missing[odd[i]];
      out.push_back(candidate(Resync::kMissingCall, odd[i], std::move(missing), offsets));
    }
    out.push_back(candidate(Resync::kReclock, 0, next, aligner_.estimate(window(next))));
    return out;
  }

  Cursor resync(const Cursor& cur, const Position& p) {
    const std::vector<Candidate> all = candidates(cur, p);
    const Candidate* best = &all.front();
    for (const Candidate& c : all) {
      if (c.score.convincing() && c.score.lined_up > best->score.lined_up) best = &c;
    }
    return apply(*best, p);
  }

  Cursor apply(const Candidate& best, const Position& p) {
    const std::string where = aligner_.where(number_ + 1, p);
    if (best.kind == Resync::kKeep) {
      out_.counts.unaligned += 1;
      aligner_.note(fmt::format("{} does not line up across the ranks ({}): left out of skew "
                                "and stragglers; matching goes on",
                                where, aligner_.out_of_line(p)),
                    out_);
      return best.next;
    }
    out_.counts.resyncs += 1;
    if (best.kind == Resync::kExtraCall) {
      out_.counts.unaligned += 1;
      aligner_.note(fmt::format("rank {}'s call at {} has no counterpart on the other ranks "
                                "(missing from their traces?): left out; matching goes on",
                                aligner_.rank(best.member), where),
                    out_);
      --number_;  // the instance is formed again without that call
      return best.next;
    }
    Position kept = p;
    if (best.kind == Resync::kMissingCall) {
      kept[best.member] = kNoCall;
      aligner_.note(fmt::format("{} is missing from rank {}'s trace: matched among the other "
                                "ranks; matching goes on",
                                where, aligner_.rank(best.member)),
                    out_);
    } else {
      aligner_.note(fmt::format("from {} on, the ranks' clocks differ by more than the calls "
                                "overlap: clock offsets re-estimated from the next instances' "
                                "ends ({}); matching goes on",
                                where, aligner_.offsets_named(aligner_.offsets(), best.offsets)),
                    out_);
      aligner_.set_offsets(best.offsets);
    }
    if (aligner_.lines_up(kept, aligner_.offsets())) {
      aligner_.emit(kept, out_);
    } else {
      out_.counts.unaligned += 1;
    }
    return best.next;
  }

  const GroupSequence& group_;
  Aligner aligner_;
  Alignment out_;
  size_t number_ = 0;  // instances formed so far
};

// ---- by sequence number ----

std::vector<Position> positions_by_seq(const std::vector<RankTrace>& traces,
                                       const GroupSequence& group) {
  std::map<std::pair<int64_t, size_t>, Position> by_key;  // (seq, occurrence) → calls
  for (size_t m = 0; m < group.traces.size(); ++m) {
    std::map<int64_t, size_t> seen;
    for (size_t c : group.calls[m]) {
      const int64_t seq = traces[group.traces[m]].calls[c].seq;
      auto [it, added] = by_key.try_emplace({seq, seen[seq]++}, group.traces.size(), kNoCall);
      it->second[m] = c;
    }
  }
  std::vector<Position> out;
  out.reserve(by_key.size());
  for (auto& entry : by_key) out.push_back(std::move(entry.second));
  return out;
}

}  // namespace

int64_t step_at(const RankTrace& trace, int64_t t) {
  int64_t step = trace.steps.empty() ? -1 : trace.steps.front().step;
  for (const StepSpan& span : trace.steps) {
    if (span.start_ns > t) break;
    step = span.step;
  }
  return step;
}

Alignment align_by_order(const std::vector<RankTrace>& traces, const GroupSequence& group,
                         const std::vector<size_t>& leading) {
  if (group.traces.empty()) return {};
  return OrderMatcher(traces, group).run(leading);
}

Alignment align_by_seq(const std::vector<RankTrace>& traces, const GroupSequence& group) {
  Alignment out;
  Aligner aligner(traces, group);
  const std::vector<Position> positions = positions_by_seq(traces, group);
  for (size_t i = 0; i < positions.size(); ++i) {
    const Position& p = positions[i];
    if (aligner.lines_up(p, aligner.offsets())) {
      aligner.emit(p, out);
      continue;
    }
    const auto first = positions.begin() + static_cast<std::ptrdiff_t>(i + 1);
    const size_t size = std::min(kResyncWindow, positions.size() - i - 1);
    const std::vector<Position> window(first, first + static_cast<std::ptrdiff_t>(size));
    const Offsets estimated = aligner.estimate(window);
    const std::string where = aligner.where(i + 1, p, true);
    const Score evidence = aligner.score(window, estimated);
    if (evidence.convincing() &&
        evidence.lined_up > aligner.score(window, aligner.offsets()).lined_up) {
      out.counts.resyncs += 1;
      aligner.note(fmt::format("from {} on, the ranks' clocks differ by more than the calls "
                               "overlap: clock offsets re-estimated from the next instances' "
                               "ends ({}); matching goes on",
                               where, aligner.offsets_named(aligner.offsets(), estimated)),
                   out);
      aligner.set_offsets(estimated);
      if (aligner.lines_up(p, estimated)) {
        aligner.emit(p, out);
        continue;
      }
    }
    out.counts.unaligned += 1;
    aligner.note(fmt::format("{} does not line up across the ranks ({}): left out of skew and "
                             "stragglers; matching goes on",
                             where, aligner.out_of_line(p)),
                 out);
  }
  aligner.finish(out);
  return out;
}

}  // namespace plumb::step
