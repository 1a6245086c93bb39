// Cost per million output tokens from a price per card-hour: --price, or the plan catalog's
// rent figure for --hardware (docs/serve.md, "Cost and energy").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace plumb::serve {

struct CostReport {
  double price_per_card_hour = 0;  // in the price's currency (USD in the catalog)
  std::string price_source;        // "--price", "catalog: h100-sxm rent"
  int cards = 1;
  double cost_per_million_output_tokens = 0;
};

nlohmann::json cost_json(const CostReport& cost);

}  // namespace plumb::serve
