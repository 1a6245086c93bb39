// What a record says about its own results beyond their numbers: wrong results its tool counted,
// checks it failed, and a sweep that ended before the sizes it set out to measure (docs/import.md,
// "What plumb keeps of a run's own checks"). Importers fill it from the log (nccl-tests' `#wrong`,
// `# Out of bounds values` and `# Avg bus bandwidth` lines, its JSON's `nwrong`, `out_of_bounds`
// and `errors`, hccl_test's `check_result`, OSU's `Validation`), the store keeps it (schema 5) and
// plumb export writes it; plumb show and list mark the record, and plumb diff never passes it
// (docs/diff.md, "Records that are not valid").
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "comm/result.h"

namespace plumb::baseline {

enum class IssueKind {
  kWrongResults,  // the data a collective returned was wrong (a count, an out-of-bounds line)
  kFailedCheck,   // the tool reported a failure other than wrong data (a bandwidth check, an error)
  kIncomplete,    // the sweep ended before its planned sizes, or before the tool's end marker
};

// "wrong-results", "failed-check", "incomplete": the JSON spelling.
std::string_view issue_kind_name(IssueKind kind);

// One thing the source said, or plumb found, that makes a record's results doubtful.
struct Issue {
  IssueKind kind = IssueKind::kWrongResults;
  std::string where;  // "run.log:45", "run.json: out_of_bounds"; "" when not known
  std::string what;   // "nccl-tests says '# Out of bounds values : 30 FAILED'"
  // kIncomplete: where the sweep stopped; 0 when unknown.
  uint64_t last_bytes = 0;        // the last size measured
  uint64_t planned_bytes = 0;     // the last size the run's settings asked for
  std::vector<uint64_t> missing;  // the first kMissingKept sizes asked for and not measured
  uint64_t missing_count = 0;     // how many sizes were asked for and not measured
};

using Validity = std::vector<Issue>;

// The missing sizes kept (and named) per incomplete sweep; the count says how many there were.
inline constexpr size_t kMissingKept = 16;

// A sweep as nccl-tests and hccl_test step it: from min_bytes, ×factor (when factor > 1) or
// +step_bytes, while the size is at most max_bytes. Unknown (planned() false) when neither steps.
struct SweepPlan {
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  double factor = 0;
  uint64_t step_bytes = 0;

  bool planned() const { return max_bytes >= min_bytes && (factor > 1 || step_bytes > 0); }
  uint64_t size_count() const;      // how many sizes the plan has (planned() only)
  uint64_t size(uint64_t i) const;  // the i-th (i < size_count())
};

// An incomplete issue whose sweep measured `measured` sizes of `plan` (the last `last_bytes`):
// the planned end and the sizes not reached. `what` says why it is incomplete.
Issue incomplete_sweep(std::string where, std::string what, const SweepPlan& plan,
                       uint64_t measured, uint64_t last_bytes);

// "run.log:45: wrong results: nccl-tests says '…'"; an incomplete one adds its sweep: "…: the
// sweep ended at 4 MiB of 1 GiB; missing 8 MiB, 16 MiB, … (8 sizes)".
std::string issue_text(const Issue& issue);

// What a record's validity comes to: its issues, and its rows' wrong elements (plumb's own runs
// count them per row; an importer also says so in an issue naming the line).
struct ValiditySummary {
  bool wrong = false;       // wrong results: a row with wrong elements, or a kWrongResults issue
  bool failed = false;      // a kFailedCheck issue
  bool incomplete = false;  // a kIncomplete issue
  std::vector<std::string> marks;  // "WRONG RESULTS", "FAILED CHECK", "INCOMPLETE: sweep ended
                                   // at 4 MiB of 1 GiB": each that applies, in this order
  std::vector<std::string> lines;  // issue_text() of each issue, and of the rows' wrong elements
                                   // when no issue says so

  bool valid() const { return !wrong && !failed && !incomplete; }
};

// `wrong_rows`: the rows with wrong elements (plumb list counts them in the store).
ValiditySummary summarize_validity(const Validity& validity, int64_t wrong_rows);
ValiditySummary summarize_validity(const Validity& validity, const std::vector<comm::Row>& rows);

// The issues as JSON (a list of objects: kind, where, what; an incomplete one also last_bytes,
// planned_bytes, missing_bytes, missing_count), and back: every field checked, an Error naming
// `origin` and the path ("x.json: validity.issues[0].kind: expected one of wrong-results,
// failed-check, incomplete, got \"bad\"").
nlohmann::json validity_json(const Validity& validity);
Validity validity_from_json(const nlohmann::json& issues, const std::string& origin,
                            const std::string& path);

}  // namespace plumb::baseline
