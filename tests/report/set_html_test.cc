// The page of a baseline set (plumb report of a set, issue 29 item 4): a section per part in order,
// each baseline's figures as the part's own computation gives them, a missing part with its
// reason, two sets side by side with comm overlaid; self-contained and escaped.
#include "report/set_html.h"

#include <gtest/gtest.h>

#include <string>

#include "baseline/step_diff.h"
#include "common/units.h"
#include "support/set_record.h"

namespace plumb::report {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string page(const baseline::Record& a, const baseline::Record* b = nullptr,
                 const baseline::Diff* d = nullptr) {
  fmt::memory_buffer out;
  render_set_html(a, b, d, out);
  return fmt::to_string(out);
}

std::string bytes(double v) { return format_bytes(static_cast<uint64_t>(v)); }

TEST(SetHtml, ASectionPerPartInOrder) {
  const std::string html = page(test::full_set());
  size_t at = 0;
  for (const char* id :
       {"topology", "versions", "communication", "step", "memory", "recovery", "serving"}) {
    const size_t next = html.find(fmt::format("<section id=\"{}\"", id), at);
    ASSERT_NE(next, std::string::npos) << id;
    at = next;
  }
  EXPECT_EQ(count(html, "<td class=\"held\">held</td>"), 7u);
  // allreduce @ world; the serving part's TTFT, TPOT, ITL, E2E, tokens/s and requests/s
  EXPECT_EQ(count(html, "<figure class=\"chart\""), 7u);
  EXPECT_EQ(count(html, "<table class=\"rows serve-runs\">"), 1u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("missing —"), std::string::npos);
}

// Each memory row's figures are those of the baseline computed from the train-events lines.
TEST(SetHtml, MemoryBlockShowsEveryRankAndTheCheckpointCheck) {
  const mem::MemoryBaseline m = test::set_memory_baseline();
  fmt::memory_buffer out;
  append_memory_block(m, out);
  const std::string html = fmt::to_string(out);
  ASSERT_EQ(m.ranks.size(), 2u);
  EXPECT_EQ(count(html, "<tr class=\"leak\">"), 1u);
  for (const mem::RankMemory& r : m.ranks) {
    EXPECT_NE(html.find("<td class=\"num\">" + bytes(*r.settled_bytes) + "</td>"), std::string::npos)
        << r.rank;
  }
  EXPECT_NE(html.find("<td class=\"num\">+" + bytes(m.ranks[1].creep.slope_bytes_per_step) +
                      "</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<table class=\"rows checkpoint\">"), std::string::npos);
  EXPECT_NE(html.find(bytes(*m.checkpoint.after_load_bytes) + " (step 6)"), std::string::npos);
  EXPECT_NE(html.find("<td>" + m.checkpoint.verdict + "</td>"), std::string::npos);
}

TEST(SetHtml, RecoveryBlockHasARowPerFailure) {
  const supervise::RecoveryBaseline b = test::set_recovery();
  fmt::memory_buffer out;
  append_recovery_block(b, out);
  const std::string html = fmt::to_string(out);
  EXPECT_EQ(count(html, "<tr><td class=\"num\">"), b.recoveries.size());
  EXPECT_NE(html.find("<td>killed by signal 9</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">10.25</td>"), std::string::npos);  // its downtime
  EXPECT_NE(html.find("a drill of 2 fault(s)"), std::string::npos);
}

TEST(SetHtml, StepBlockHasTheSummaryFigures) {
  const baseline::StepSummary s =
      baseline::summarize_step(test::step_only_record().step, "test");
  fmt::memory_buffer out;
  append_step_block(s, out);
  const std::string html = fmt::to_string(out);
  for (const baseline::StepSummary::Figure& f : s.figures) {
    EXPECT_NE(html.find(fmt::format("<td>{}</td><td class=\"num\">{:.1f}</td>", f.figure,
                                    f.median_us)),
              std::string::npos)
        << f.figure;
  }
}

TEST(SetHtml, AMissingPartSaysWhyAndDrawsNothing) {
  const std::string html = page(test::set_without_recovery());
  EXPECT_NE(html.find("<td class=\"missing\">missing — --skip recovery: the drill was not run</td>"),
            std::string::npos);
  EXPECT_NE(html.find("recovery: missing — --skip recovery: the drill was not run</p>"),
            std::string::npos);
  EXPECT_EQ(html.find("<table class=\"rows recoveries\">"), std::string::npos);
}

TEST(SetHtml, TwoSetsSideBySideWithCommOverlaid) {
  const baseline::Record a = test::full_set("a");
  const baseline::Record b = test::set_without_recovery("b<&>");
  const baseline::Diff d = baseline::diff(a, b, {});
  const std::string html = page(a, &b, &d);
  // topology, step, memory, recovery, serving
  EXPECT_EQ(count(html, "<div class=\"pair\">"), 5u);
  EXPECT_EQ(count(html, "<table class=\"rows serve-runs\">"), 1u);  // B: not asked for
  EXPECT_NE(html.find("serving: missing — not asked for: no --serve-url</p>"), std::string::npos);
  EXPECT_EQ(count(html, "<table class=\"rows mem-ranks\">"), 2u);
  EXPECT_EQ(count(html, "<table class=\"rows recoveries\">"), 1u);
  EXPECT_NE(html.find("<section id=\"diff\">"), std::string::npos);
  EXPECT_NE(html.find("b&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(html.find("b<&>"), std::string::npos);
}

}  // namespace
}  // namespace plumb::report
