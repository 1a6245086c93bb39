// plumb plan compare's reporters on a comparison built by hand (no predictor): the console table
// (golden), the JSON's keys and nulls, the HTML page's table, highlights and charts, and the short
// forms of money, counts and layouts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/plan_compare_html.h"
#include "report/plan_reporter.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

// chip-a: 1,024 devices of 700 W at $30,000 or $5 an hour, 10 days at PUE 1.2:
//   245,760 device-hours; 1,024 × 700 W × 240 h × 1.2 = 206.4 MWh; 1,024 × 700 W × 1.2 = 0.86 MW;
//   buy 1,024 × $30,000 = $30.7M; rent 245,760 × $5 = $1.23M; its price after 30,000 / (5 × 24)
//   = 250 days of rent. chip-b: no price, no rent, no TDP, and no layout that fits.
plan::Comparison comparison() {
  plan::Comparison c;
  c.model = "m";
  c.spec.tokens = 1e12;
  c.spec.devices = {1024};
  c.seconds = 0.5;
  plan::ChipComparison a;
  a.chip.label = "chip-a";
  a.chip.source = "/nowhere/chip-a.yaml";
  a.chip.hardware.name = "Chip A";
  a.chip.hardware.tdp_w = 700;
  a.chip.hardware.price_usd = 30000;
  a.chip.hardware.price_date = "2025-01";
  a.chip.hardware.rent_usd_per_hour = 5;
  a.chip.hardware.rent_date = "2025-06-01";
  a.precision = "bf16";
  a.devices_per_node = 8;
  plan::CompareRow row;
  row.devices = 1024;
  plan::Prediction best;
  best.layout.tp = 8;
  best.layout.pp = 4;
  best.layout.dp = 32;
  best.mfu = 0.5;
  row.best = best;
  // A band of 8 runs, mean 0, variance 0.01: half width t(0.9; 7) · √(0.01 · 9/8) = 0.1501, so
  // MFU 50% · e^∓0.1501 = 43.0% to 58.1%.
  plan::BandModel band;
  band.rows = 8;
  band.base_var = 0.01;
  band.t = plan::student_t(0.8, 7);
  row.band = band;
  row.outlook.at_daly.goodput = 0.9;
  row.costs = plan::compare_costs(10, 1024, a.chip.hardware, 1.2);
  a.rows = {row};
  plan::ChipComparison b;
  b.chip.label = "chip-b";
  b.chip.source = "/nowhere/chip-b.yaml";
  b.chip.hardware.name = "Chip B";
  b.precision = "bf16";
  b.devices_per_node = 8;
  plan::CompareRow none;
  none.devices = 1024;
  none.why = "no layout fits in 64 GB (12 valid tried)";
  b.rows = {none};
  b.notes = {"chip-b has no measured GEMM efficiency: 0.78 assumed"};
  c.chips = {a, b};
  return c;
}

TEST(PlanCompareReporter, ConsoleGolden) {
  std::ostringstream out;
  print_compare(comparison(), out);
  EXPECT_EQ(out.str(),
            "# plumb plan compare · m · 1e+12 tokens · devices 1024 · PUE 1.2\n"
            "# best layout per count by plan search · 1.97e-05 failures per device-hour · energy "
            "and site power at TDP · 0.50 s\n"
            "chip          prec  devices  best layout                             MFU   MFU 80% goodput    "
            "days device-h     MWh site MW     buy    rent  rent>buy\n"
            "chip-a        bf16     1024  tp8 pp4 dp32                          50.0%    43-58%   90.0%    "
            "10.0     246k     206    0.86  $30.7M  $1.23M     250 d\n"
            "chip-b        bf16     1024  no layout fits in 64 GB (12 valid tried)\n"
            "# prices chip-a: buy $30k (2025-01) · rent $5/h (2025-06-01) · /nowhere/chip-a.yaml\n"
            "#        chip-b: no price_usd · no rent_usd_per_hour · /nowhere/chip-b.yaml\n"
            "# note: chip-b has no measured GEMM efficiency: 0.78 assumed\n");
}

TEST(PlanCompareReporter, JsonKeysAndNulls) {
  const nlohmann::json j = compare_json(comparison());
  EXPECT_EQ(j["schema"], "plumb.plan-compare/1");
  EXPECT_EQ(j["devices"], nlohmann::json({1024}));
  EXPECT_TRUE(j["budget_usd"].is_null());
  EXPECT_TRUE(j["budget_tiers"].is_null());
  const nlohmann::json& a = j["chips"][0];
  EXPECT_EQ(a["price_date"], "2025-01");
  const nlohmann::json& row = a["rows"][0];
  EXPECT_EQ(row["found"], true);
  EXPECT_EQ(row["buy_usd"], 30720000.0);
  EXPECT_EQ(row["rent_usd"], 1228800.0);
  EXPECT_EQ(row["break_even_days"], 250.0);
  EXPECT_EQ(row["best"]["layout"]["tp"], 8);
  EXPECT_FALSE(row.contains("budget_share"));
  const nlohmann::json& b = j["chips"][1];
  EXPECT_TRUE(b["price_usd"].is_null());
  EXPECT_TRUE(b["tdp_w"].is_null());
  EXPECT_EQ(b["rows"][0], nlohmann::json({{"devices", 1024},
                                          {"found", false},
                                          {"why", "no layout fits in 64 GB (12 valid tried)"}}));
}

TEST(PlanCompareReporter, HtmlTableHighlightsAndCharts) {
  const std::string page = compare_html(comparison());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // The only row with costs is the best of its device count in days, device-hours, energy, buy
  // and rent (site power and the break-even are not merits): five highlighted cells.
  size_t best = 0;
  for (size_t at = page.find("td class=\"num best\""); at != std::string::npos;
       at = page.find("td class=\"num best\"", at + 1)) {
    ++best;
  }
  EXPECT_EQ(best, 5u);
  EXPECT_NE(page.find("<td class=\"num best\">$30.7M</td>"), std::string::npos);
  EXPECT_NE(page.find("<td colspan=\"11\" class=\"none\">no layout fits in 64 GB"),
            std::string::npos);
  EXPECT_NE(page.find("<th>MFU 80% band</th>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num\">50.0%</td><td class=\"num\">43–58%</td>"),
            std::string::npos);
  // Rent, purchase and energy against days: one line and its points for chip-a in each.
  size_t charts = 0;
  for (size_t at = page.find("<svg class=\"lchart\""); at != std::string::npos;
       at = page.find("<svg class=\"lchart\"", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, 3u);
  EXPECT_NE(page.find("chip-a · 1024 devices\ntp 8 · cp 1 · pp 4"), std::string::npos);
  // Prices with their dates; chip-b has none.
  EXPECT_NE(page.find("<td class=\"num\">30000</td><td>2025-01</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>Chip B</td><td class=\"none\">—</td><td></td>"), std::string::npos);
}

TEST(PlanCompareReporter, ShortForms) {
  EXPECT_EQ(usd_short(983040000), "$983M");
  EXPECT_EQ(usd_short(1.5e9), "$1.5B");
  EXPECT_EQ(usd_short(30000), "$30k");
  EXPECT_EQ(usd_short(950), "$950");
  EXPECT_EQ(count_short(41500000), "41.5M");
  plan::Layout p;
  p.tp = 8;
  p.cp = 2;
  p.pp = 16;
  p.vpp = 2;
  p.dp = 64;
  p.ep = 8;
  EXPECT_EQ(layout_short(p), "tp8 cp2 pp16 vpp2 dp64 ep8");
  p.etp = 1;
  p.schedule = plan::Schedule::kDualPipe;
  p.vpp = 1;
  p.ep_overlap = true;
  p.tp_overlap = true;
  EXPECT_EQ(layout_short(p), "tp8 cp2 pp16 dp64 ep8 etp1 dualpipe ep-ov tp-ov");
}

// The linear chart's edge_pad and point labels, which the compare page's charts use: padded, the
// extreme points sit 16 units inside the plot (64 .. 464 wide, 30 .. 256 high) and a y axis from
// zero stays at zero; each label above its point where it fits. Without them, the chart is drawn
// as before (points on the frame, no label).
TEST(PlanCompareReporter, ChartsPadTheirEdgesAndLabelThePoints) {
  LinearChart c;
  c.width = 480;
  c.height = 300;
  c.y_bytes = false;
  c.series.push_back({"", 0, SeriesStyle::kPoints, {0, 10}, {5, 10}, {"", ""}, {"a", "b"}});
  const auto draw = [](const LinearChart& chart) {
    fmt::memory_buffer out;
    draw_linear_chart(chart, out);
    return fmt::to_string(out);
  };
  const std::string plain = draw(c);
  EXPECT_NE(plain.find("<circle cx=\"64.0\" cy=\"143.0\" r=\"3.5\">"), std::string::npos) << plain;
  EXPECT_NE(plain.find("<circle cx=\"464.0\" cy=\"30.0\" r=\"3.5\">"), std::string::npos) << plain;
  c.edge_pad = 16;
  const std::string padded = draw(c);
  // x: 0 .. 10 widened by 16/368 of its span each side; y: 0 .. 10 padded to 10.82, ticks to 15.
  EXPECT_NE(padded.find("<circle cx=\"80.0\" cy=\"180.7\" r=\"3.5\">"), std::string::npos) << padded;
  EXPECT_NE(padded.find("<circle cx=\"448.0\" cy=\"105.3\" r=\"3.5\">"), std::string::npos) << padded;
  EXPECT_NE(padded.find(">0</text>"), std::string::npos);
  EXPECT_NE(padded.find("<g class=\"plabels\"><text class=\"plabel\" x=\"80.0\" y=\"172.2\" "
                        "text-anchor=\"middle\">a</text><text class=\"plabel\" x=\"448.0\" "
                        "y=\"96.8\" text-anchor=\"middle\">b</text></g>"),
            std::string::npos)
      << padded;
  c.series[0].labels.clear();
  EXPECT_EQ(draw(c).find("plabel"), std::string::npos);
}

}  // namespace
}  // namespace plumb::report
