#include "step/plan_compare.h"

#include <fmt/format.h>

#include <array>
#include <map>

#include "common/error.h"

namespace plumb::step {
namespace {

constexpr std::array<const char*, 5> kDimensions{"tp", "cp", "ep", "pp", "dp"};

const nlohmann::json& member(const nlohmann::json& object, const char* key,
                             const std::string& source, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) {
    throw Error(fmt::format("{}: {}{}: missing (expected a plumb.plan/1 file from plumb plan "
                            "--json)",
                            source, where, key));
  }
  return object.at(key);
}

double number(const nlohmann::json& object, const char* key, const std::string& source,
              const std::string& where) {
  const nlohmann::json& value = member(object, key, source, where);
  if (!value.is_number()) {
    throw Error(fmt::format("{}: {}{}: expected a number", source, where, key));
  }
  return value.get<double>();
}

int layout_size(const nlohmann::json& layout, const char* key) {
  auto it = layout.find(key);
  return it != layout.end() && it->is_number_integer() ? it->get<int>() : 1;
}

// Mean over every rank's steps of `field`.
template <typename Field>
double mean_over_steps(const StepResult& result, Field field) {
  double total = 0;
  size_t n = 0;
  for (const RankSteps& rank : result.ranks) {
    for (const StepBreakdown& step : rank.steps) {
      total += field(step);
      ++n;
    }
  }
  return n == 0 ? kNaN : total / static_cast<double>(n);
}

size_t step_count(const StepResult& result) {
  return result.ranks.empty() ? 0 : result.ranks.front().steps.size();
}

}  // namespace

std::string group_dimension(const std::vector<int>& group_ranks, CollectiveKind kind,
                            const nlohmann::json& layout) {
  if (group_ranks.size() < 2) return "other";
  int size = static_cast<int>(group_ranks.size());
  int stride = group_ranks[1] - group_ranks[0];
  int tp = layout_size(layout, "tp");
  int cp = layout_size(layout, "cp");
  int dp = layout_size(layout, "dp");
  int pp = layout_size(layout, "pp");
  int ep = layout_size(layout, "ep");
  // Size and stride of each dimension's groups; a kind hint breaks ties between equal shapes.
  const std::array<std::tuple<const char*, int, int>, 5> shapes{{
      {"tp", tp, 1}, {"cp", cp, tp}, {"ep", ep, tp * cp}, {"dp", dp, tp * cp},
      {"pp", pp, tp * cp * dp}}};
  std::string found = "other";
  for (const auto& [name, dim_size, dim_stride] : shapes) {
    if (dim_size != size || dim_stride != stride) continue;
    if (found == "other") found = name;
    if (kind == CollectiveKind::kAllToAll && std::string(name) == "ep") return "ep";
    if (kind == CollectiveKind::kSendRecv && std::string(name) == "pp") return "pp";
  }
  return found;
}

std::string plan_run_of(const nlohmann::json& plan) {
  if (!plan.is_object() || !plan.contains("context") || !plan["context"].is_object() ||
      !plan["context"].contains("inputs") || !plan.contains("layout")) {
    return "";
  }
  return nlohmann::json{{"inputs", plan["context"]["inputs"]},
                        {"layout", plan["layout"]},
                        {"precision", plan.value("precision", "bf16")}}
      .dump();
}

std::vector<PlanRow> compare_with_plan(const StepResult& result, const nlohmann::json& plan,
                                       const std::string& source) {
  if (!plan.is_object() || plan.value("schema", "") != "plumb.plan/1") {
    throw Error(fmt::format("{}: not a plumb.plan/1 file (write one with plumb plan ... --json "
                            "FILE)",
                            source));
  }
  const nlohmann::json& layout = member(plan, "layout", source, "");
  const nlohmann::json& breakdown = member(plan, "breakdown_s", source, "");
  std::map<std::string, double> exposed;
  for (const CollectiveInstance& c : result.collectives) {
    exposed[group_dimension(c.group_ranks, c.kind, layout)] += c.exposed_us;
  }
  double steps = static_cast<double>(std::max<size_t>(step_count(result), 1));
  std::vector<PlanRow> rows;
  rows.push_back({"compute", mean_over_steps(result, [](const StepBreakdown& s) {
                    return s.compute_us;
                  }),
                  number(breakdown, "compute", source, "breakdown_s.") * kUsPerS});
  for (const char* dim : kDimensions) {
    rows.push_back({fmt::format("exposed {}", dim), exposed[dim] / steps,
                    number(breakdown, dim, source, "breakdown_s.") * kUsPerS});
  }
  if (exposed["other"] > 0) rows.push_back({"exposed other", exposed["other"] / steps, 0});
  rows.push_back({"bubble (idle)",
                  mean_over_steps(result, [](const StepBreakdown& s) { return s.idle_us; }),
                  number(breakdown, "bubble", source, "breakdown_s.") * kUsPerS});
  rows.push_back({"optimizer", kNaN, number(breakdown, "optimizer", source, "breakdown_s.") *
                                         kUsPerS});
  rows.push_back({"step", mean_over_steps(result, [](const StepBreakdown& s) {
                    return s.step_time_us;
                  }),
                  number(plan, "step_time_s", source, "") * kUsPerS});
  return rows;
}

}  // namespace plumb::step
