// The HTML page of `plumb mem report`: the sections and figures of the leak and fragmented-OOM
// fixtures, downsampling that keeps every bucket's maximum, escaping, the policy comparison from
// hand-built replay results, no remote resource, the same bytes for the same input.
#include "report/mem_html.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <string>

#include "mem/analysis.h"
#include "mem/snapshot_reader.h"
#include "report/mem_reporter.h"
#include "report/svg_chart.h"

namespace plumb::report {
namespace {

constexpr uint64_t kMiB = 1 << 20;

struct Page {
  mem::Trace trace;
  mem::Analysis analysis;
};

Page fixture(const std::string& name) {
  Page p;
  p.trace = mem::read_trace(PLUMB_TEST_FIXTURES "/mem/" + name, 0);
  p.analysis = mem::analyze(p.trace, {});
  return p;
}

std::string render(const Page& p, const std::vector<mem::ReplayResult>& policies = {},
                   const MemHtmlOptions& o = {}) {
  std::ostringstream out;
  write_mem_html(p.trace, p.analysis, policies, o, out);
  return out.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

mem::ReplayResult replay_row(std::string policy, uint64_t peak_reserved, size_t events) {
  mem::ReplayResult r;
  r.policy = std::move(policy);
  r.description = "caching allocator, " + r.policy;
  r.peak_reserved = peak_reserved;
  r.fragmentation = 0.125;
  r.segment_allocs = 19;
  r.segment_frees = 2;
  r.cache_flushes = 1;
  for (size_t i = 0; i < events; ++i) r.reserved.push_back(peak_reserved * (i + 1) / events);
  return r;
}

TEST(MemHtml, LeakFixture) {
  const Page p = fixture("leak.pickle");
  const std::string html = render(p);
  for (const char* id :
       {"id=\"timeline\"", "id=\"fragmentation\"", "id=\"steps\"", "id=\"policies\""}) {
    EXPECT_TRUE(has(html, id)) << id;
  }
  // Timeline, fragmentation, per-step minimum; no policy chart without policies.
  EXPECT_EQ(count(html, "<svg class=\"lchart\""), 3u);
  EXPECT_TRUE(has(html, "910 events"));
  EXPECT_TRUE(has(html, "Creep: <b>LEAK</b>"));
  EXPECT_TRUE(has(html, "<b>+3 MiB/step</b>"));
  EXPECT_TRUE(has(html, "3145728 B/step"));
  EXPECT_TRUE(has(html, "fit: +3 MiB/step (leak)"));
  EXPECT_TRUE(has(html, "peak reserved <b>702 MiB</b> at event 835 (step 37, "));
  EXPECT_TRUE(has(html, "No OOM in the trace."));
  // The peaks are marked, with exact bytes in their hover text.
  EXPECT_TRUE(has(html, ">peak reserved 702 MiB</text>"));
  EXPECT_TRUE(has(html, "peak allocated 632.1 MiB (662855680 B) at event 902 (step 40, 7.248 s)"));
  // Stacked by category; 40 step starts as light rules; 40 per-step points, the first and last
  // minimum as the fixture's README gives them.
  EXPECT_TRUE(has(html, "<polygon class=\"area k0\""));     // parameters
  EXPECT_TRUE(has(html, "<polyline class=\"line k10\""));   // reserved
  EXPECT_EQ(count(html, "<line class=\"rule\""), 2 * 40u);  // timeline and fragmentation
  EXPECT_TRUE(has(html, "step 1 · events 22–"));
  EXPECT_TRUE(has(html, "minimum allocated 384.1 MiB (402808832 B)"));
  EXPECT_TRUE(has(html, "minimum allocated 501.1 MiB (525492224 B)"));
  // 910 events < 2,000 points: nothing downsampled.
  EXPECT_FALSE(has(html, "drawn as"));
  EXPECT_TRUE(has(html, "plumb mem report FILE --policies pytorch,expandable,..."));
}

TEST(MemHtml, FragmentedOomFixture) {
  const Page p = fixture("fragmented_oom.pickle");
  const std::string html = render(p);
  // Its steps are not found (two passes of 64 allocations without a free between them), so
  // places are events and times.
  EXPECT_TRUE(has(html,
                  "<b>OOM</b> at event 335 (0.378 s): <b>fragmentation</b> — 512 MiB asked, "
                  "2.2 GiB free (2.0 GiB cached in segments + 200 MiB on the device)"));
  EXPECT_TRUE(has(html, ">OOM: fragmentation</text>"));
  // The timeline, fragmentation, and the largest free block against the request.
  EXPECT_EQ(count(html, "<line class=\"rule alert\""), 3u);
  EXPECT_TRUE(has(html, "Creep: too few complete steps to judge"));
  EXPECT_FALSE(has(html, "fit: "));
  EXPECT_TRUE(has(html, "peak reserved <b>78.0 GiB</b> at event 138 (0.187 s)"));
  EXPECT_TRUE(has(html, "no steps found"));
}

// The leaking stack by name near the top of the page, as the console's "grew" line names it
// (one string: mem::LeakSite::where), with its slope, live allocations and the whole stack.
TEST(MemHtml, LeakFixtureNamesTheLeakingStack) {
  const Page p = fixture("leak.pickle");
  const std::string html = render(p);
  std::ostringstream console;
  print_mem_analysis(p.analysis, console);
  EXPECT_TRUE(has(console.str(),
                  "grew       +3 MiB per step, 39 live allocations at the last step: training_log "
                  "(megatron/training/training.py:1275) < train "
                  "(megatron/training/training.py:1540)"));
  const size_t box = html.find("<div class=\"leak\" id=\"leak\"><h2>Leaking stacks</h2>");
  ASSERT_NE(box, std::string::npos);
  EXPECT_LT(box, html.find("<section id=\"timeline\">"));  // before the first chart
  EXPECT_TRUE(has(html,
                  "<b>+3 MiB per step</b></td><td class=\"num\">39</td><td class=\"num\">0 B "
                  "→ 117 MiB</td><td class=\"stack\"><code>training_log "
                  "(megatron/training/training.py:1275) &lt; train "
                  "(megatron/training/training.py:1540)</code>"));
  EXPECT_TRUE(has(html, "title=\"3145728 B per step\""));
  EXPECT_TRUE(has(html, "<summary>the whole stack ("));
  // A healthy loop has no such box.
  EXPECT_FALSE(has(render(fixture("healthy.pickle")), "Leaking stacks"));
}

// A fragmentation OOM: the largest free block over the events on its own chart, the request as
// a dashed red line, rings on the largest block and on the free bytes in all at the OOM.
TEST(MemHtml, FragmentedOomChartsTheLargestFreeBlockAndTheRequest) {
  const Page p = fixture("fragmented_oom.pickle");
  const std::string html = render(p);
  // The timeline, fragmentation, the largest free block, steps (no policies here).
  EXPECT_EQ(count(html, "<svg class=\"lchart\""), 4u);
  EXPECT_TRUE(has(html, "<figcaption>Largest free block and the OOM request</figcaption>"));
  EXPECT_TRUE(has(html, "largest free block</span>"));  // the legend
  EXPECT_TRUE(has(html, "OOM request: 512 MiB asked at event 335</span>"));
  EXPECT_TRUE(has(html, "<polyline class=\"line k4 d1\""));
  EXPECT_TRUE(has(html, ">largest free block 32 MiB</text>"));
  EXPECT_TRUE(has(html, ">free in all 2.2 GiB</text>"));
  EXPECT_TRUE(has(html,
                  "OOM at event 335 (0.378 s): the largest free block in a segment 32 MiB "
                  "(33554432 B), 512 MiB (536870912 B) asked"));
  EXPECT_TRUE(has(html, "largest free block 32 MiB (33554432 B)\nreserved − allocated"));
  // Without an OOM there is no such chart.
  EXPECT_FALSE(has(render(fixture("leak.pickle")), "largest free block, and the OOM request"));
}

// Every byte figure names its binary unit as the console does (format_bytes), the axes too.
TEST(MemHtml, AxesNameTheirBinaryUnits) {
  const std::string oom = render(fixture("fragmented_oom.pickle"));
  EXPECT_TRUE(has(oom, "dominant-baseline=\"middle\">80 GiB</text>"));
  EXPECT_TRUE(has(oom, "dominant-baseline=\"middle\">0 GiB</text>"));
  const std::string leak = render(fixture("leak.pickle"));
  EXPECT_TRUE(has(leak, "dominant-baseline=\"middle\">800 MiB</text>"));
  EXPECT_TRUE(has(leak, "dominant-baseline=\"middle\">550 MiB</text>"));  // per-step minimum
  for (const std::string* html : {&oom, &leak}) {
    EXPECT_FALSE(std::regex_search(*html, std::regex(">[0-9.]+[KMGT]</text>")));
  }
  EXPECT_EQ(byte_tick_label(512.0 * kMiB, 256.0 * kMiB), "512 MiB");
  EXPECT_EQ(byte_tick_label(1536.0 * kMiB, 512.0 * kMiB), "1536 MiB");
  EXPECT_EQ(byte_tick_label(0, 20.0 * 1024 * kMiB), "0 GiB");
  EXPECT_EQ(byte_tick_label(100, 20), "100 B");
}

std::vector<double> indices(size_t n) {
  std::vector<double> x;
  for (size_t i = 0; i < n; ++i) x.push_back(static_cast<double>(i));
  return x;
}

// Events 0..9 in 4 columns of width 9/4 = 2.25: {0 1 2} {3 4} {5 6} {7 8 9}, each drawn at its
// maximum.
TEST(MemHtml, DownsamplingKeepsEachColumnsMaximum) {
  const std::vector<uint64_t> v = {1, 5, 2, 8, 3, 3, 9, 0, 4, 7};
  const std::vector<Bucket> b = bucket_maxima(indices(10), v, 4);
  ASSERT_EQ(b.size(), 4u);
  std::vector<size_t> ends, peaks;
  for (const Bucket& x : b) {
    ends.push_back(x.end);
    peaks.push_back(x.peak);
  }
  EXPECT_EQ(ends, (std::vector<size_t>{3, 5, 7, 10}));
  EXPECT_EQ(peaks, (std::vector<size_t>{1, 3, 6, 9}));
  EXPECT_DOUBLE_EQ(b[1].left, 2.25);
  EXPECT_DOUBLE_EQ(b[1].right, 4.5);
  EXPECT_DOUBLE_EQ(b[3].right, 9);
  // The step line: each column at its maximum across its width, then the value after its last
  // event until the next column.
  const StepLine line = step_line(b);
  EXPECT_EQ(line.event, (std::vector<size_t>{1, 1, 2, 2, 3, 3, 4, 4, 6, 6, 6, 6, 9, 9, 9}));
  EXPECT_EQ(line.x, (std::vector<double>{0, 2.25, 2.25, 2.25, 2.25, 4.5, 4.5, 4.5, 4.5, 6.75, 6.75,
                                         6.75, 6.75, 9, 9}));
  // Fewer events than columns: every event a bucket of its own.
  EXPECT_EQ(bucket_maxima(indices(10), v, 500).size(), 10u);
  EXPECT_EQ(bucket_maxima({0, 0, 0}, {3, 3, 3}, 10).front().peak, 0u);  // ties: the first
  EXPECT_TRUE(bucket_maxima({}, {}, 10).empty());
  // A single spike among 100,000 values survives 500 columns.
  std::vector<uint64_t> flat(100'000, 1);
  flat[54'321] = 99;
  size_t kept = 0;
  for (const Bucket& x : bucket_maxima(indices(flat.size()), flat, 500)) kept += x.peak == 54'321;
  EXPECT_EQ(kept, 1u);
}

// On a time axis a burst far shorter than a column is drawn at the column's full width.
TEST(MemHtml, ShortSpikeTakesTheColumnsWidth) {
  const std::vector<Bucket> b = bucket_maxima({0, 5, 5.0001, 5.0002, 10}, {1, 1, 9, 1, 1}, 10);
  ASSERT_EQ(b.size(), 3u);  // columns 0, 5 and 9; the others are empty
  EXPECT_EQ(b[1].begin, 1u);
  EXPECT_EQ(b[1].end, 4u);
  EXPECT_EQ(b[1].peak, 2u);
  EXPECT_DOUBLE_EQ(b[1].left, 5);
  EXPECT_DOUBLE_EQ(b[1].right, 6);
}

TEST(MemHtml, DownsampledPageKeepsThePeak) {
  const Page p = fixture("leak.pickle");
  MemHtmlOptions o;
  o.max_points = 200;  // 50 columns
  o.by_event_index = true;
  const std::string html = render(p, {}, o);
  EXPECT_TRUE(has(html, "910 events drawn in 50 columns"));
  EXPECT_TRUE(has(html, "event index</text>"));
  // The timeline's hover bands: one per column; the peak event is the one its column shows.
  const size_t timeline = html.find("id=\"timeline\"");
  const size_t band_group = html.find("<g class=\"hover\">", timeline);
  const std::string bands = html.substr(band_group, html.find("</g>", band_group) - band_group);
  EXPECT_EQ(count(bands, "<rect "), 50u);
  EXPECT_TRUE(has(bands,
                  "the highest allocated at event 902 (step 40)\nallocated "
                  "632.1 MiB (662855680 B)"));
  EXPECT_TRUE(has(bands, "(up to 702 MiB (736100352 B) in these events)") ||
              has(bands, "reserved 702 MiB (736100352 B)"));
  // On the time axis the columns without events make no point.
  o.by_event_index = false;
  const std::string timed = render(p, {}, o);
  EXPECT_TRUE(has(timed, "time since the first event (s)</text>"));
  EXPECT_TRUE(has(timed, "the highest allocated at event 902 (step 40, 7.248 s)"));
}

// 2,000 steps, each leaving 1 MiB behind: the per-step chart keeps 500 of them (per column the
// lowest minimum), and says so.
TEST(MemHtml, ManyStepsAreDownsampled) {
  mem::TraceBuilder builder;
  mem::Trace& t = builder.trace();
  t.source = "many-steps.jsonl";
  t.events.push_back(
      {0, 4096 * kMiB, std::nan(""), mem::kNoStack, 0, mem::Action::kSegmentAlloc});
  for (uint64_t i = 0; i < 2000; ++i) {
    t.step_marks.push_back(t.events.size());
    t.events.push_back({i * kMiB, kMiB, std::nan(""), mem::kNoStack, 0, mem::Action::kAlloc});
  }
  Page p;
  p.trace = builder.finish();
  p.analysis = mem::analyze(p.trace, {});
  ASSERT_EQ(p.analysis.per_step.size(), 2000u);
  const std::string html = render(p);
  EXPECT_TRUE(has(html, "2000 steps drawn as 500 points"));
  const size_t steps = html.find("id=\"steps\"");
  const std::string section = html.substr(steps, html.find("</section>", steps) - steps);
  EXPECT_EQ(count(section, "<title>step "), 500u);
  EXPECT_TRUE(has(section, "step 1 · events 1–1\nminimum allocated 1 MiB (1048576 B)"));
  EXPECT_TRUE(has(html, "Creep: <b>LEAK</b>"));
}

TEST(MemHtml, PolicyComparison) {
  const Page p = fixture("fragmented_oom.pickle");
  mem::ReplayResult pytorch = replay_row("pytorch", 83753959424, p.trace.events.size());
  pytorch.capacity = 80 * 1024 * kMiB;
  pytorch.ran_out = true;
  pytorch.first_failure_event = 335;
  pytorch.first_failure_bytes = 512 * kMiB;
  mem::ReplayResult expandable = replay_row("expandable", 81604476928, p.trace.events.size());
  expandable.capacity = pytorch.capacity;
  expandable.served_recorded_oom = true;
  const std::string html = render(p, {pytorch, expandable});
  // The timeline, fragmentation, the largest free block (an OOM), steps, reserved per policy.
  EXPECT_EQ(count(html, "<svg class=\"lchart\""), 5u);
  EXPECT_TRUE(has(html, "against a capacity of 80 GiB (85899345920 B)"));
  EXPECT_TRUE(has(html,
                  "<tr><td>pytorch</td><td>caching allocator, pytorch</td><td class=\"num\" "
                  "title=\"83753959424 B\">78.0 GiB</td><td class=\"num\">12.5%</td>"
                  "<td class=\"num\">19</td><td class=\"num\">2</td><td class=\"num\">1</td>"
                  "<td>yes: at event 335 (0.378 s), 512 MiB asked</td><td>no</td></tr>"));
  EXPECT_TRUE(has(html, "<td class=\"num best\" title=\"81604476928 B\">76.0 GiB</td>"));
  EXPECT_EQ(count(html, " best\""), 1u);
  EXPECT_TRUE(has(html, "<td>no</td><td>yes</td></tr>"));  // expandable: did not run out, served
  EXPECT_TRUE(has(html, "<polyline class=\"line k0\""));
  EXPECT_TRUE(has(html, "<polyline class=\"line k1\""));
  EXPECT_TRUE(has(html, "\nexpandable 76.0 GiB (81604476928 B)"));
  EXPECT_FALSE(has(html, "--policies pytorch,expandable"));
}

TEST(MemHtml, EscapesEveryString) {
  mem::TraceBuilder builder;
  mem::Trace& t = builder.trace();
  t.source = "run<1>&\"x\".pickle";
  const uint32_t f = builder.frame({"<script>alert(1)</script>", "a&b.py", 1});
  const uint32_t s = builder.stack({f});
  t.events.push_back({0, 20 * kMiB, std::nan(""), mem::kNoStack, 0, mem::Action::kSegmentAlloc});
  t.events.push_back({0, 4 * kMiB, std::nan(""), s, 0, mem::Action::kAlloc});
  Page p;
  p.trace = builder.finish();
  mem::AnalyzeOptions ao;
  ao.rules = {{"<i>odd&</i>", "script", Regex("script")}};
  p.analysis = mem::analyze(p.trace, ao);
  MemHtmlOptions o;
  o.rules = ao.rules;
  mem::ReplayResult r = replay_row("<b>pol</b>", 20 * kMiB, 2);
  r.description = "\"quoted\" & <em>";
  const std::string html = render(p, {r}, o);
  EXPECT_FALSE(has(html, "<script"));
  EXPECT_FALSE(has(html, "<i>odd"));
  EXPECT_FALSE(has(html, "<b>pol"));
  EXPECT_FALSE(has(html, "<em>"));
  EXPECT_TRUE(has(html, "run&lt;1&gt;&amp;&quot;x&quot;.pickle"));
  EXPECT_TRUE(has(html, "&lt;i&gt;odd&amp;&lt;/i&gt;"));  // a category: legend, table, tips
  EXPECT_TRUE(has(html, "&lt;b&gt;pol&lt;/b&gt;"));
  EXPECT_TRUE(has(html, "&quot;quoted&quot; &amp; &lt;em&gt;"));
}

TEST(MemHtml, NoRemoteResourceAndDeterministic) {
  const Page p = fixture("fragmented_oom.pickle");
  const std::string html = render(p, {replay_row("pytorch", 1 << 30, p.trace.events.size())});
  EXPECT_FALSE(has(html, "http://"));
  EXPECT_FALSE(has(html, "https://"));
  EXPECT_FALSE(has(html, "url("));
  EXPECT_FALSE(has(html, "<script"));
  EXPECT_FALSE(has(html, "<link"));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\bnan\\b|\\binf\\b", std::regex::icase)));
  std::smatch m;
  const std::regex reference("(src|href)\\s*=\\s*\"([^\"]*)\"");
  for (auto it = html.cbegin(); std::regex_search(it, html.cend(), m, reference);
       it = m[0].second) {
    EXPECT_EQ(m[2].str().substr(0, 1), "#") << m[0].str();
  }
  EXPECT_EQ(html, render(p, {replay_row("pytorch", 1 << 30, p.trace.events.size())}));
}

TEST(MemHtml, EmptyTrace) {
  Page p;
  p.trace.source = "empty.jsonl";
  p.analysis = mem::analyze(p.trace, {});
  const std::string html = render(p);
  EXPECT_EQ(count(html, "<svg class=\"lchart\""), 3u);
  EXPECT_EQ(count(html, "the trace has no events"), 2u);
  EXPECT_TRUE(has(html, "no steps found"));
}

// The byte axis of the memory charts: round binary steps.
TEST(MemHtml, ByteTicks) {
  auto labels = [](const std::vector<double>& ticks) {
    std::vector<std::string> out;
    for (double t : ticks) out.push_back(size_label(t));
    return out;
  };
  EXPECT_EQ(labels(byte_ticks(0, 700.0 * kMiB)),
            (std::vector<std::string>{"0", "200M", "400M", "600M", "800M"}));
  EXPECT_EQ(labels(byte_ticks(400.0 * kMiB, 525.0 * kMiB)),
            (std::vector<std::string>{"400M", "450M", "500M", "550M"}));
  EXPECT_EQ(labels(byte_ticks(0, 78.0 * 1024 * kMiB)),
            (std::vector<std::string>{"0", "20G", "40G", "60G", "80G"}));
  EXPECT_EQ(nice_ticks(0, 9, 1), linear_ticks(9));
  EXPECT_EQ(nice_ticks(0, 910, 1), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
}

}  // namespace
}  // namespace plumb::report
