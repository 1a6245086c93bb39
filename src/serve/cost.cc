#include "serve/cost.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/error.h"
#include "plan/catalog.h"
#include "plan/hardware.h"

namespace plumb::serve {
namespace {

constexpr double kSecondsPerHour = 3600;
constexpr double kTokensPerMillion = 1e6;

Price catalog_price(const std::string& name) {
  const std::string path = plan::preset_path("hardware", name, "--hardware", "--price PER_CARD_HOUR");
  const plan::HardwareSpec spec = plan::load_hardware(path);
  if (!spec.rent_usd_per_hour) {
    throw Error(fmt::format("--hardware {}: {} has no rent_usd_per_hour; give --price PER_CARD_HOUR",
                            name, path));
  }
  std::string source = "catalog: " + name + " rent";
  if (!spec.rent_date.empty()) source += " (" + spec.rent_date + ")";
  return {*spec.rent_usd_per_hour, source};
}

}  // namespace

std::optional<Price> price_from(double price, const std::string& hardware) {
  if (price != 0 && !hardware.empty()) {
    throw Error(fmt::format("--price {:g} and --hardware {} both give a price per card-hour: give one",
                            price, hardware));
  }
  if (!hardware.empty()) return catalog_price(hardware);
  if (price == 0) return std::nullopt;
  if (!(price > 0) || !std::isfinite(price)) {
    throw Error(fmt::format("--price {:g}: expected a price per card-hour above 0", price));
  }
  return Price{price, "--price"};
}

double cost_per_million_output_tokens(double price_per_card_hour, int cards, double run_seconds,
                                      std::int64_t output_tokens) {
  if (output_tokens <= 0) return std::numeric_limits<double>::quiet_NaN();
  const double card_hours = cards * run_seconds / kSecondsPerHour;
  return price_per_card_hour * card_hours / (static_cast<double>(output_tokens) / kTokensPerMillion);
}

CostReport cost_of(const Price& price, int cards, const ServeSummary& summary) {
  CostReport c;
  c.price_per_card_hour = price.per_card_hour;
  c.price_source = price.source;
  c.cards = cards;
  c.run_hours = summary.duration_s / kSecondsPerHour;
  c.output_tokens = summary.output_tokens;
  c.cost_per_million_output_tokens =
      cost_per_million_output_tokens(price.per_card_hour, cards, summary.duration_s, summary.output_tokens);
  return c;
}

nlohmann::json cost_json(const CostReport& c) {
  const double cost = c.cost_per_million_output_tokens;
  return {{"price_per_card_hour", c.price_per_card_hour},
          {"price_source", c.price_source},
          {"cards", c.cards},
          {"run_hours", c.run_hours},
          {"output_tokens", c.output_tokens},
          {"cost_per_million_output_tokens",
           std::isfinite(cost) ? nlohmann::json(cost) : nlohmann::json(nullptr)}};
}

}  // namespace plumb::serve
