// make_workload: the schedule from one seed, prompts from random lengths and the three dataset
// formats, and each bad input's message (docs/serve.md, "Load").
#include "serve/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>

#include "common/error.h"
#include "serve/arrivals.h"
#include "serve/datasets.h"

namespace plumb::serve {
namespace {

constexpr Nanos kMs = 1'000'000;

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "serve_workload_" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const WorkloadSpec& spec) {
  try {
    make_workload(spec);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

WorkloadSpec open_loop(double rate, std::int64_t n, std::string arrival = "poisson") {
  WorkloadSpec s;
  s.rate = rate;
  s.requests = n;
  s.arrival = std::move(arrival);
  s.input_tokens = 8;
  s.output_tokens = 4;
  s.seed = 7;
  return s;
}

// Gaps in seconds.
std::vector<double> gaps(const Workload& w) {
  std::vector<double> g;
  for (size_t i = 1; i < w.requests.size(); ++i) {
    g.push_back(static_cast<double>(w.requests[i].scheduled_ns - w.requests[i - 1].scheduled_ns) /
                1e9);
  }
  return g;
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double cv2_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double var = 0;
  for (double x : v) var += (x - m) * (x - m);
  return var / v.size() / (m * m);
}

TEST(ServeWorkload, TheSameSeedMakesTheSameWorkload) {
  const Workload a = make_workload(open_loop(10, 200));
  const Workload b = make_workload(open_loop(10, 200));
  ASSERT_EQ(a.requests.size(), 200u);
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].scheduled_ns, b.requests[i].scheduled_ns);
    EXPECT_EQ(a.requests[i].prompt, b.requests[i].prompt);
  }
  WorkloadSpec other = open_loop(10, 200);
  other.seed = 8;
  EXPECT_NE(make_workload(other).requests[1].scheduled_ns, a.requests[1].scheduled_ns);
  // The prompts have their own generator: another rate keeps them.
  EXPECT_EQ(make_workload(open_loop(20, 200)).requests[5].prompt, a.requests[5].prompt);
}

TEST(ServeWorkload, ArrivalsAreAnAbsoluteScheduleWithTheRightGaps) {
  const Workload constant = make_workload(open_loop(10, 5, "constant"));
  std::vector<Nanos> at;
  for (const auto& r : constant.requests) at.push_back(r.scheduled_ns);
  EXPECT_EQ(at, (std::vector<Nanos>{0, 100 * kMs, 200 * kMs, 300 * kMs, 400 * kMs}));
  EXPECT_FALSE(constant.closed_loop);

  const std::vector<double> poisson = gaps(make_workload(open_loop(100, 20000)));
  EXPECT_NEAR(mean_of(poisson), 0.01, 0.0003);
  EXPECT_NEAR(cv2_of(poisson), 1.0, 0.05);  // exponential: CV^2 = 1

  WorkloadSpec bursty = open_loop(100, 20000, "gamma");
  bursty.burstiness = 0.25;  // vLLM: shape 0.25, scale 1/(rate * 0.25): CV^2 = 1/shape = 4
  const std::vector<double> gamma = gaps(make_workload(bursty));
  EXPECT_NEAR(mean_of(gamma), 0.01, 0.0006);
  EXPECT_NEAR(cv2_of(gamma), 4.0, 0.4);
}

TEST(ServeWorkload, DurationEndsAnOpenLoopsArrivals) {
  WorkloadSpec s = open_loop(10, 0, "constant");
  s.duration_s = 1;
  const Workload w = make_workload(s);
  EXPECT_EQ(w.requests.size(), 10u);  // 0, 100, ..., 900 ms
  EXPECT_EQ(w.duration_ns, 1000 * kMs);
}

TEST(ServeWorkload, AClosedLoopAndARateCappedByConcurrency) {
  WorkloadSpec closed = open_loop(0, 6);
  closed.concurrency = 4;
  const Workload w = make_workload(closed);
  EXPECT_TRUE(w.closed_loop);
  EXPECT_EQ(w.concurrency, 4);
  ASSERT_EQ(w.requests.size(), 6u);
  EXPECT_EQ(w.requests[5].scheduled_ns, 0);
  WorkloadSpec capped = open_loop(50, 6);
  capped.concurrency = 2;
  const Workload c = make_workload(capped);
  EXPECT_FALSE(c.closed_loop);
  EXPECT_EQ(c.concurrency, 2);
}

TEST(ServeWorkload, RandomPromptsHaveTheirLengthInOneTokenWords) {
  WorkloadSpec s = open_loop(10, 50);
  s.input_tokens = 100;
  s.output_tokens = 20;
  s.length_spread = 0.5;
  for (const auto& r : make_workload(s).requests) {
    EXPECT_GE(r.input_tokens, 50);
    EXPECT_LE(r.input_tokens, 150);
    EXPECT_GE(r.max_output_tokens, 10);
    EXPECT_LE(r.max_output_tokens, 30);
    EXPECT_EQ(std::count(r.prompt.begin(), r.prompt.end(), ' '), r.input_tokens);
  }
}

TEST(ServeWorkload, AJsonlOfPromptsInOrderWithTheirOutputLengths) {
  WorkloadSpec s = open_loop(10, 3);
  s.dataset =
      write_file("prompts.jsonl",
                 "{\"prompt\": \"Hello there\", \"output_tokens\": 7}\n\n{\"text\": \"Bye\"}\n");
  const Workload w = make_workload(s);
  ASSERT_EQ(w.requests.size(), 3u);
  EXPECT_EQ(w.requests[0].prompt, "Hello there");
  EXPECT_EQ(w.requests[0].max_output_tokens, 7);
  EXPECT_EQ(w.requests[0].input_tokens, 3);  // 11 characters / 4, rounded up
  EXPECT_EQ(w.requests[1].prompt, "Bye");
  EXPECT_EQ(w.requests[1].max_output_tokens, 4);   // --output-tokens
  EXPECT_EQ(w.requests[2].prompt, "Hello there");  // the file again from its start
}

TEST(ServeWorkload, AShareGptFileGivesItsFirstTurnsAndAnswerLengths) {
  WorkloadSpec s = open_loop(10, 0);
  s.dataset = write_file("sharegpt.json", R"([
    {"id": "a", "conversations": [{"from": "human", "value": "What is a GPU, in one line?"},
                                  {"from": "gpt", "value": "A processor for parallel arithmetic."}]},
    {"id": "b", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello, how can I help?"}]},
    {"id": "c", "conversations": [{"from": "human", "value": "Only one turn here"}]}
  ])");
  const Workload w = make_workload(s);
  ASSERT_EQ(w.requests.size(), 1u);  // "Hi" is under vLLM's 4 tokens; one turn is no pair
  EXPECT_EQ(w.requests[0].prompt, "What is a GPU, in one line?");
  EXPECT_EQ(w.requests[0].max_output_tokens, 9);  // 36 characters / 4
}

TEST(ServeWorkload, AMooncakeTraceGivesArrivalsAndLengths) {
  WorkloadSpec s;
  s.concurrency = 0;
  s.dataset = write_file(
      "trace.jsonl",
      "{\"timestamp\": 1000, \"input_length\": 6, \"output_length\": 5, \"hash_ids\": [0]}\n"
      "{\"timestamp\": 1000, \"input_length\": 3, \"output_length\": 2, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 4052, \"input_length\": 4, \"output_length\": 9, \"hash_ids\": [2]}\n");
  const Workload w = make_workload(s);
  ASSERT_EQ(w.requests.size(), 3u);
  EXPECT_FALSE(w.closed_loop);
  EXPECT_EQ(w.requests[0].scheduled_ns, 0);
  EXPECT_EQ(w.requests[1].scheduled_ns, 0);
  EXPECT_EQ(w.requests[2].scheduled_ns, 3052 * kMs);
  EXPECT_EQ(w.requests[2].max_output_tokens, 9);
  EXPECT_EQ(w.requests[2].input_tokens, 4);
  EXPECT_EQ(std::count(w.requests[0].prompt.begin(), w.requests[0].prompt.end(), ' '), 6);
  s.duration_s = 2;  // only arrivals before 2 s
  EXPECT_EQ(make_workload(s).requests.size(), 2u);
  s.rate = 5;
  EXPECT_EQ(error_of(s), "--rate: a trace sets its own arrivals; leave --rate out");
}

TEST(ServeWorkload, EveryBadDatasetLineIsNamedWithItsField) {
  WorkloadSpec s = open_loop(10, 3);
  s.dataset = write_file("bad1.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n");
  EXPECT_EQ(error_of(s), s.dataset + ":2: expected \"prompt\" or \"text\" (a string)");
  s.dataset =
      write_file("bad2.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": \"x\", \"output_tokens\": 0}\n");
  EXPECT_EQ(error_of(s),
            s.dataset + ":2: output_tokens: expected a whole number from 1 to 1000000, got 0");
  s.dataset = write_file("bad3.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": \n");
  EXPECT_EQ(error_of(s).rfind(s.dataset + ":2: not valid JSON: ", 0), 0u) << error_of(s);
  s.dataset = write_file("empty.jsonl", "\n\n");
  EXPECT_EQ(error_of(s), s.dataset + ": no prompts (an empty file)");
  s.dataset = write_file(
      "bad.json", R"([{"conversations": [{"value": "abcdefghijklmnopq"}, {"from": "gpt"}]}])");
  EXPECT_EQ(error_of(s), s.dataset + ": [0].conversations[1].value: missing");
  s.dataset = write_file("bad-trace.jsonl",
                         "{\"timestamp\": 10, \"input_length\": 6, \"output_length\": 5}\n"
                         "{\"timestamp\": \"x\", \"input_length\": 6, \"output_length\": 5}\n");
  s.rate = 0;
  EXPECT_EQ(error_of(s), s.dataset + ":2: timestamp: expected a number, got \"x\"");
  s.dataset = write_file("late-trace.jsonl",
                         "{\"timestamp\": 10, \"input_length\": 6, \"output_length\": 5}\n"
                         "{\"timestamp\": 5, \"input_length\": 6, \"output_length\": 5}\n");
  EXPECT_EQ(error_of(s), s.dataset +
                             ":2: timestamp 5 is before the previous line's 10; a trace's lines "
                             "must be in time order");
  s.dataset = write_file("x.jsonl", "{}\n");
  s.dataset_format = "sharegtp";
  EXPECT_EQ(error_of(s),
            "--dataset-format: unknown format 'sharegtp' (did you mean 'sharegpt'?); "
            "expected one of jsonl, sharegpt, trace");
}

// Hostile files (issue 31): a 1 MB line is a prompt like any other; a line nested 100,000 deep
// is refused with its file, line and the bound, in a JSONL of prompts, a ShareGPT file and a
// Mooncake trace alike, never a crash.
TEST(ServeWorkload, AMegabyteLineIsAPromptAndA100000DeepLineIsRefused) {
  const std::string mb(size_t{1} << 20, 'x');
  WorkloadSpec s = open_loop(1, 3);
  s.dataset = write_file("mb.jsonl", "{\"prompt\": \"" + mb + "\"}\n");
  EXPECT_EQ(make_workload(s).requests.at(0).prompt, mb);
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  s.dataset = write_file("deep.jsonl", "{\"prompt\": \"ok\"}\n{\"prompt\": " + deep + "}\n");
  EXPECT_EQ(error_of(s), s.dataset + ":2: JSON nested deeper than 512 levels (at byte 522)");
  s.dataset = write_file("deep.json", "[{\"conversations\": " + deep + "}]");
  EXPECT_EQ(error_of(s), s.dataset + ": JSON nested deeper than 512 levels (at byte 529)");
  s.rate = 0;
  s.dataset = write_file("deep-trace.jsonl",
                         "{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 5, "
                         "\"hash_ids\": " + deep + "}\n");
  EXPECT_EQ(error_of(s), s.dataset + ":1: JSON nested deeper than 512 levels (at byte 579)");
}

TEST(ServeWorkload, BadLoadOptionsAreRefused) {
  WorkloadSpec s = open_loop(0, 10);
  EXPECT_EQ(error_of(s),
            "plumb serve: give --rate R (an open loop), --concurrency C (a closed loop), or both");
  s = open_loop(10, 10, "posson");
  EXPECT_EQ(error_of(s),
            "--arrival: unknown arrival 'posson' (did you mean 'poisson'?); expected "
            "one of poisson, constant, gamma");
  s = open_loop(INFINITY, 0);
  s.duration_s = 5;
  EXPECT_EQ(error_of(s), "--rate inf sends every request at once: give --requests N");
  s = open_loop(10, 10);
  s.length_spread = 1;
  EXPECT_EQ(error_of(s), "--length-spread: must be a number from 0 to below 1, got 1");
  s = open_loop(10, 10);
  s.input_tokens = 0;
  EXPECT_EQ(error_of(s), "--input-tokens: must be a whole number from 1 to 1000000, got 0");
  s = open_loop(1e6, 0);
  s.duration_s = 3600;
  EXPECT_EQ(error_of(s),
            "plumb serve: this run would prepare about 3600000000 requests; at most "
            "1000000 a run (lower --requests, --rate or --duration)");
  const Workload all = make_workload(open_loop(INFINITY, 4));
  EXPECT_EQ(all.requests.back().scheduled_ns, 0);
}

TEST(ServeDatasets, TheFormatIsGuessedFromTheContent) {
  EXPECT_EQ(guess_dataset_format(" [ {}]"), DatasetFormat::sharegpt);
  EXPECT_EQ(guess_dataset_format("{\"timestamp\": 0, \"input_length\": 5}\n"),
            DatasetFormat::trace);
  EXPECT_EQ(guess_dataset_format("{\"prompt\": \"x\"}\n"), DatasetFormat::jsonl);
  EXPECT_EQ(guess_dataset_format(""), DatasetFormat::jsonl);
}

}  // namespace
}  // namespace plumb::serve
