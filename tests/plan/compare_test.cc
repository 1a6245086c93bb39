// plumb plan compare: the cost arithmetic worked by hand, the budget rule, a chip without a price,
// the precision fallback, and a comparison of two small chips end to end.
#include "plan/compare.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "plan/models.h"

namespace plumb::plan {
namespace {

// An H100-like chip with every figure, and a smaller one with no price, no rent and no fp8.
CompareChip priced_chip() {
  HardwareSpec hw;
  hw.name = "Chip A";
  hw.peak_tflops = {{"bf16", 989}, {"fp8", 1979}};
  hw.hbm_gb = 80;
  hw.hbm_tbps = 3.35;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 450;
  hw.scaleout_gbps_per_device = 50;
  hw.efficiency = 0.8;
  hw.tdp_w = 700;
  hw.price_usd = 30000;
  hw.rent_usd_per_hour = 4;
  hw.price_date = "2025-01";
  return {"chip-a", "chip-a.yaml", hw};
}

CompareChip unpriced_chip() {
  HardwareSpec hw;
  hw.name = "Chip B";
  hw.peak_tflops = {{"bf16", 400}};
  hw.hbm_gb = 64;
  hw.hbm_tbps = 1.6;
  hw.devices_per_node = 8;
  hw.scaleup_gbps_per_device = 196;
  hw.scaleout_gbps_per_device = 25;
  hw.tdp_w = 350;
  return {"chip-b", "chip-b.yaml", hw};
}

HardwareSpec costs_chip(double tdp_w, double price, std::optional<double> rent) {
  HardwareSpec hw;
  hw.tdp_w = tdp_w;
  hw.price_usd = price;
  hw.rent_usd_per_hour = rent;
  return hw;
}

TEST(PlanCompare, CostsOfAWorkedRun) {
  // 1,024 devices of 500 W at $10,000 or $2 per hour, 10 days at PUE 1.2:
  //   wall hours 240; device-hours 1,024 × 240 = 245,760;
  //   energy 1,024 × 500 W × 240 h × 1.2 = 147,456,000 Wh = 147.456 MWh;
  //   site power 1,024 × 500 W × 1.2 = 614,400 W = 0.6144 MW;
  //   buy 1,024 × $10,000 = $10,240,000; rent 245,760 × $2 = $491,520;
  //   renting a device costs its price after 10,000 / (2 × 24) = 208.33 days.
  const CompareCosts a = compare_costs(10, 1024, costs_chip(500, 10000, 2), 1.2);
  EXPECT_DOUBLE_EQ(a.days, 10);
  EXPECT_DOUBLE_EQ(a.device_hours, 245760);
  EXPECT_DOUBLE_EQ(*a.energy_mwh, 147.456);
  EXPECT_DOUBLE_EQ(*a.site_mw, 0.6144);
  EXPECT_DOUBLE_EQ(*a.buy_usd, 10240000);
  EXPECT_DOUBLE_EQ(*a.rent_usd, 491520);
  EXPECT_NEAR(*a.break_even_days, 208.333333, 1e-6);
  // 256 devices of 1,000 W at $40,000 and no rent, 20 days at PUE 1.5: 480 h, 122,880
  // device-hours, 256 × 1,000 × 480 × 1.5 = 184.32 MWh, 0.384 MW, $10,240,000; no rent, no
  // break-even.
  const CompareCosts b = compare_costs(20, 256, costs_chip(1000, 40000, std::nullopt), 1.5);
  EXPECT_DOUBLE_EQ(b.device_hours, 122880);
  EXPECT_DOUBLE_EQ(*b.energy_mwh, 184.32);
  EXPECT_DOUBLE_EQ(*b.site_mw, 0.384);
  EXPECT_DOUBLE_EQ(*b.buy_usd, 10240000);
  EXPECT_FALSE(b.rent_usd);
  EXPECT_FALSE(b.break_even_days);
}

TEST(PlanCompare, ACostWithoutTdpOrPriceIsAbsent) {
  const CompareCosts c = compare_costs(1, 8, HardwareSpec{}, 1.2);
  EXPECT_DOUBLE_EQ(c.device_hours, 192);  // 8 × 24
  EXPECT_FALSE(c.energy_mwh);
  EXPECT_FALSE(c.site_mw);
  EXPECT_FALSE(c.buy_usd);
  EXPECT_FALSE(c.rent_usd);
}

TEST(PlanCompare, LargestSmoothNodeCount) {
  // 5-smooth: 2^a · 3^b · 5^c. 7 → 6; 13 → 12; 17 → 16; 1,373 (prime) → 1,350 = 2 · 3³ · 5²;
  // 1,562 → 1,536 = 2⁹ · 3 (1,537–1,562 each have a factor above 5: 1,540 = 2² · 5 · 7 · 11, ...).
  const std::pair<int64_t, int64_t> cases[] = {{0, 0},    {1, 1},       {7, 6},      {13, 12},
                                               {17, 16},  {1250, 1250}, {1373, 1350},
                                               {1562, 1536}};
  for (const auto& [n, smooth] : cases) EXPECT_EQ(largest_smooth(n), smooth) << n;
}

TEST(PlanCompare, BudgetBuysWholeSmoothNodesPerTier) {
  // $100M at $10,000 a device, 8 per node: a node costs $80,000.
  //   all of it: ⌊1e8 / 8e4⌋ = 1,250 nodes (2 · 5⁴) → 10,000 devices;
  //   half:      625 nodes (5⁴) → 5,000; a quarter: ⌊312.5⌋ = 312 → 300 nodes → 2,400.
  const std::vector<BudgetCount> c = budget_counts(100e6, 10000, 8);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].devices, 10000);
  EXPECT_DOUBLE_EQ(c[0].share, 1);
  EXPECT_EQ(c[1].devices, 5000);
  EXPECT_DOUBLE_EQ(c[1].share, 0.5);
  EXPECT_EQ(c[2].devices, 2400);
  EXPECT_DOUBLE_EQ(c[2].share, 0.25);
}

TEST(PlanCompare, BudgetBelowANodeOrBeyondTheMaximum) {
  // $100,000 buys one $80,000 node; half of it buys none: one count.
  const std::vector<BudgetCount> one = budget_counts(100000, 10000, 8);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].devices, 8);
  EXPECT_TRUE(budget_counts(50000, 10000, 8).empty());
  // $10T at $1 a device: capped at kMaxDevices = 2²⁴ (2²¹ nodes of 8); every tier is capped the
  // same, so the repeats are dropped.
  const std::vector<BudgetCount> capped = budget_counts(1e13, 1, 8);
  ASSERT_EQ(capped.size(), 1u);
  EXPECT_EQ(capped[0].devices, kMaxDevices);
}

TEST(PlanCompare, PrecisionFallsBackToBf16WithANote) {
  std::vector<std::string> notes;
  EXPECT_EQ(precision_for(priced_chip().hardware, "fp8", notes), "fp8");
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(precision_for(unpriced_chip().hardware, "fp8", notes), "bf16");
  EXPECT_EQ(notes, std::vector<std::string>{"Chip B gives no fp8 peak: compared in bf16"});
}

CompareSpec small_run() {
  CompareSpec s;
  s.tokens = 1e11;
  return s;
}

TEST(PlanCompare, TwoChipsAtTheSameCount) {
  const ModelSpec m = test_models::llama3_8b();
  CompareSpec s = small_run();
  s.devices = {64};
  const Comparison c = compare(m, {priced_chip(), unpriced_chip()}, s);
  ASSERT_EQ(c.chips.size(), 2u);
  for (const ChipComparison& chip : c.chips) {
    ASSERT_EQ(chip.rows.size(), 1u) << chip.chip.label;
    const CompareRow& r = chip.rows[0];
    EXPECT_EQ(r.devices, 64);
    EXPECT_EQ(r.budget_share, 0);
    ASSERT_TRUE(r.best) << r.why;
    EXPECT_EQ(r.best->layout.devices(), 64);
    ASSERT_TRUE(r.costs) << r.why;
    // The row's costs are the outlook's wall time put through compare_costs.
    ASSERT_TRUE(r.outlook.cost);
    EXPECT_DOUBLE_EQ(r.costs->days, r.outlook.cost->days);
    EXPECT_DOUBLE_EQ(r.costs->device_hours, r.outlook.cost->device_hours);
    EXPECT_NEAR(*r.costs->energy_mwh, *r.outlook.cost->energy_mwh, 1e-9 * *r.costs->energy_mwh);
    EXPECT_DOUBLE_EQ(*r.costs->site_mw, 64 * *chip.chip.hardware.tdp_w * 1.2 / 1e6);
  }
  const CompareCosts& a = *c.chips[0].rows[0].costs;
  EXPECT_DOUBLE_EQ(*a.buy_usd, 64 * 30000.0);
  EXPECT_DOUBLE_EQ(*a.rent_usd, 4 * a.device_hours);
  // The chip without a price: days and energy, no money.
  const CompareCosts& b = *c.chips[1].rows[0].costs;
  EXPECT_FALSE(b.buy_usd);
  EXPECT_FALSE(b.rent_usd);
  // A faster chip on the same count trains in fewer days.
  EXPECT_LT(a.days, b.days);
  EXPECT_EQ(c.chips[1].notes,
            std::vector<std::string>{"chip-b has no measured GEMM efficiency: 0.78 assumed"});
}

TEST(PlanCompare, ABudgetSizesEachPricedChip) {
  // $2M at $30,000 a device, 8 per node ($240,000): 8 nodes (⌊8.33⌋) → 64 devices; half 4 nodes
  // → 32; a quarter 2 nodes → 16. The chip without a price gets no row and a note.
  const ModelSpec m = test_models::llama3_8b();
  CompareSpec s = small_run();
  s.budget_usd = 2e6;
  const Comparison c = compare(m, {priced_chip(), unpriced_chip()}, s);
  const std::vector<CompareRow>& rows = c.chips[0].rows;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].devices, 64);
  EXPECT_EQ(rows[1].devices, 32);
  EXPECT_EQ(rows[2].devices, 16);
  EXPECT_DOUBLE_EQ(rows[2].budget_share, 0.25);
  for (const CompareRow& r : rows) {
    ASSERT_TRUE(r.costs) << r.why;
    EXPECT_LE(*r.costs->buy_usd, r.budget_share * 2e6);
  }
  // Fewer devices of the same chip: more days.
  EXPECT_LT(rows[0].costs->days, rows[2].costs->days);
  EXPECT_TRUE(c.chips[1].rows.empty());
  EXPECT_EQ(c.chips[1].notes.back(),
            "chip-b has no price_usd: a budget cannot size its cluster (--devices compares it at "
            "given counts)");
}

TEST(PlanCompare, ACountWhereNothingFitsSaysWhy) {
  // Llama 3 8B's 16 bytes of model states per parameter (128 GB) cannot go on one 80 GB device.
  const ModelSpec m = test_models::llama3_8b();
  CompareSpec s = small_run();
  s.devices = {1};
  const Comparison c = compare(m, {priced_chip()}, s);
  const CompareRow& r = c.chips[0].rows[0];
  EXPECT_FALSE(r.best);
  EXPECT_FALSE(r.costs);
  EXPECT_EQ(r.why.rfind("no layout fits in 80 GB (", 0), 0u) << r.why;
}

TEST(PlanCompare, EveryChipThatCannotBePlannedAtOnce) {
  CompareChip no_links = priced_chip();
  no_links.hardware.scaleout_gbps_per_device.reset();
  CompareChip no_bf16 = unpriced_chip();
  no_bf16.hardware.peak_tflops = {{"fp8", 800}};
  const CompareSpec s = small_run();
  try {
    compare(test_models::llama3_8b(), {no_links, no_bf16}, s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "chip-a.yaml: chip-a gives no scaleout_gbps_per_device: plan compare builds each "
              "chip's cluster from it\n"
              "chip-b.yaml: chip-b gives no bf16 peak: plan compare runs every chip in bf16 or the "
              "--precision it has");
  }
}

}  // namespace
}  // namespace plumb::plan
