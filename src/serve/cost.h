// Cost per million output tokens from a price per card-hour: --price, or the plan catalog's
// rent figure for --hardware (docs/serve.md, "Cost"):
//   cost per million output tokens = price per card-hour × cards × run hours
//                                    / (output tokens / 1e6)
// The run's hours are its duration (first request due to last answer), so the cards are paid for
// the whole run, idle moments included, as a rented card is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/summary.h"

namespace plumb::serve {

struct CostReport {
  double price_per_card_hour = 0;  // in the price's currency (USD in the catalog)
  std::string price_source;        // "--price", "catalog: h100-sxm rent (2026-09-25)"
  int cards = 1;
  double run_hours = 0;
  std::int64_t output_tokens = 0;
  double cost_per_million_output_tokens = 0;  // NaN when the run produced no output token
};

// A price per card-hour and where it came from.
struct Price {
  double per_card_hour = 0;
  std::string source;
};

// From --price (> 0) or --hardware NAME (the catalog's rent_usd_per_hour); nullopt when neither
// is given. Throws plumb::Error (exit 2) for both at once, a price ≤ 0, an unknown name (with
// "did you mean") or a catalog card without a rent figure.
std::optional<Price> price_from(double price, const std::string& hardware);

// The formula above; NaN when output_tokens is 0 (no token: no price per token).
double cost_per_million_output_tokens(double price_per_card_hour, int cards, double run_seconds,
                                      std::int64_t output_tokens);

CostReport cost_of(const Price& price, int cards, const ServeSummary& summary);

nlohmann::json cost_json(const CostReport& cost);

}  // namespace plumb::serve
