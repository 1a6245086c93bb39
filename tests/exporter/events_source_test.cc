// The training events source: tailing (appends, partial lines, truncation, rotation, a file not
// there yet), the rolling medians and ratios as worked examples, malformed lines counted and
// logged at most once per kLogEverySeconds, the key bound, and the Python hook's own output.
#include "exporter/events_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "exporter/series.h"
#include "families_helpers.h"
#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using test::value_of;

std::string line(int step, double seconds, const std::string& extra = "") {
  return "{\"schema\":\"plumb.train-events/1\",\"step\":" + std::to_string(step) +
         ",\"step_seconds\":" + fmt::format("{}", seconds) + extra + "}\n";
}

void append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

// A source over a fresh file with a clock and a log the test holds.
struct Fixture {
  explicit Fixture(const std::string& name, int window = 100, size_t max_keys = kMaxEventKeys)
      : path(plumb::test::temp_dir("events_" + name) + "/run.jsonl"),
        source({"h1", path, 1, window, max_keys,
                [this](const std::string& l) { logged.push_back(l); }, [this] { return now; }}) {}
  double get(const char* name, const Labels& labels = {}) {
    const std::optional<double> v = value_of(families, name, labels);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(-1);
  }
  void collect() { families = source.collect(); }

  std::string path;
  double now = 1000;
  std::vector<std::string> logged;
  EventsSource source;
  Families families;
};

TEST(RollingMedian, KeepsTheLastWindowValues) {
  RollingMedian m;
  for (double v : {1.0, 1.2, 0.9, 3.0, 1.1}) m.add(v, 4);
  EXPECT_DOUBLE_EQ(m.median(), 1.15);  // of 1.2, 0.9, 3.0, 1.1: (1.1 + 1.2) / 2
  EXPECT_EQ(m.last(), 1.1);
}

// Steps of 1.0, 1.2, 0.9, 3.0, 1.1 s with a window of 4: median 1.15 s, ratio 1.1 / 1.15.
TEST(EventsSource, StepTimeItsMedianRatioAndTokensPerSecond) {
  Fixture f("steps", 4);
  const double seconds[] = {1.0, 1.2, 0.9, 3.0, 1.1};
  for (int i = 0; i < 5; ++i) {
    append(f.path, line(i + 1, seconds[i], ",\"tokens\":550000,\"rank\":2,\"device\":\"2\","
                                           "\"memory\":{\"allocated_bytes\":4096}"));
  }
  f.collect();
  const Labels who{{"host", "h1"}, {"rank", "2"}, {"device", "2"}};
  EXPECT_EQ(f.get(series::kStep, who), 5);
  EXPECT_EQ(f.get(series::kStepSeconds, who), 1.1);
  EXPECT_DOUBLE_EQ(f.get(series::kStepMedian, who), 1.15);
  EXPECT_DOUBLE_EQ(f.get(series::kStepRatio, who), 1.1 / 1.15);  // 0.9565...
  EXPECT_DOUBLE_EQ(f.get(series::kTokensPerSecond, who), 500000);  // 550000 / 1.1
  EXPECT_EQ(f.get(series::kMemAllocated, who), 4096);
  EXPECT_FALSE(value_of(f.families, series::kMemPeak, who).has_value());  // not given: absent
  EXPECT_EQ(f.get(series::kEventLines), 5);
  EXPECT_EQ(f.get(series::kEventMalformed), 0);
}

// aten::mm at 10, 12, 14 ms: median 12 ms, ratio 14 / 12.
TEST(EventsSource, OperatorLastMedianAndRatio) {
  Fixture f("operators");
  for (int i = 0; i < 3; ++i) {
    append(f.path, line(i, 1, ",\"operators\":{\"aten::mm\":" + fmt::format("{}", 0.010 + 0.002 * i) + "}"));
  }
  f.collect();
  const Labels mm{{"operator", "aten::mm"}};
  EXPECT_EQ(f.get(series::kOpSeconds, mm), 0.014);
  EXPECT_DOUBLE_EQ(f.get(series::kOpMedian, mm), 0.012);
  EXPECT_DOUBLE_EQ(f.get(series::kOpRatio, mm), 0.014 / 0.012);
}

// allreduce 1 MiB over 8 ranks in 2.1 ms (873813333.33 B/s) and 4.2 ms (436906666.67 B/s):
// the exported busbw is their median, 655360000 B/s.
TEST(EventsSource, BusbwIsTheMedianPerLayerCollectiveAndSize) {
  Fixture f("busbw");
  for (const char* seconds : {"0.0021", "0.0042"}) {
    append(f.path, line(1, 1, std::string(",\"rank\":0,\"collectives\":[{\"collective\":"
                                          "\"allreduce\",\"bytes\":1048576,\"seconds\":") +
                                  seconds + ",\"ranks\":8,\"layer\":\"node\"}]"));
  }
  f.collect();
  EXPECT_NEAR(f.get(series::kBusbw, {{"host", "h1"}, {"rank", "0"}, {"layer", "node"},
                                     {"collective", "allreduce"}, {"bytes", "1048576"},
                                     {"source", "events"}}),
              655360000.0, 1e-3);
}

TEST(EventsSource, APartialLineWaitsForItsNewline) {
  Fixture f("partial");
  const std::string whole = line(7, 2);
  append(f.path, whole.substr(0, 20));
  f.collect();
  EXPECT_EQ(f.get(series::kEventLines), 0);
  EXPECT_EQ(value_of(f.families, series::kStep, {}), std::nullopt);
  append(f.path, whole.substr(20));
  f.collect();
  EXPECT_EQ(f.get(series::kEventLines), 1);
  EXPECT_EQ(f.get(series::kStep), 7);
  EXPECT_EQ(f.get(series::kEventMalformed), 0);
}

TEST(EventsSource, AFileNotThereYetIsWaitedForQuietly) {
  Fixture f("missing");
  f.collect();
  EXPECT_EQ(f.get(series::kEventLines), 0);
  append(f.path, line(1, 1));
  f.collect();
  EXPECT_EQ(f.get(series::kStep), 1);
  EXPECT_TRUE(f.logged.empty());
}

TEST(EventsSource, ATruncatedFileIsReadAgainFromItsStart) {
  Fixture f("truncated");
  append(f.path, line(1, 1) + line(2, 1) + line(3, 1));
  f.collect();
  std::ofstream(f.path, std::ios::trunc) << line(1, 5) + "{bad\n";
  f.collect();
  EXPECT_EQ(f.get(series::kStep), 1);
  EXPECT_EQ(f.get(series::kStepSeconds), 5);
  EXPECT_EQ(f.get(series::kEventLines), 5);
  ASSERT_EQ(f.logged.size(), 1u);
  EXPECT_EQ(f.logged[0], "events " + f.path + ":2: not valid JSON: parse error at line 1, column 2: "
                         "syntax error while parsing object key - invalid literal; last read: "
                         "'{b'; expected string literal");
}

TEST(EventsSource, ARotatedFileIsFollowedToTheNewOne) {
  Fixture f("rotated");
  append(f.path, line(1, 1) + line(2, 1));
  f.collect();
  ASSERT_EQ(std::rename(f.path.c_str(), (f.path + ".1").c_str()), 0);
  append(f.path + ".1", line(3, 1));  // written to the old file after the rename: not read
  f.collect();
  EXPECT_EQ(f.get(series::kStep), 2);
  append(f.path, line(10, 1) + line(11, 1) + line(12, 1));
  f.collect();
  EXPECT_EQ(f.get(series::kStep), 12);
  EXPECT_EQ(f.get(series::kEventLines), 5);
}

TEST(EventsSource, MalformedLinesAreCountedSkippedAndLoggedAtMostOncePerInterval) {
  Fixture f("malformed");
  append(f.path, line(1, 1) + R"({"schema":"plumb.train-events/1","step":"two","step_seconds":1})"
                 "\n" + "not json\n" + line(3, 1));
  f.collect();
  EXPECT_EQ(f.get(series::kStep), 3);
  EXPECT_EQ(f.get(series::kEventMalformed), 2);
  ASSERT_EQ(f.logged.size(), 1u);
  EXPECT_EQ(f.logged[0], "events " + f.path +
                             ":2: 'step' is a string, expected a whole number from 0 to "
                             "9007199254740992 (and 1 more malformed line(s) since)");
  f.now += kLogEverySeconds / 2;
  append(f.path, "[]\n");
  f.collect();
  EXPECT_EQ(f.logged.size(), 1u);  // too soon after the last message
  EXPECT_EQ(f.get(series::kEventMalformed), 3);
  f.now += kLogEverySeconds;
  f.collect();
  ASSERT_EQ(f.logged.size(), 2u);
  EXPECT_EQ(f.logged[1], "events " + f.path + ":5: 'the line' is an array, expected a JSON object");
}

TEST(EventsSource, KeysPastTheLimitAreDroppedAndCounted) {
  Fixture f("keys", 100, 3);  // one rank + two operators
  append(f.path, line(1, 1, R"(,"operators":{"a":1,"b":1,"c":1,"d":1,"e":1})"));
  f.collect();
  EXPECT_EQ(f.get(series::kOpSeconds, {{"operator", "a"}}), 1);
  EXPECT_EQ(f.get(series::kOpSeconds, {{"operator", "b"}}), 1);
  EXPECT_FALSE(value_of(f.families, series::kOpSeconds, {{"operator", "c"}}).has_value());
  EXPECT_EQ(f.get(series::kEventDropped), 3);
  append(f.path, line(2, 1, R"(,"rank":1)"));  // a new rank is a key too
  f.collect();
  EXPECT_EQ(f.get(series::kEventDropped), 4);
}

// Issue 28: the 1e-300 s collective is skipped and counted, and the busbw exported stays the
// real one, so PlumbCollectiveBandwidthLow still sees it.
TEST(EventsSource, AnImpossibleCollectiveIsCountedMalformedNotExported) {
  Fixture f("impossible");
  const std::string call = R"(,"collectives":[{"collective":"allreduce","bytes":1048576,)";
  append(f.path, line(1, 1, call + R"("seconds":0.0021,"ranks":8}])") +
                     line(2, 1, call + R"("seconds":1e-300,"ranks":8}])") +
                     line(3, 1, call + R"("seconds":0.0021,"ranks":8,"layer":"fabric"}])"));
  f.collect();
  EXPECT_EQ(f.get(series::kEventMalformed), 2);
  EXPECT_NEAR(f.get(series::kBusbw, {{"bytes", "1048576"}}), 873813333.333, 1e-3);
  EXPECT_EQ(f.get(series::kStep), 1);
  ASSERT_EQ(f.logged.size(), 1u);
  EXPECT_EQ(f.logged[0], "events " + f.path +
                             ":2: 'collectives[0].seconds' is '1e-300', expected a number from "
                             "1e-07 to 86400 (and 1 more malformed line(s) since)");
}

// The hook in contrib/ writes; the source reads exactly that.
TEST(EventsSource, ReadsWhatThePythonHookWrote) {
  Fixture f("hook");
  const std::string contrib = std::string(PLUMB_TEST_FIXTURES) + "/../../contrib";
  const std::string script =
      "import sys; sys.path.insert(0, '" + contrib + "')\n"
      "from plumb_train_events import TrainEvents\n"
      "ev = TrainEvents('" + f.path + "', rank=1, world_size=8, device='1', memory=False)\n"
      "for step, seconds in enumerate([2.0, 4.0, 3.0]):\n"
      "    ev.write(step, seconds, tokens=6000, operators={'aten::mm': seconds / 100},\n"
      "             collectives=[{'collective': 'allgather', 'bytes': 8388608, 'seconds': 0.004,\n"
      "                           'ranks': 4, 'layer': 'node'}],\n"
      "             memory={'allocated_bytes': 10, 'reserved_bytes': 20, 'peak_bytes': 15})\n";
  const std::string script_path = f.path + ".py";
  plumb::test::write_file(script_path, script);
  const plumb::test::Run run = plumb::test::run_command("python3 '" + script_path + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  f.collect();
  const Labels who{{"rank", "1"}, {"device", "1"}};
  EXPECT_EQ(f.get(series::kStep, who), 2);
  EXPECT_EQ(f.get(series::kStepSeconds, who), 3.0);
  EXPECT_EQ(f.get(series::kStepMedian, who), 3.0);
  EXPECT_EQ(f.get(series::kTokensPerSecond, who), 2000);
  EXPECT_EQ(f.get(series::kMemReserved, who), 20);
  EXPECT_EQ(f.get(series::kMemPeak, who), 15);
  EXPECT_DOUBLE_EQ(f.get(series::kOpMedian, {{"operator", "aten::mm"}}), 0.03);
  EXPECT_DOUBLE_EQ(f.get(series::kBusbw, {{"collective", "allgather"}, {"layer", "node"}}),
                   1572864000.0);
  EXPECT_EQ(f.get(series::kEventLines), 3);
  EXPECT_EQ(f.get(series::kEventMalformed), 0);
}

}  // namespace
}  // namespace plumb::exporter
