#include "baseline/step_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "baseline/context_diff.h"
#include "baseline/importers/table_helpers.h"
#include "common/error.h"
#include "common/stats.h"

namespace plumb::baseline {
namespace {

using nlohmann::json;
constexpr const char* kStepSchema = "plumb.step/1";
constexpr int kMostStepsAdvised = 10'000;

// The per-step figures compared, in the order shown. `gates`: judged into the exit status.
// `zero_base_is_step`: when A's figure is 0 (all communication overlapped), the change is taken
// relative to A's step time instead.
struct StepFigureSpec {
  const char* figure;
  const char* field;
  bool gates;
  bool zero_base_is_step;
};
constexpr std::array<StepFigureSpec, 3> kStepFigures = {{
    {"step time", "step_time_us", true, false},
    {"exposed communication", "exposed_communication_us", true, true},
    {"compute", "compute_us", false, true},
}};
constexpr size_t kStepTime = 0;

// What the diff needs of one plumb.step/1 record.
struct StepRecord {
  int world_size = -1;
  int ranks = 0;
  // Per figure: the slowest rank's value in each step, by step.
  std::array<std::map<int64_t, double>, kStepFigures.size()> slowest;
  std::set<int64_t> steps;
  std::map<std::string, std::vector<double>> busbw;  // by collective kind
  StepStraggler straggler;
};

// Every field read with its type checked; errors name the record and the JSON path.
class StepReader : JsonFields {
 public:
  explicit StepReader(const std::string& name) : JsonFields(name) {}

  StepRecord read(const json& step) const {
    StepRecord r;
    const std::string schema = text(step, "step", "schema");
    if (schema != kStepSchema) {
      fail("step.schema", fmt::format("expected \"{}\", got {}", kStepSchema, shown(json(schema))));
    }
    if (step.contains("world_size")) {
      r.world_size = static_cast<int>(integer(step, "step", "world_size", -1, kMaxInt));
    }
    const json& ranks = array(step, "step", "ranks");
    r.ranks = static_cast<int>(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) rank(ranks[i], fmt::format("step.ranks[{}]", i), r);
    if (r.steps.empty()) fail("step.ranks", "no rank holds a step; expected the steps of a plumb "
                                            "step run to compare");
    collectives(step, r);
    stragglers(step, r);
    return r;
  }

 private:
  void rank(const json& entry, const std::string& path, StepRecord& r) const {
    integer(entry, path, "rank", 0, kMaxInt);
    const json& steps = array(entry, path, "steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      const std::string at_step = fmt::format("{}.steps[{}]", path, i);
      const int64_t step = integer(steps[i], at_step, "step", std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max());
      r.steps.insert(step);
      for (size_t f = 0; f < kStepFigures.size(); ++f) {
        const double v = number_or_null(steps[i], at_step, kStepFigures[f].field);
        if (std::isnan(v)) continue;
        auto [it, fresh] = r.slowest[f].try_emplace(step, v);
        if (!fresh) it->second = std::max(it->second, v);
      }
    }
  }

  // Optional lists: a record without them has no collective or straggler to compare.
  void collectives(const json& step, StepRecord& r) const {
    if (!step.contains("collectives")) return;
    const json& list = array(step, "step", "collectives");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("step.collectives[{}]", i);
      const std::string kind = text(list[i], path, "kind");
      const double busbw = number_or_null(list[i], path, "busbw_gbps");
      if (!std::isnan(busbw)) r.busbw[kind].push_back(busbw);
    }
  }

  void stragglers(const json& step, StepRecord& r) const {
    if (!step.contains("stragglers")) return;
    const json& list = array(step, "step", "stragglers");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("step.stragglers[{}]", i);
      const int64_t at_step = integer(list[i], path, "step", std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::max());
      const int rank = static_cast<int>(integer(list[i], path, "rank", -1, kMaxInt));
      const double waited = number(list[i], path, "waited_on_us");
      if (at_step == -1 && r.straggler.rank < 0) r.straggler = {rank, waited};
    }
  }
};

std::vector<double> values(const std::map<int64_t, double>& by_step) {
  std::vector<double> out;
  out.reserve(by_step.size());
  for (const auto& [step, v] : by_step) out.push_back(v);
  return out;
}

// The σ of the change (B − A) / base from each side's samples, as the comm diff has it from the
// rounds: σ of a median ≈ median_sigma_per_mad_of(n) × MAD; 0 (only the threshold judges) when a
// side has fewer than kMinStepsForNoise samples.
double noise_of(const std::vector<double>& a, const std::vector<double>& b, double base) {
  const auto too_few = [](const std::vector<double>& v) {
    return v.size() < static_cast<size_t>(kMinStepsForNoise);
  };
  if (too_few(a) || too_few(b) || !(base > 0)) return 0;
  const double sa = median_sigma_per_mad_of(static_cast<int>(a.size())) * median_absolute_deviation(a) / base;
  const double sb = median_sigma_per_mad_of(static_cast<int>(b.size())) * median_absolute_deviation(b) / base;
  return kNoiseSigmas * std::hypot(sa, sb);
}

StepFigureDiff figure_diff(size_t f, const StepRecord& a, const StepRecord& b, double threshold) {
  const StepFigureSpec& spec = kStepFigures[f];
  const std::vector<double> va = values(a.slowest[f]);
  const std::vector<double> vb = values(b.slowest[f]);
  StepFigureDiff d;
  d.figure = spec.figure;
  d.field = spec.field;
  d.gates = spec.gates;
  d.a_us = median(va);
  d.b_us = median(vb);
  double base = d.a_us;
  if (base == 0 && spec.zero_base_is_step) {
    base = median(values(a.slowest[kStepTime]));
    d.of_step_time = true;
  }
  d.change = base > 0 && !std::isnan(d.b_us) ? (d.b_us - d.a_us) / base : kNaN;
  d.noise = noise_of(va, vb, base);
  d.verdict = std::isnan(d.a_us) && std::isnan(d.b_us) ? Verdict::kSame
              : std::isnan(d.a_us)                      ? Verdict::kOnlyInB
              : std::isnan(d.b_us)                      ? Verdict::kOnlyInA
                                   : judge_time_change(d.change, d.noise, threshold);
  return d;
}

std::vector<StepCollectiveDiff> collective_diffs(const StepRecord& a, const StepRecord& b,
                                                 double threshold) {
  std::set<std::string> kinds;
  for (const auto& [kind, v] : a.busbw) kinds.insert(kind);
  for (const auto& [kind, v] : b.busbw) kinds.insert(kind);
  std::vector<StepCollectiveDiff> out;
  for (const std::string& kind : kinds) {
    const auto ia = a.busbw.find(kind);
    const auto ib = b.busbw.find(kind);
    const std::vector<double> va = ia == a.busbw.end() ? std::vector<double>{} : ia->second;
    const std::vector<double> vb = ib == b.busbw.end() ? std::vector<double>{} : ib->second;
    StepCollectiveDiff d;
    d.kind = kind;
    d.instances_a = static_cast<int>(va.size());
    d.instances_b = static_cast<int>(vb.size());
    d.busbw_a = median(va);
    d.busbw_b = median(vb);
    d.change = d.busbw_a > 0 && !std::isnan(d.busbw_b) ? (d.busbw_b - d.busbw_a) / d.busbw_a : kNaN;
    d.noise = noise_of(va, vb, d.busbw_a);
    d.verdict = va.empty()   ? Verdict::kOnlyInB
                : vb.empty() ? Verdict::kOnlyInA
                             : judge_change(d.change, d.noise, threshold);
    out.push_back(d);
  }
  return out;
}

void add_notes(StepDiff& d) {
  for (const auto& [name, steps] : {std::pair{"A", d.steps_a}, std::pair{"B", d.steps_b}}) {
    if (steps < kMinStepsForNoise) {
      d.notes.push_back(fmt::format("{} has {} step(s), fewer than {}: no noise estimate, only the "
                                    "threshold judges",
                                    name, steps, kMinStepsForNoise));
    }
  }
}

}  // namespace

bool holds_step(const Record& r) { return !r.step.is_null(); }

StepSummary summarize_step(const nlohmann::json& step, const std::string& name) {
  const StepRecord r = StepReader(name).read(step);
  StepSummary s;
  s.world_size = r.world_size;
  s.ranks = r.ranks;
  s.steps = static_cast<int>(r.steps.size());
  for (size_t f = 0; f < kStepFigures.size(); ++f) {
    s.figures.push_back({kStepFigures[f].figure, median(values(r.slowest[f]))});
  }
  for (const auto& [kind, busbw] : r.busbw) {
    s.collectives.push_back({kind, static_cast<int>(busbw.size()), median(busbw)});
  }
  s.straggler = r.straggler;
  return s;
}

StepDiff step_diff(const Record& a, const Record& b, const DiffOptions& options) {
  check_same_kind(a, b, options);
  if (!holds_step(a)) {
    throw Error(fmt::format("{} holds no step record: nothing for a step diff",
                            name_of(a, options.a_name)));
  }
  const StepRecord sa = StepReader(name_of(a, options.a_name)).read(a.step);
  const StepRecord sb = StepReader(name_of(b, options.b_name)).read(b.step);
  StepDiff d;
  d.a = ref_of(a);
  d.b = ref_of(b);
  d.ranks_a = sa.ranks;
  d.ranks_b = sb.ranks;
  d.steps_a = static_cast<int>(sa.steps.size());
  d.steps_b = static_cast<int>(sb.steps.size());
  d.threshold = options.threshold;
  for (size_t f = 0; f < kStepFigures.size(); ++f)
    d.figures.push_back(figure_diff(f, sa, sb, d.threshold));
  d.collectives = collective_diffs(sa, sb, d.threshold);
  d.straggler_a = sa.straggler;
  d.straggler_b = sb.straggler;
  d.variables = context_diffs(a, b);
  d.unrecorded = unrecorded_context(a, b);
  if (sa.world_size != sb.world_size) {
    d.variables.push_back({"topology", "world_size", std::to_string(sa.world_size),
                           std::to_string(sb.world_size)});
  }
  add_notes(d);
  return d;
}

bool StepDiff::straggler_moved() const {
  return straggler_a.rank >= 0 && straggler_b.rank >= 0 && straggler_a.rank != straggler_b.rank;
}

namespace {

int gating(const std::vector<StepFigureDiff>& figures, Verdict verdict) {
  return static_cast<int>(std::count_if(figures.begin(), figures.end(), [&](const StepFigureDiff& f) {
    return f.gates && f.verdict == verdict;
  }));
}

// The steps, at the fewer of the two records', that bring `noise` under |change|: the noise
// scales as median_sigma_per_mad_of(steps).
int steps_needed(double change, double noise, int steps) {
  const double now = median_sigma_per_mad_of(steps);
  for (int k = steps + 1; k <= kMostStepsAdvised; ++k) {
    if (noise * median_sigma_per_mad_of(k) / now < std::abs(change)) return k;
  }
  return kMostStepsAdvised;
}

}  // namespace

int StepDiff::regressions() const { return gating(figures, Verdict::kRegression); }

int StepDiff::too_noisy() const { return gating(figures, Verdict::kTooNoisy); }

int StepDiff::exit_code() const {
  if (regressions() > 0) return static_cast<int>(ExitCode::kCheckFailed);
  return too_noisy() > 0 ? kTooNoisyExitCode : 0;
}

std::string StepDiff::too_noisy_advice() const {
  if (too_noisy() == 0) return "";
  int steps = 0;
  for (const StepFigureDiff& f : figures) {
    if (f.gates && f.verdict == Verdict::kTooNoisy) {
      steps = std::max(steps, steps_needed(f.change, f.noise, std::min(steps_a, steps_b)));
    }
  }
  return fmt::format("to judge them, profile more steps: the noise falls about as 1/√steps, so "
                     "about {} steps in each trace (torch.profiler schedule active=) would bring "
                     "it under the change; or profile when the machine is quieter",
                     steps);
}

std::string StepDiff::attribution_warning() const {
  Diff context;
  context.variables = variables;
  return context.attribution_warning();
}

namespace {

json straggler_json(const StepStraggler& s) {
  if (s.rank < 0) return nullptr;
  return {{"rank", s.rank}, {"waited_on_us", s.waited_on_us}};
}

json figures_json(const std::vector<StepFigureDiff>& figures) {
  json out = json::array();
  for (const StepFigureDiff& f : figures) {
    out.push_back({{"figure", f.figure}, {"field", f.field}, {"a_us", number_or_null(f.a_us)},
                   {"b_us", number_or_null(f.b_us)}, {"change", number_or_null(f.change)},
                   {"change_of", f.of_step_time ? "A step time" : "A"}, {"noise", f.noise},
                   {"verdict", verdict_name(f.verdict)}, {"gates", f.gates}});
  }
  return out;
}

json collectives_json(const std::vector<StepCollectiveDiff>& collectives) {
  json out = json::array();
  for (const StepCollectiveDiff& c : collectives) {
    out.push_back({{"kind", c.kind}, {"instances_a", c.instances_a},
                   {"instances_b", c.instances_b}, {"busbw_a_gbps", number_or_null(c.busbw_a)},
                   {"busbw_b_gbps", number_or_null(c.busbw_b)},
                   {"busbw_change", number_or_null(c.change)}, {"noise", c.noise},
                   {"verdict", verdict_name(c.verdict)}});
  }
  return out;
}

json or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

}  // namespace

json step_diff_json(const StepDiff& d) {
  json variables = json::array();
  for (const VariableDiff& v : d.variables) {
    variables.push_back({{"kind", v.kind}, {"name", v.name}, {"a", v.a}, {"b", v.b}});
  }
  return {{"schema", kStepDiffSchema},
          {"a", ref_json(d.a)},
          {"b", ref_json(d.b)},
          {"ranks", {{"a", d.ranks_a}, {"b", d.ranks_b}}},
          {"steps", {{"a", d.steps_a}, {"b", d.steps_b}}},
          {"threshold", d.threshold},
          {"regressions", d.regressions()},
          {"too_noisy", d.too_noisy()},
          {"exit_code", d.exit_code()},
          {"advice", or_null(d.too_noisy_advice())},
          {"figures", figures_json(d.figures)},
          {"collectives", collectives_json(d.collectives)},
          {"straggler", {{"a", straggler_json(d.straggler_a)},
                         {"b", straggler_json(d.straggler_b)},
                         {"moved", d.straggler_moved()}}},
          {"variables", variables},
          {"warning", or_null(d.attribution_warning())},
          {"notes", d.notes}};
}

}  // namespace plumb::baseline
