#include "serve/measure.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "common/error.h"
#include "common/number_range.h"
#include "common/strings.h"

namespace plumb::serve {
namespace {

struct Objective {
  const char* key;
  std::optional<double> Slo::*field;
};
constexpr std::array<Objective, 4> kObjectives = {{{"ttft", &Slo::ttft_ms},
                                                   {"itl", &Slo::itl_ms},
                                                   {"tpot", &Slo::tpot_ms},
                                                   {"e2e", &Slo::e2e_ms}}};

struct Unit {
  std::string_view suffix;
  double to_ms;
};
constexpr std::array<Unit, 2> kUnits = {{{"ms", 1.0}, {"s", 1000.0}}};  // "ms" tried first

std::optional<double> value_ms(std::string_view value) {
  for (const auto& unit : kUnits) {
    if (value.size() <= unit.suffix.size() || !value.ends_with(unit.suffix)) continue;
    std::string problem;
    const auto n = parse_number(value.substr(0, value.size() - unit.suffix.size()),
                                NumberRange{0, 1e12, true, false}, problem);
    if (n) return *n * unit.to_ms;
    return std::nullopt;
  }
  return std::nullopt;
}

const Objective& objective(std::string_view key) {
  for (const auto& o : kObjectives) {
    if (key == o.key) return o;
  }
  std::vector<std::string> names;
  for (const auto& o : kObjectives) names.emplace_back(o.key);
  throw Error(unknown_name("--slo", "objective", key, names));
}

}  // namespace

Slo parse_slo(std::string_view text) {
  Slo slo;
  for (const std::string& item : split_list(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw Error(fmt::format("--slo: '{}': expected KEY=VALUE, e.g. ttft=2000ms", item));
    }
    const std::string key(trim_blanks(std::string_view(item).substr(0, eq)));
    const Objective& o = objective(key);
    const auto v = value_ms(trim_blanks(std::string_view(item).substr(eq + 1)));
    if (!v) {
      throw Error(
          fmt::format("--slo: {}: expected a number above 0 with its unit, ms or s "
                      "(e.g. 2000ms)",
                      item));
    }
    if (slo.*o.field) throw Error(fmt::format("--slo: {} is given twice", key));
    slo.*o.field = *v;
  }
  return slo;
}

std::string slo_text(const Slo& slo) {
  std::vector<std::string> items;
  for (const auto& o : kObjectives) {
    if (slo.*o.field) items.push_back(fmt::format("{}={:g}ms", o.key, *(slo.*o.field)));
  }
  return join(items, ",");
}

Measured exclude_warmup(std::vector<RequestRecord> records, Nanos duration_ns, Nanos warmup_ns) {
  Measured m;
  m.duration_ns = std::max<Nanos>(0, duration_ns - warmup_ns);
  for (auto& r : records) {
    if (r.scheduled_ns >= warmup_ns) m.records.push_back(std::move(r));
  }
  return m;
}

}  // namespace plumb::serve
