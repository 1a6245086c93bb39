// What a stored record holds — comm measurements, a step record (plumb step --save) or a recovery
// baseline (plumb run --save) — in one table, so that plumb diff, plumb show and the commands that
// read comm measurements pick by kind instead of asking each holds_*().
#pragma once

#include <string>

#include "baseline/diff.h"
#include "baseline/store.h"

namespace plumb::baseline {

enum class RecordKind { kComm, kStep, kRecovery, kSet, kServe };

struct RecordKindInfo {
  RecordKind kind;
  const char* held;     // how messages say it: "a step record"; "" for comm
  const char* made_by;  // "plumb step"; "" for comm
  bool (*holds)(const Record&);
};

// A baseline set (holds_set) is a set whatever parts it holds; else a record holding a step or
// recovery record is of that kind; any other is comm.
RecordKind kind_of(const Record& record);
const RecordKindInfo& kind_info(RecordKind kind);

bool holds_recovery(const Record& record);
bool holds_serve(const Record& record);  // a plumb.serve/1 record (plumb serve --store)

// A baseline set (plumb baseline --workload): it holds a memory part or names a missing part, or
// its source says so. Its export writes all six parts (null when not taken) and "missing".
inline constexpr const char* kSetSource = "plumb baseline --workload";
bool holds_set(const Record& record);

// When the records are of different kinds: an Error (exit 2) naming both, e.g. "baseline 3 holds
// a step record, baseline 5 none: plumb diff compares records of the same kind" or "baseline 6
// holds a recovery record, baseline 3 a step record: ...".
void check_same_kind(const Record& a, const Record& b, const DiffOptions& options);

}  // namespace plumb::baseline
