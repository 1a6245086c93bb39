#include "serve/pareto.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/serve_pareto_html.h"
#include "report/serve_peak_reporter.h"

namespace plumb::serve {
namespace {

ServeRun run(int concurrency, double tpot_mean_ms, double output_tokens_per_second) {
  ServeRun r;
  r.concurrency = concurrency;
  r.summary.tpot_ms.count = 100;
  r.summary.tpot_ms.mean = tpot_mean_ms;
  r.summary.output_tokens_per_second = output_tokens_per_second;
  return r;
}

// c=1: 100 tok/s/user, 100 tok/s; c=4: 50, 400; c=8: 25, 800; c=16 after saturation: 20, 700 —
// beaten by c=8 on both figures.
std::vector<ServeRun> sweep() {
  return {run(1, 10, 100), run(4, 20, 400), run(8, 40, 800), run(16, 50, 700)};
}

TEST(Pareto, PerUserIsOneThousandOverTheMeanTpotAndPerCardDividesByTheCards) {
  const std::vector<ParetoPoint> p = pareto_points(sweep(), 2);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].label, "c=1");
  EXPECT_DOUBLE_EQ(p[0].tokens_per_s_per_user, 100);
  EXPECT_DOUBLE_EQ(p[0].tokens_per_s_per_card, 50);
  EXPECT_DOUBLE_EQ(p[2].tokens_per_s_per_card, 400);
}

TEST(Pareto, TheFrontierLeavesOutARunBeatenOnBoth) {
  const std::vector<ParetoPoint> p = pareto_points(sweep(), 1);
  EXPECT_TRUE(p[0].on_frontier);
  EXPECT_TRUE(p[1].on_frontier);
  EXPECT_TRUE(p[2].on_frontier);
  EXPECT_FALSE(p[3].on_frontier);
}

TEST(Pareto, RunsWithoutATpotAreLeftOut) {
  std::vector<ServeRun> runs = sweep();
  runs[1].summary.tpot_ms.count = 0;
  EXPECT_EQ(pareto_points(runs, 1).size(), 3u);
}

TEST(Pareto, ConsoleTableMarksTheFrontierFastestUserFirst) {
  std::ostringstream out;
  report::print_pareto_table(out, pareto_points(sweep(), 1));
  EXPECT_EQ(out.str(),
            "# Pareto: tokens/s per user (1000 / mean TPOT) against output tokens/s per card; * on "
            "the frontier (no other run is better on both)\n"
            "load               tok/s/user   tok/s/card  tpot mean    SLO  cost/Mtok\n"
            "* c=1                     100          100         10      -          -\n"
            "* c=4                      50          400         20      -          -\n"
            "* c=8                      25          800         40      -          -\n"
            "  c=16                     20          700         50      -          -\n");
}

TEST(Pareto, HtmlPageIsSelfContainedWithAPointPerRun) {
  const std::string page = report::pareto_html(pareto_points(sweep(), 1), "a <test>");
  EXPECT_NE(page.find("<title>plumb serve · a &lt;test&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"front\">c=8</td>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>c=16</td>"), std::string::npos);
  EXPECT_NE(page.find("c=16\n20 tok/s per user (mean TPOT 50 ms)\n700 tok/s per card"), std::string::npos);
}

TEST(Pareto, EmptyHasANoteInsteadOfAChart) {
  fmt::memory_buffer out;
  report::append_pareto_section({}, out);
  EXPECT_EQ(fmt::to_string(out),
            "<section id=\"pareto\"><h2>Tokens/s per user against tokens/s per card</h2><p "
            "class=\"note\">No run measured a TPOT: nothing to plot.</p></section>\n");
}

TEST(PeakReport, ConsoleShowsEveryProbeTheAnswerPerCardAndHowToReproduceIt) {
  ServeResult r;
  r.setup.cards = 8;
  r.runs = {run(16, 30, 500), run(32, 60, 600)};
  r.runs[0].cost = CostReport{3.49, "--price", 8, 0.01, 1000000, 0.2792};
  PeakResult p;
  p.axis = "concurrency";
  p.cards = 8;
  BoundTally ok{"tpot", 50, 35, 500, 0, {Judgement::holds, 0}};
  BoundTally bad{"tpot", 50, 65, 500, 500, {Judgement::fails, 0}};
  p.probes = {{16, 500, 500, 1, {ok}, 0, true, true, "held", 0},
              {32, 500, 500, 1, {bad}, 0, false, true, "over", 1}};
  p.best = 16;
  p.best_per_card = 2;
  p.lowest_failed = 32;
  p.stop_reason = "stopped";
  p.reproduce = "plumb serve bench --url http://h --concurrency 16";
  r.peak = p;
  std::ostringstream out;
  report::print_peak_console(out, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("probe  concurrency  requests   tpot p99 ms verdict  why\n"
                      "    1           16       500            35    pass  held\n"
                      "    2           32       500            65    fail  over\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("peak: concurrency 16 (2 per card on 8 cards: the batch each card sees): stopped\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cost at the peak: 0.2792 per million output tokens (3.49 per card-hour, --price)\n"),
            std::string::npos);
  EXPECT_NE(text.find("reproduce: plumb serve bench --url http://h --concurrency 16\n"), std::string::npos);
  const nlohmann::json j = report::peak_json(p);
  EXPECT_EQ(j["best"], 16);
  EXPECT_EQ(j["best_per_card"], 2);
  EXPECT_EQ(j["probes"][1]["bounds"][0]["judgement"], "fails");
}

}  // namespace
}  // namespace plumb::serve
