#include "baseline/record_kind.h"

#include <fmt/format.h>

#include <array>

#include "baseline/step_diff.h"
#include "common/error.h"

namespace plumb::baseline {
namespace {

bool holds_comm(const Record&) { return true; }

// In the order kind_of() asks; comm, which every record may hold, last.
constexpr std::array<RecordKindInfo, 5> kRecordKinds = {{
    {RecordKind::kSet, "a baseline set", "plumb baseline --workload", holds_set},
    {RecordKind::kServe, "a serving record", "plumb serve", holds_serve},
    {RecordKind::kRecovery, "a recovery record", "plumb run", holds_recovery},
    {RecordKind::kStep, "a step record", "plumb step", holds_step},
    {RecordKind::kComm, "", "", holds_comm},
}};

std::string held_text(RecordKind kind) {
  return kind == RecordKind::kComm ? std::string("none") : kind_info(kind).held;
}

}  // namespace

bool holds_recovery(const Record& r) { return !r.recovery.is_null(); }

bool holds_serve(const Record& r) { return !r.serve.is_null(); }

bool holds_set(const Record& r) {
  return !r.memory.is_null() || (r.missing.is_object() && !r.missing.empty()) ||
         r.source == kSetSource;
}

RecordKind kind_of(const Record& r) {
  for (const RecordKindInfo& k : kRecordKinds) {
    if (k.holds(r)) return k.kind;
  }
  return RecordKind::kComm;
}

const RecordKindInfo& kind_info(RecordKind kind) {
  for (const RecordKindInfo& k : kRecordKinds) {
    if (k.kind == kind) return k;
  }
  return kRecordKinds.back();
}

void check_same_kind(const Record& a, const Record& b, const DiffOptions& o) {
  const RecordKind ka = kind_of(a);
  const RecordKind kb = kind_of(b);
  if (ka == kb) return;
  // The record holding something named first: "baseline 2 holds a step record, baseline 4 none".
  const bool a_first = ka != RecordKind::kComm;
  const std::string first = a_first ? name_of(a, o.a_name) : name_of(b, o.b_name);
  const std::string second = a_first ? name_of(b, o.b_name) : name_of(a, o.a_name);
  throw Error(fmt::format("{} holds {}, {} {}: plumb diff compares records of the same kind",
                          first, held_text(a_first ? ka : kb), second,
                          held_text(a_first ? kb : ka)));
}

}  // namespace plumb::baseline
