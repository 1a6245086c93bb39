// `plumb diff`: what changed between two baselines, and whether a change is a regression, noise
// too large to judge it, or nothing.
//
// Results are compared per (layer, collective, dtype, requested size) on the slowest group of the
// layer (lowest busbw, highest p99): the group that gates a training step. A change is a
// regression when it is beyond the threshold and also beyond the spread the two runs showed
// themselves (see docs/diff.md for the noise model), and always when busbw fell to half or less:
// no noise estimate, and no threshold, can hide a 2× loss. A change beyond the threshold but
// within the noise is "too noisy to judge", with its own exit code. The context — topology,
// versions, settings — is compared too: a comparison explains a change only if exactly one
// variable differs. A record that is not valid (baseline/validity.h: wrong results, a failed
// check, a sweep that ended early) is never passed: B's wrong results fail the comparison, an
// incomplete A or B makes it bad input (docs/diff.md, "Records that are not valid"). An imported
// OSU log, which cannot say itself that it ended early, is incomplete beside a record that
// measured larger sizes of the same collective.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/store.h"
#include "baseline/validity.h"
#include "common/error.h"

namespace plumb::baseline {

inline constexpr const char* kDiffSchema = "plumb.diff/1";

// `plumb diff`'s exit status when no collective regressed but some changed beyond the threshold
// within the noise of the runs: the gate could not judge them (1 is a regression, 2 bad input).
inline constexpr int kTooNoisyExitCode = static_cast<int>(ExitCode::kTooNoisy);

// A busbw ratio B/A at or beyond this factor (≤ 1/2 or ≥ 2) is a regression (improvement)
// whatever the noise estimate says: the largest movement of an unchanged setup measured is 1.9×
// at one small size, 1.7× over a collective's sizes ≥ 1 MiB (docs/diff.md). Time is the same
// figure: busbw = bytes × bus factor / time, so a 2× time is a ÷2 busbw.
inline constexpr double kGrossFactor = 2.0;
// Relative slack on that bound, for figures rounded when written (a halving written to 3
// significant digits still counts).
inline constexpr double kGrossTolerance = 0.001;

struct DiffOptions {
  double threshold = 0.10;  // a relative change smaller than this is never a regression
  bool strict = false;      // a single size's regression fails the comparison too
  // How errors name the records ("file a.json", "baseline 3"); empty: from the record itself.
  std::string a_name{};
  std::string b_name{};
};

enum class Verdict {
  kSame,         // within the threshold
  kTooNoisy,     // beyond the threshold but within the runs' own spread, and less than 2×
  kRegression,   // slower beyond both, or busbw halved (or worse) whatever the noise and the
                 // threshold
  kImprovement,  // faster beyond both, or busbw doubled (or better) whatever the noise
  kOnlyInA,      // measured in A only
  kOnlyInB,      // measured in B only
};

std::string_view verdict_name(Verdict verdict);  // "same", "too noisy to judge", "regression", ...

struct RowDiff {
  std::string layer;
  std::string collective;
  std::string dtype;
  uint64_t bytes = 0;         // requested size
  double busbw_a = 0;         // GB/s of the slowest group; NaN when not measured
  double busbw_b = 0;
  double busbw_change = 0;    // (b − a) / a; NaN when either is missing
  double p99_a = 0;           // µs of the slowest group; NaN when unknown (imported logs)
  double p99_b = 0;
  double p99_change = 0;      // (b − a) / a; NaN when either is missing
  double noise = 0;           // kNoiseSigmas × the standard deviation of the change the two
                              // runs' own spreads imply
  Verdict verdict = Verdict::kSame;
};

// One difference in the context of the two runs.
struct VariableDiff {
  std::string kind;  // "topology", "version" or "setting"
  std::string name;  // e.g. "nccl", "NCCL_ALGO", "hosts", "ranks"
  std::string a;     // "(absent)" when the run does not have it
  std::string b;
};

// One (layer, collective, dtype) over the sizes ≥ 1 MiB both runs measured (the sizes the summary
// averages; all the sizes both measured when none is that large): a change that every size shows
// is a regression even when each size alone is within its noise, because the noise of a mean of
// n independent sizes is 1/√n of theirs.
struct GroupDiff {
  std::string layer;
  std::string collective;
  std::string dtype;
  uint64_t min_bytes = 0;     // the smallest size averaged (1 MiB unless none is that large)
  int sizes = 0;              // sizes ≥ min_bytes in both runs
  double change = 0;          // mean of the sizes' busbw changes; NaN when sizes == 0
  double noise = 0;           // kNoiseSigmas × the standard deviation of that mean
  int halved = 0;             // sizes ≥ 1 MiB whose busbw fell to half or less: each makes the
                              // group a regression whatever its mean and noise
  Verdict verdict = Verdict::kSame;
};

// How many standard deviations a change must exceed to be more than noise.
inline constexpr double kNoiseSigmas = 3.5;

struct RecordRef {
  int64_t id = 0;  // 0 when read from a JSON file
  std::string label;
  std::string created;
  std::string source;
  // Rounds its figures were measured in: 0 imported (no spread), 1 one round (σ from the
  // iterations' spread), more: σ from the rounds' spread (for imports: the logs it was made of).
  int rounds = 0;
  bool imported = false;  // made by plumb import from another tool's logs
  std::string name{};     // how messages name it: "file a.json", "baseline 3"
  ValiditySummary validity{};
};

// What the comparison comes to, in the order it is decided: the first that applies.
enum class Outcome {
  kWrongResults,   // B has wrong results: exit 1, whatever its speed
  kFailedCheck,    // B failed a check of its own tool: exit 1
  kRegression,     // exit 1
  kIncomplete,     // A's or B's sweep ended early: exit 2, the sizes not reached cannot be judged
  kBadReference,   // A has wrong results or a failed check: exit 2, it is no reference
  kTooNoisy,       // exit kTooNoisyExitCode
  kNoRegression,   // exit 0
};

struct Diff {
  RecordRef a;
  RecordRef b;
  double threshold = 0;
  bool strict = false;
  std::vector<RowDiff> rows;           // ordered by layer, collective, dtype, size
  std::vector<GroupDiff> groups;       // ordered by layer, collective, dtype
  std::vector<VariableDiff> variables; // every context difference
  std::vector<std::string> unrecorded;  // context parts a record holds none of (context_diff.h)
  std::vector<comm::Summary> summary_a;  // each record's average busbw (comm::summarize)
  std::vector<comm::Summary> summary_b;
  // What makes `plumb diff` exit 1: groups with Verdict::kRegression, and with `strict` rows too.
  // Single sizes alone do not by default: on shared machines one size of an unchanged setup can
  // move 2× between runs minutes apart (docs/diff.md), while a link that got slower shows at
  // every bandwidth-bound size.
  int regressions() const;
  int row_regressions() const;  // rows with Verdict::kRegression
  // Groups with Verdict::kTooNoisy, and with `strict` rows too.
  int too_noisy() const;
  Outcome outcome() const;
  // What `plumb diff` (and `plumb baseline --compare`) exits with, by outcome(): 1 when B has
  // wrong results, failed a check or regressed; 2 when A or B is incomplete or A is no reference;
  // kTooNoisyExitCode when something could not be judged; else 0.
  int exit_code() const;
  // Empty unless too_noisy(): what would make the runs judgeable, in the terms of the records'
  // kind — rounds for plumb's own runs, several logs of the same test for imported ones — with
  // how many would bring the worst noise under its change.
  std::string too_noisy_advice() const;
  // Empty when at most one variable differs; otherwise a sentence naming them and saying the
  // change cannot be attributed to one of them.
  std::string attribution_warning() const;
};

// Throws plumb::Error (exit 2) when A or B measured nothing, or when they share no (layer,
// collective, dtype, size): there is nothing to judge, and "no regression" would be a lie.
Diff diff(const Record& a, const Record& b, const DiffOptions& options = {});

// plumb.diff/1
nlohmann::json diff_json(const Diff& diff);

// The rules above, for other comparisons (the step records' diff, step_diff.h) to judge by the
// same verdicts rather than copies of them. `change` is (B − A) / A:
// of a figure where more is better (busbw): a fall beyond the threshold and the noise, or to half
// or less, is a regression;
Verdict judge_change(double change, double noise, double threshold);
// of a time, where more is worse: a rise beyond the threshold and the noise, or to twice or more
// (the ÷2 of the rate it is), is a regression.
Verdict judge_time_change(double change, double noise, double threshold);
// The standard deviation of the median of `samples` values per unit of their median absolute
// deviation (docs/diff.md, "The noise model"): 1 up to 3 samples, ≈ 1.858 / √samples beyond.
double median_sigma_per_mad_of(int samples);

// What a comparison's messages call a record: the name given, else "baseline <id>", else its
// source.
std::string name_of(const Record& r, const std::string& given);

// The record's reference without a name or validity (the step and recovery diffs).
RecordRef ref_of(const Record& r);

// The reference's id, label, created and source as JSON.
nlohmann::json ref_json(const RecordRef& r);

// A figure of a diff's JSON: null where unknown (NaN).
nlohmann::json number_or_null(double v);

// A text of a diff's JSON: null where empty.
nlohmann::json text_or_null(const std::string& t);

// A relative change as "+12.3%".
std::string percent(double change);

}  // namespace plumb::baseline
