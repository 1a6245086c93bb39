#include "baseline/set_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "baseline/context_diff.h"
#include "baseline/record_kind.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;

// At most this many findings in a part's headline; the others are counted ("and 2 more").
constexpr size_t kHeadlineFindings = 3;

struct Finding {
  Verdict verdict;
  std::string text;
};

// "a", "a and b", "a, b and c".
std::string join_and(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? "" : items[0];
  const std::vector<std::string> head(items.begin(), items.end() - 1);
  return join(head, ", ") + " and " + items.back();
}

PartVerdict verdict_of_exit(int exit_code, const std::vector<Finding>& findings) {
  if (exit_code == static_cast<int>(ExitCode::kCheckFailed)) return PartVerdict::kRegression;
  if (exit_code == kTooNoisyExitCode) return PartVerdict::kTooNoisy;
  if (exit_code != 0) return PartVerdict::kNotCompared;
  const bool better = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.verdict == Verdict::kImprovement;
  });
  return better ? PartVerdict::kImprovement : PartVerdict::kUnchanged;
}

Verdict decisive(PartVerdict v) {
  switch (v) {
    case PartVerdict::kRegression: return Verdict::kRegression;
    case PartVerdict::kTooNoisy: return Verdict::kTooNoisy;
    case PartVerdict::kImprovement: return Verdict::kImprovement;
    default: return Verdict::kSame;
  }
}

// The part's verdict from its diff's exit code; the headline from the findings of that verdict
// (`otherwise` when none decides it), the other findings as details.
void conclude(SetPart& p, int exit_code, const std::vector<Finding>& findings,
              const std::string& otherwise) {
  p.exit_code = exit_code;
  p.verdict = verdict_of_exit(exit_code, findings);
  const Verdict key = decisive(p.verdict);
  std::vector<std::string> head;
  for (const Finding& f : findings) {
    if (f.verdict == key && key != Verdict::kSame) {
      head.push_back(f.text);
    } else {
      p.details.push_back(f.text);
    }
  }
  if (head.size() > kHeadlineFindings) {
    const size_t more = head.size() - kHeadlineFindings;
    head.resize(kHeadlineFindings);
    head.back() += fmt::format(" and {} more", more);
  }
  p.headline = head.empty() ? otherwise : join(head, "; ");
}

// comm: the (layer, collective, dtype) groups the gate judges.
void compare_comm(const Record& a, const Record& b, const DiffOptions& o, const PartReaders&,
                  SetPart& p) {
  Diff d = diff(a, b, o);
  std::vector<Finding> findings;
  if (d.b.validity.wrong) findings.push_back({Verdict::kRegression, "B has wrong results"});
  if (d.b.validity.failed) {
    findings.push_back({Verdict::kRegression, "B failed a check of its own tool"});
  }
  for (const GroupDiff& g : d.groups) {
    if (g.verdict == Verdict::kSame) continue;
    findings.push_back({g.verdict, fmt::format("{} {} {} busbw {} (noise {:.0f}%)", g.layer,
                                               g.collective, g.dtype, percent(g.change),
                                               100 * g.noise)});
  }
  if (const std::string advice = d.too_noisy_advice(); !advice.empty()) {
    findings.push_back({Verdict::kSame, advice});
  }
  const Outcome outcome = d.outcome();
  if (outcome == Outcome::kIncomplete || outcome == Outcome::kBadReference) {
    p.note = outcome == Outcome::kIncomplete
                 ? "a sweep ended early: the sizes it did not reach cannot be judged"
                 : "A is not valid (" + join(d.a.validity.marks, " · ") + "): it is no reference";
  }
  conclude(p, d.exit_code(), findings,
           p.note.empty() ? fmt::format("{} collective(s) compared, none changed beyond the "
                                        "threshold and the noise",
                                        d.groups.size())
                          : p.note);
  p.diff_json = diff_json(d);
  p.comm = std::move(d);
}

std::string ms(double us) { return std::isnan(us) ? "-" : fmt::format("{:.1f} ms", us / 1000); }

std::string figure_text(const StepFigureDiff& f) {
  return fmt::format("{} {} → {}{}", f.figure, ms(f.a_us), ms(f.b_us),
                     std::isnan(f.change) ? "" : " (" + percent(f.change) + ")");
}

// model: step time and exposed communication gate; compute and the straggler are details.
void compare_step(const Record& a, const Record& b, const DiffOptions& o, const PartReaders&,
                  SetPart& p) {
  StepDiff d = step_diff(a, b, o);
  std::vector<Finding> findings;
  std::vector<std::string> gating;  // the unchanged headline: the figures that gate, as they are
  for (const StepFigureDiff& f : d.figures) {
    if (f.gates) gating.push_back(figure_text(f));
    if (f.verdict != Verdict::kSame) findings.push_back({f.gates ? f.verdict : Verdict::kSame, figure_text(f)});
  }
  if (d.straggler_moved()) {
    findings.push_back({Verdict::kSame, fmt::format("the straggler moved: rank {} in A, rank {} in B",
                                                    d.straggler_a.rank, d.straggler_b.rank)});
  }
  for (const std::string& n : d.notes) findings.push_back({Verdict::kSame, n});
  if (const std::string advice = d.too_noisy_advice(); !advice.empty()) {
    findings.push_back({Verdict::kSame, advice});
  }
  conclude(p, d.exit_code(), findings, join(gating, "; "));
  p.diff_json = step_diff_json(d);
  p.step = std::move(d);
}

std::string figure_value(double v) { return std::isnan(v) ? "-" : fmt::format("{:.3g}", v); }

// recovery: detection, recovery and down time, steps lost, judged by the threshold alone.
void compare_recovery(const Record& a, const Record& b, const DiffOptions& o,
                      const PartReaders&, SetPart& p) {
  RecoveryDiff d = recovery_diff(a, b, o);
  std::vector<Finding> findings;
  for (const RecoveryFigureDiff& f : d.figures) {
    if (f.verdict == Verdict::kSame) continue;
    findings.push_back({f.gates ? f.verdict : Verdict::kSame,
                        fmt::format("{} {} → {}{}", f.figure, figure_value(f.a), figure_value(f.b),
                                    std::isnan(f.change) ? "" : " (" + percent(f.change) + ")")});
  }
  conclude(p, d.exit_code(), findings,
           fmt::format("{} failure(s) in A, {} in B: no figure worse beyond the threshold",
                       d.failures_a, d.failures_b));
  p.diff_json = recovery_diff_json(d);
  p.recovery = std::move(d);
}

// memory: the settled level, creep and the checkpoint check (memory_diff.h).
void compare_memory(const Record& a, const Record& b, const DiffOptions& o,
                    const PartReaders& read, SetPart& p) {
  MemoryDiff d = memory_diff(read.memory(a.memory, name_of(a, o.a_name)),
                             read.memory(b.memory, name_of(b, o.b_name)), o.threshold);
  std::vector<Finding> findings;
  for (const MemoryFinding& f : d.findings()) findings.push_back({f.verdict, f.text});
  conclude(p, d.exit_code(), findings,
           fmt::format("settled level and creep unchanged on {} rank(s); checkpoint check {} in B",
                       d.ranks_b, d.checkpoint.verdict_b));
  p.diff_json = memory_diff_json(d);
  p.memory = std::move(d);
}

// serving: each matched run's latencies and throughputs (serve_diff.h), the worst run decides.
void compare_serve(const Record& a, const Record& b, const DiffOptions& o, const PartReaders& read,
                   SetPart& p) {
  ServeDiff d = diff_serve(read.serve(a.serve, name_of(a, o.a_name)),
                           read.serve(b.serve, name_of(b, o.b_name)), o);
  std::vector<Finding> findings;
  size_t compared = 0;
  for (const ServeRunDiff& run : d.runs) {
    if (run.verdict == Verdict::kOnlyInA || run.verdict == Verdict::kOnlyInB) {
      findings.push_back({Verdict::kSame, fmt::format("{}: {}", run.load, verdict_name(run.verdict))});
      continue;
    }
    ++compared;
    for (const ServeFigureDiff& f : run.figures) {
      if (f.verdict == Verdict::kSame) continue;
      findings.push_back({f.verdict, fmt::format("{} {} {} → {} {}{}", run.load, f.figure,
                                                 figure_value(f.a), figure_value(f.b), f.unit,
                                                 std::isnan(f.change) ? "" : " (" + percent(f.change) + ")")});
    }
  }
  for (const std::string& n : d.notes) findings.push_back({Verdict::kSame, n});
  if (const std::string advice = d.too_noisy_advice(); !advice.empty()) {
    findings.push_back({Verdict::kSame, advice});
  }
  conclude(p, d.exit_code(), findings,
           fmt::format("{} run(s) compared, no latency or throughput changed beyond the threshold "
                       "and the noise",
                       compared));
  p.diff_json = serve_diff_json(d);
  p.serve = std::move(d);
}

bool holds_comm_part(const Record& r) {
  return !r.rows.empty() || (r.comm.is_object() && !r.comm.empty());
}
bool holds_step_part(const Record& r) { return holds_step(r); }
bool holds_memory_part(const Record& r) { return !r.memory.is_null(); }
bool holds_recovery_part(const Record& r) { return holds_recovery(r); }

// The parts, in the order shown; `other_key` is how a "missing" entry may name it too.
struct PartSpec {
  const char* name;
  const char* key;
  const char* other_key;
  bool (*holds)(const Record&);
  void (*compare)(const Record&, const Record&, const DiffOptions&, const PartReaders&,
                  SetPart&);
};
constexpr std::array<PartSpec, 5> kParts = {{
    {"comm", "comm", "comm", holds_comm_part, compare_comm},
    {"model", "step", "model", holds_step_part, compare_step},
    {"memory", "memory", "memory", holds_memory_part, compare_memory},
    {"recovery", "recovery", "recovery", holds_recovery_part, compare_recovery},
    {"serve", "serve", "serve", holds_serve, compare_serve},
}};

// The set's own reason for not holding a part: "skipped (--skip recovery)".
std::string missing_reason(const Record& r, const PartSpec& spec) {
  if (r.missing.is_object()) {
    for (const char* key : {spec.key, spec.other_key}) {
      if (r.missing.contains(key) && r.missing[key].is_string()) {
        return r.missing[key].get<std::string>();
      }
    }
  }
  return "not taken, no reason recorded";
}

SetPart not_held(const Record& a, const Record& b, const PartSpec& spec, bool in_a, bool in_b) {
  SetPart p;
  p.name = spec.name;
  p.key = spec.key;
  if (in_a || in_b) {
    p.verdict = in_a ? PartVerdict::kOnlyInA : PartVerdict::kOnlyInB;
    p.note = fmt::format("{}: {}", in_a ? "B" : "A", missing_reason(in_a ? b : a, spec));
  } else {
    p.verdict = PartVerdict::kInNeither;
    p.note = fmt::format("A: {}; B: {}", missing_reason(a, spec), missing_reason(b, spec));
  }
  p.headline = p.note;
  return p;
}

SetPart compare_part(const Record& a, const Record& b, const DiffOptions& o,
                     const PartReaders& read, const PartSpec& spec) {
  const bool in_a = spec.holds(a);
  const bool in_b = spec.holds(b);
  if (!in_a || !in_b) return not_held(a, b, spec, in_a, in_b);
  SetPart p;
  p.name = spec.name;
  p.key = spec.key;
  try {
    spec.compare(a, b, o, read, p);
  } catch (const Error& e) {
    p = SetPart{};
    p.name = spec.name;
    p.key = spec.key;
    p.verdict = PartVerdict::kNotCompared;
    p.exit_code = static_cast<int>(e.code());
    p.note = e.what();
    p.headline = p.note;
  }
  return p;
}

// The step diff names the world size when the traces' differ; the set's context does not.
void add_part_variables(const SetPart& p, std::vector<VariableDiff>& variables) {
  if (!p.step) return;
  for (const VariableDiff& v : p.step->variables) {
    const bool known = std::any_of(variables.begin(), variables.end(), [&](const VariableDiff& x) {
      return x.kind == v.kind && x.name == v.name;
    });
    if (!known) variables.push_back(v);
  }
}

std::string variable_text(const VariableDiff& v) {
  return fmt::format("{} {} {} → {}", v.kind, v.name, v.a, v.b);
}

RecordRef named_ref_of(const Record& r, const std::string& given) {
  RecordRef ref{r.id, r.label, r.created, r.source, 0};
  ref.name = name_of(r, given);
  return ref;
}

}  // namespace

std::string_view part_verdict_name(PartVerdict verdict) {
  switch (verdict) {
    case PartVerdict::kUnchanged: return "unchanged";
    case PartVerdict::kImprovement: return "improvement";
    case PartVerdict::kTooNoisy: return "too noisy to judge";
    case PartVerdict::kRegression: return "regression";
    case PartVerdict::kNotCompared: return "not compared";
    case PartVerdict::kOnlyInA: return "only in A";
    case PartVerdict::kOnlyInB: return "only in B";
    case PartVerdict::kInNeither: return "in neither";
  }
  return "?";
}

SetDiff set_diff(const Record& a, const Record& b, const DiffOptions& options,
                 const PartReaders& readers) {
  check_same_kind(a, b, options);
  SetDiff d;
  d.a = named_ref_of(a, options.a_name);
  d.b = named_ref_of(b, options.b_name);
  d.threshold = options.threshold;
  d.variables = context_diffs(a, b);
  d.unrecorded = unrecorded_context(a, b);
  for (const PartSpec& spec : kParts) {
    d.parts.push_back(compare_part(a, b, options, readers, spec));
    add_part_variables(d.parts.back(), d.variables);
  }
  return d;
}

std::string SetDiff::warning() const {
  if (variables.size() <= 1) return "";
  std::vector<std::string> texts;
  for (const VariableDiff& v : variables) texts.push_back(variable_text(v));
  return fmt::format("one variable at a time: {} {} changed; their effects cannot be told apart",
                     join_and(texts), texts.size() == 2 ? "both" : "all " + std::to_string(texts.size()));
}

std::string SetDiff::variables_line() const {
  if (variables.empty()) return "no variable changed";
  if (variables.size() == 1) return "one variable changed: " + variable_text(variables[0]);
  return warning();
}

int SetDiff::exit_code() const {
  const auto any = [&](PartVerdict v) {
    return std::any_of(parts.begin(), parts.end(), [&](const SetPart& p) { return p.verdict == v; });
  };
  if (any(PartVerdict::kRegression)) return static_cast<int>(ExitCode::kCheckFailed);
  if (any(PartVerdict::kNotCompared)) return static_cast<int>(ExitCode::kBadInput);
  return any(PartVerdict::kTooNoisy) ? kTooNoisyExitCode : 0;
}

std::string_view SetDiff::outcome() const {
  const int code = exit_code();
  return code == 0 ? "go" : code == static_cast<int>(ExitCode::kCheckFailed) ? "no-go" : "undecided";
}

namespace {

// "comm, model unchanged; memory improved; recovery only in A", in the order of the parts.
std::string parts_by_verdict(const std::vector<SetPart>& parts) {
  std::vector<std::pair<PartVerdict, std::vector<std::string>>> groups;
  for (const SetPart& p : parts) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == p.verdict; });
    if (it == groups.end()) it = groups.insert(groups.end(), {p.verdict, {}});
    it->second.push_back(p.name);
  }
  std::vector<std::string> out;
  for (const auto& [verdict, names] : groups) {
    const std::string_view word = verdict == PartVerdict::kImprovement ? "improved" : part_verdict_name(verdict);
    out.push_back(fmt::format("{} {}", join(names, ", "), word));
  }
  return join(out, "; ");
}

// "memory regressed (rank 1 leaks ...)"; with several: "comm and memory regressed (comm: ...;
// memory: ...)".
std::string parts_with(const std::vector<SetPart>& parts, PartVerdict verdict, const char* word) {
  std::vector<std::string> names;
  std::vector<std::string> why;
  for (const SetPart& p : parts) {
    if (p.verdict != verdict) continue;
    names.push_back(p.name);
    why.push_back(fmt::format("{}: {}", p.name, p.headline));
  }
  // One part: its headline alone; several: each named.
  const std::string reasons =
      names.size() == 1 ? why[0].substr(names[0].size() + 2) : join(why, "; ");
  return fmt::format("{} {} ({})", join_and(names), word, reasons);
}

std::string variables_phrase(size_t n) {
  if (n == 0) return "no variable changed";
  if (n == 1) return "one variable changed";
  return fmt::format("{} variables changed: their effects cannot be told apart", n);
}

}  // namespace

std::string SetDiff::go_line() const {
  const int code = exit_code();
  if (code == static_cast<int>(ExitCode::kCheckFailed)) {
    return "no-go: " + parts_with(parts, PartVerdict::kRegression, "regressed");
  }
  if (code == static_cast<int>(ExitCode::kBadInput)) {
    return "undecided: " + parts_with(parts, PartVerdict::kNotCompared, "not compared") +
           "; no part regressed";
  }
  if (code == kTooNoisyExitCode) {
    return "undecided: " + parts_with(parts, PartVerdict::kTooNoisy, "too noisy to judge") +
           "; no part regressed";
  }
  return fmt::format("go: no part regressed ({}; {})", parts_by_verdict(parts),
                     variables_phrase(variables.size()));
}

namespace {

json ref_with_name_json(const RecordRef& r) {
  json j = ref_json(r);
  j["name"] = r.name;
  return j;
}

json part_json(const SetPart& p) {
  return {{"verdict", part_verdict_name(p.verdict)}, {"exit_code", p.exit_code},
          {"headline", p.headline}, {"details", p.details}, {"note", text_or_null(p.note)},
          {"diff", p.diff_json}};
}

}  // namespace

json set_diff_json(const SetDiff& d) {
  json parts = json::object();
  for (const SetPart& p : d.parts) parts[p.name] = part_json(p);
  json variables = json::array();
  for (const VariableDiff& v : d.variables) {
    variables.push_back({{"kind", v.kind}, {"name", v.name}, {"a", v.a}, {"b", v.b}});
  }
  return {{"schema", kSetDiffSchema},
          {"a", ref_with_name_json(d.a)},
          {"b", ref_with_name_json(d.b)},
          {"threshold", d.threshold},
          {"parts", parts},
          {"variables", variables},
          {"unrecorded", d.unrecorded},
          {"variables_line", d.variables_line()},
          {"warning", text_or_null(d.warning())},
          {"outcome", d.outcome()},
          {"go", d.go_line()},
          {"exit_code", d.exit_code()}};
}

}  // namespace plumb::baseline
