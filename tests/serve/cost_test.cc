#include "serve/cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"

namespace plumb::serve {
namespace {

std::string error_of(double price, const std::string& hardware) {
  try {
    price_from(price, hardware);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "(no error)";
}

// $2 a card-hour, one card, an hour, a million tokens: $2 per million.
TEST(ServeCost, OneCardOneHourOneMillionTokens) {
  EXPECT_DOUBLE_EQ(cost_per_million_output_tokens(2, 1, 3600, 1'000'000), 2.0);
}

// 8 cards at $3.49 for 10 minutes making 2 million tokens: 3.49 × 8 × (1/6) / 2 = $2.3267.
TEST(ServeCost, EightCardsTenMinutes) {
  EXPECT_NEAR(cost_per_million_output_tokens(3.49, 8, 600, 2'000'000), 2.326667, 1e-6);
}

TEST(ServeCost, NoTokensHasNoPricePerToken) {
  EXPECT_TRUE(std::isnan(cost_per_million_output_tokens(2, 1, 3600, 0)));
  CostReport c = cost_of({2, "--price"}, 1, ServeSummary{});
  EXPECT_TRUE(cost_json(c)["cost_per_million_output_tokens"].is_null());
}

TEST(ServeCost, FromASummaryAndAsJson) {
  ServeSummary s;
  s.duration_s = 1800;
  s.output_tokens = 500'000;
  const CostReport c = cost_of({4, "--price"}, 2, s);
  EXPECT_DOUBLE_EQ(c.cost_per_million_output_tokens, 8.0);  // 4 × 2 × 0.5 / 0.5
  const nlohmann::json j = cost_json(c);
  EXPECT_EQ(j["price_source"], "--price");
  EXPECT_EQ(j["cards"], 2);
  EXPECT_DOUBLE_EQ(j["run_hours"].get<double>(), 0.5);
  EXPECT_EQ(j["output_tokens"], 500000);
  EXPECT_DOUBLE_EQ(j["cost_per_million_output_tokens"].get<double>(), 8.0);
}

TEST(ServeCost, PriceFromTheCatalogsRentFigure) {
  const std::optional<Price> p = price_from(0, "h100-sxm");
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->per_card_hour, 3.49);
  EXPECT_EQ(p->source, "catalog: h100-sxm rent (2026-09-25)");
}

TEST(ServeCost, PriceFromTheOption) {
  EXPECT_FALSE(price_from(0, "").has_value());
  EXPECT_EQ(price_from(2.5, "")->source, "--price");
}

TEST(ServeCost, BadPrices) {
  EXPECT_EQ(error_of(-1, ""), "--price -1: expected a price per card-hour above 0");
  EXPECT_EQ(error_of(2, "h100-sxm"),
            "--price 2 and --hardware h100-sxm both give a price per card-hour: give one");
  const std::string unknown = error_of(0, "h100");
  EXPECT_EQ(unknown.rfind("--hardware: unknown hardware 'h100' (did you mean 'h100-sxm'?); expected "
                          "one of ", 0), 0u)
      << unknown;
  EXPECT_NE(unknown.find("(or --price PER_CARD_HOUR)"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace plumb::serve
