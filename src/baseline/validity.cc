#include "baseline/validity.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"
#include "common/units.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

struct IssueKindInfo {
  IssueKind kind;
  std::string_view name;   // JSON
  std::string_view words;  // in a sentence: "run.log:3: wrong results: ..."
  std::string_view mark;   // plumb show / list / diff
};
constexpr std::array<IssueKindInfo, 3> kIssueKinds = {{
    {IssueKind::kWrongResults, "wrong-results", "wrong results", "WRONG RESULTS"},
    {IssueKind::kFailedCheck, "failed-check", "failed check", "FAILED CHECK"},
    {IssueKind::kIncomplete, "incomplete", "incomplete", "INCOMPLETE"},
}};

const IssueKindInfo& info(IssueKind kind) {
  for (const IssueKindInfo& k : kIssueKinds) {
    if (k.kind == kind) return k;
  }
  return kIssueKinds.front();
}

// The store's INTEGER: a size beyond it was never stored.
constexpr uint64_t kMaxWhole = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// A plan whose size stops growing (a factor that rounds to nothing) or runs past this many sizes
// is counted to here: no real sweep has more (nccl-tests' default 8 B..8 GiB ×2 has 31).
constexpr uint64_t kMostPlannedSizes = 1'000'000;

// The size after `s`; `s` itself when the plan cannot grow from it (overflow, a factor < 2 on 1).
uint64_t next_size(const SweepPlan& p, uint64_t s) {
  if (p.factor > 1) {
    const long double next = static_cast<long double>(s) * p.factor;
    if (next >= static_cast<long double>(std::numeric_limits<uint64_t>::max())) return s;
    return std::max(s, static_cast<uint64_t>(next));  // truncated, as both tools' integer sizes
  }
  return s > std::numeric_limits<uint64_t>::max() - p.step_bytes ? s : s + p.step_bytes;
}

// "8 MiB, 16 MiB, …" for the kept sizes; ", … (40 sizes)" when more were missing.
std::string missing_text(const Issue& i) {
  std::vector<std::string> sizes;
  for (uint64_t b : i.missing) sizes.push_back(format_bytes(b));
  std::string text = join(sizes, ", ");
  if (i.missing_count > i.missing.size()) text += ", …";
  if (i.missing_count > 1) text += fmt::format(" ({} sizes)", i.missing_count);
  return text;
}

bool has_sweep(const Issue& i) { return i.last_bytes > 0 || i.planned_bytes > 0; }

// "sweep ended at 4 MiB of 1 GiB"
std::string sweep_end(const Issue& i) {
  std::string text = "sweep ended at " + format_bytes(i.last_bytes);
  if (i.planned_bytes > 0) text += " of " + format_bytes(i.planned_bytes);
  return text;
}

}  // namespace

std::string_view issue_kind_name(IssueKind kind) { return info(kind).name; }

uint64_t SweepPlan::size_count() const {
  if (!planned()) return 0;
  if (factor <= 1) return std::min<uint64_t>((max_bytes - min_bytes) / step_bytes + 1, kMostPlannedSizes);
  uint64_t n = 0;
  for (uint64_t s = min_bytes; s <= max_bytes && n < kMostPlannedSizes; ++n) {
    const uint64_t next = next_size(*this, s);
    if (next == s) return n + 1;
    s = next;
  }
  return n;
}

uint64_t SweepPlan::size(uint64_t i) const {
  if (factor <= 1) return min_bytes + i * step_bytes;
  uint64_t s = min_bytes;
  for (uint64_t k = 0; k < i; ++k) s = next_size(*this, s);
  return s;
}

Issue incomplete_sweep(std::string where, std::string what, const SweepPlan& plan,
                       uint64_t measured, uint64_t last_bytes) {
  Issue issue{IssueKind::kIncomplete, std::move(where), std::move(what), last_bytes, 0, {}, 0};
  const uint64_t count = plan.size_count();
  if (count == 0) return issue;
  issue.planned_bytes = plan.size(count - 1);
  for (uint64_t i = measured; i < count; ++i) {
    if (issue.missing.size() == kMissingKept) break;
    issue.missing.push_back(plan.size(i));
  }
  issue.missing_count = count > measured ? count - measured : 0;
  return issue;
}

std::string issue_text(const Issue& i) {
  std::string text = i.where.empty() ? "" : i.where + ": ";
  text += fmt::format("{}: {}", info(i.kind).words, i.what);
  if (i.kind != IssueKind::kIncomplete || !has_sweep(i)) return text;
  text += ": the " + sweep_end(i);
  if (i.missing_count > 0) text += "; missing " + missing_text(i);
  return text;
}

ValiditySummary summarize_validity(const Validity& validity, int64_t wrong_rows) {
  ValiditySummary s;
  s.wrong = wrong_rows > 0;
  const Issue* incomplete = nullptr;  // the first that says where its sweep ended
  for (const Issue& i : validity) {
    s.wrong |= i.kind == IssueKind::kWrongResults;
    s.failed |= i.kind == IssueKind::kFailedCheck;
    s.incomplete |= i.kind == IssueKind::kIncomplete;
    if (i.kind == IssueKind::kIncomplete && incomplete == nullptr && has_sweep(i)) incomplete = &i;
    s.lines.push_back(issue_text(i));
  }
  if (s.wrong) s.marks.emplace_back(info(IssueKind::kWrongResults).mark);
  if (s.failed) s.marks.emplace_back(info(IssueKind::kFailedCheck).mark);
  if (s.incomplete) {
    s.marks.push_back(std::string(info(IssueKind::kIncomplete).mark) +
                      (incomplete != nullptr ? ": " + sweep_end(*incomplete) : ""));
  }
  return s;
}

ValiditySummary summarize_validity(const Validity& validity, const std::vector<comm::Row>& rows) {
  int64_t wrong_rows = 0;
  int64_t elements = 0;
  const comm::Row* first = nullptr;
  for (const comm::Row& r : rows) {
    if (r.wrong <= 0) continue;
    ++wrong_rows;
    elements = r.wrong > std::numeric_limits<int64_t>::max() - elements
                   ? std::numeric_limits<int64_t>::max()
                   : elements + r.wrong;
    if (first == nullptr) first = &r;
  }
  ValiditySummary s = summarize_validity(validity, wrong_rows);
  const bool said = std::any_of(validity.begin(), validity.end(), [](const Issue& i) {
    return i.kind == IssueKind::kWrongResults;
  });
  if (first != nullptr && !said) {
    s.lines.insert(s.lines.begin(),
                   issue_text({IssueKind::kWrongResults, "",
                               fmt::format("{} of {} rows have wrong elements ({} in all), the "
                                           "first at {}@{} {}",
                                           wrong_rows, rows.size(), elements, first->collective,
                                           first->layer, format_bytes(first->requested_bytes)),
                               0, 0, {}, 0}));
  }
  return s;
}

json validity_json(const Validity& validity) {
  json list = json::array();
  for (const Issue& i : validity) {
    json j = {{"kind", issue_kind_name(i.kind)}, {"where", i.where}, {"what", i.what}};
    if (i.kind == IssueKind::kIncomplete) {
      j["last_bytes"] = i.last_bytes;
      j["planned_bytes"] = i.planned_bytes;
      j["missing_bytes"] = i.missing;
      j["missing_count"] = i.missing_count;
    }
    list.push_back(std::move(j));
  }
  return list;
}

namespace {

class IssueReader : JsonFields {
 public:
  explicit IssueReader(const std::string& origin) : JsonFields(origin) {}

  Issue read(const json& entry, const std::string& path) const {
    if (!entry.is_object()) fail(path, "expected an object, got " + shown(entry));
    Issue i;
    i.kind = kind(text(entry, path, "kind"), at(path, "kind"));
    i.where = text(entry, path, "where");
    i.what = text(entry, path, "what");
    if (i.kind == IssueKind::kIncomplete) sweep(entry, path, i);
    return i;
  }

 private:
  IssueKind kind(const std::string& name, const std::string& path) const {
    std::vector<std::string> names;
    for (const IssueKindInfo& k : kIssueKinds) {
      if (k.name == name) return k.kind;
      names.emplace_back(k.name);
    }
    fail(path, fmt::format("expected one of {}, got \"{}\"", join(names, ", "), name));
  }

  void sweep(const json& entry, const std::string& path, Issue& i) const {
    i.last_bytes = whole(entry, path, "last_bytes");
    i.planned_bytes = whole(entry, path, "planned_bytes");
    const json& missing = array(entry, path, "missing_bytes");
    const std::string missing_path = at(path, "missing_bytes");
    if (missing.size() > kMissingKept) {
      fail(missing_path, fmt::format("expected at most {} sizes, got {}", kMissingKept,
                                     missing.size()));
    }
    for (size_t k = 0; k < missing.size(); ++k) {
      const json& size = missing[k];
      if (!size.is_number_unsigned() || size.get<uint64_t>() > kMaxWhole) {
        fail(fmt::format("{}[{}]", missing_path, k),
             fmt::format("expected a whole number from 0 to {}, got {}", kMaxWhole, shown(size)));
      }
      i.missing.push_back(size.get<uint64_t>());
    }
    i.missing_count = whole(entry, path, "missing_count");
    if (i.missing_count < i.missing.size()) {
      fail(at(path, "missing_count"), fmt::format("expected at least the {} sizes of missing_bytes, "
                                                  "got {}", i.missing.size(), i.missing_count));
    }
  }
};

}  // namespace

Validity validity_from_json(const json& issues, const std::string& origin, const std::string& path) {
  if (!issues.is_array()) {
    throw Error(fmt::format("{}: {}: expected a list, got {}", origin, path,
                            JsonFields::shown(issues)));
  }
  Validity validity;
  const IssueReader reader(origin);
  for (size_t k = 0; k < issues.size(); ++k) {
    validity.push_back(reader.read(issues[k], fmt::format("{}[{}]", path, k)));
  }
  return validity;
}

}  // namespace plumb::baseline
