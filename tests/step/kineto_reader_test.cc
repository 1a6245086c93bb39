// The Kineto reader on every real PyTorch profiler trace in tests/fixtures/traces (counts and
// values checked against the files with an independent Python reading, README there) and on
// synthetic traces where the answer is known by construction.
#include "step/kineto_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "report/step_console_reporter.h"
#include "report/step_html.h"
#include "report/step_json_reporter.h"
#include "step/analysis.h"
#include "step/classify.h"
#include "step/readers.h"
#include "step/trace_set.h"
#include "support/subprocess.h"

namespace plumb::step {
namespace {

const std::string kTraces = std::string(PLUMB_TEST_FIXTURES) + "/traces/";

struct Counts {
  size_t compute = 0;
  size_t communication = 0;
  size_t memory = 0;
};

Counts count_spans(const RankTrace& trace) {
  Counts counts;
  for (const DeviceSpan& span : trace.spans) {
    if (span.activity == Activity::kCompute) ++counts.compute;
    if (span.activity == Activity::kCommunication) ++counts.communication;
    if (span.activity == Activity::kMemory) ++counts.memory;
  }
  return counts;
}

std::map<std::string, int> kinds(const RankTrace& trace) {
  std::map<std::string, int> out;
  for (const CollectiveCall& call : trace.calls) ++out[std::string(kind_name(call.kind))];
  return out;
}

std::vector<int64_t> step_numbers(const RankTrace& trace) {
  std::vector<int64_t> out;
  for (const StepSpan& step : trace.steps) out.push_back(step.step);
  return out;
}

RankTrace from_json(const std::string& json, const std::string& name = "rank-2.json",
                    const ReadOptions& options = {}) {
  return kineto_from_text(trace_text_from_bytes(json, name), options);
}

TEST(KinetoReader, TwoRanksOf128TakeTheKindFromTheLaunchingCpuOp) {
  // Every collective runs ncclKernel_SendRecv_*: the kind comes from nccl:* / c10d::* around
  // the cudaLaunchKernel with the kernel's correlation.
  RankTrace rank0 = read_kineto(kTraces + "kineto-2ranks-of-128/rank-0.json.gz", {});
  EXPECT_EQ(rank0.format, "kineto");
  EXPECT_EQ(rank0.rank, 0);
  EXPECT_EQ(rank0.world_size, 128);
  EXPECT_EQ(rank0.bytes_read, 1759570U);
  Counts counts = count_spans(rank0);
  EXPECT_EQ(counts.compute, 1144U);
  EXPECT_EQ(counts.communication, 10U);
  EXPECT_EQ(counts.memory, 50U);
  EXPECT_EQ(kinds(rank0), (std::map<std::string, int>{{"allgather", 2}, {"allreduce", 4},
                                                       {"alltoall", 4}}));
  std::vector<CollectiveKind> order;
  for (const CollectiveCall& call : rank0.calls) order.push_back(call.kind);
  using K = CollectiveKind;
  EXPECT_EQ(order, (std::vector<K>{K::kAllToAll, K::kAllToAll, K::kAllReduce, K::kAllReduce,
                                   K::kAllGather, K::kAllToAll, K::kAllToAll, K::kAllReduce,
                                   K::kAllReduce, K::kAllGather}));
  // Integer-µs absolute timestamps, no baseTimeNanoseconds.
  EXPECT_EQ(rank0.calls[0].start_ns, 1682725898094377000);
  EXPECT_EQ(rank0.calls[0].end_ns, 1682725898125046000);
  EXPECT_EQ(rank0.calls[0].bytes, 0U);  // no collective arguments in this trace
  EXPECT_TRUE(rank0.calls[0].name.starts_with("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t("));
  ASSERT_EQ(step_numbers(rank0), (std::vector<int64_t>{551, 552}));
  EXPECT_EQ(rank0.steps[0].start_ns, 1682725898079292000);
  EXPECT_EQ(rank0.steps[0].end_ns, 1682725898686604000);
  for (const DeviceSpan& span : rank0.spans) {
    ASSERT_GT(span.end_ns, span.start_ns);
    ASSERT_EQ(span.call >= 0, span.activity == Activity::kCommunication);
  }

  RankTrace rank1 = read_kineto(kTraces + "kineto-2ranks-of-128/rank-1.json.gz", {});
  EXPECT_EQ(rank1.rank, 1);
  EXPECT_EQ(count_spans(rank1).compute, 1094U);
  EXPECT_EQ(kinds(rank1), kinds(rank0));
  EXPECT_EQ(step_numbers(rank1), (std::vector<int64_t>{551, 552}));
  EXPECT_EQ(rank1.steps[1].end_ns, 1682725899318077000);
}

TEST(KinetoReader, CollectiveArgumentsGiveBytesGroupAndAbsoluteTime) {
  RankTrace trace = read_kineto(kTraces + "kineto-collective-args/rank-0.json.gz", {});
  EXPECT_EQ(trace.rank, 0);
  EXPECT_EQ(trace.world_size, 2);
  Counts counts = count_spans(trace);
  EXPECT_EQ(counts.compute, 2679U);
  EXPECT_EQ(counts.communication, 21U);
  EXPECT_EQ(counts.memory, 1074U);
  EXPECT_EQ(kinds(trace), (std::map<std::string, int>{{"allreduce", 15}, {"broadcast", 6}}));
  // The sixth call: allreduce, In msg nelems 6637568, Float; ts 4458676566435.246 µs relative
  // to baseTimeNanoseconds 1711964646000000000.
  ASSERT_EQ(trace.calls.size(), 21U);
  const CollectiveCall& call = trace.calls[5];
  EXPECT_EQ(call.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(call.bytes, 26550272U);
  EXPECT_EQ(call.start_ns, 1716423322566435246);
  EXPECT_EQ(call.end_ns, 1716423322566435246 + 2160803);
  EXPECT_EQ(call.group, "0");
  EXPECT_EQ(call.group_ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(trace.calls[0].kind, CollectiveKind::kBroadcast);
  EXPECT_EQ(trace.calls[0].bytes, 212480U);  // 53120 Float
  EXPECT_EQ(trace.calls[1].bytes, 424U);     // 53 Long
  ASSERT_EQ(step_numbers(trace), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(trace.steps[0].start_ns, 1716423322416788066);
  EXPECT_EQ(trace.steps[2].end_ns, 1716423323084014024);
}

TEST(KinetoReader, ComputeOnlyTraceHasSubMicrosecondStepsAndItsHost) {
  RankTrace trace = read_kineto(
      kTraces + "kineto-compute-only/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", {});
  EXPECT_EQ(trace.rank, 0);
  EXPECT_EQ(trace.world_size, 1);
  EXPECT_EQ(trace.host, "twshared39868.02.pnb3.facebook.com");
  Counts counts = count_spans(trace);
  EXPECT_EQ(counts.compute, 4350U);
  EXPECT_EQ(counts.communication, 0U);
  EXPECT_EQ(counts.memory, 1745U);
  EXPECT_TRUE(trace.calls.empty());
  ASSERT_EQ(step_numbers(trace), (std::vector<int64_t>{101, 102, 103, 104, 105}));
  // "ts": 1712195495502094.565, "dur": 35115.869 as written (a double would drop the .565).
  EXPECT_EQ(trace.steps[0].start_ns, 1712195495502094565);
  EXPECT_EQ(trace.steps[0].end_ns, 1712195495502094565 + 35115869);
}

TEST(KinetoReader, DdpRankOneHasItsAllReducesOnTheirOwnStream) {
  RankTrace trace = read_kineto(kTraces + "kineto-ddp-rank1-of2/df_index_resolver.json.gz", {});
  EXPECT_EQ(trace.rank, 1);
  EXPECT_EQ(trace.world_size, 2);
  Counts counts = count_spans(trace);
  EXPECT_EQ(counts.compute, 17350U);
  EXPECT_EQ(counts.communication, 2020U);
  EXPECT_EQ(counts.memory, 2920U);
  EXPECT_EQ(kinds(trace), (std::map<std::string, int>{{"allreduce", 2020}}));
  for (const DeviceSpan& span : trace.spans) {
    if (span.activity == Activity::kCommunication) {
      ASSERT_EQ(span.stream, 14U);
    }
  }
  EXPECT_EQ(trace.calls[0].start_ns, 1669783687571046000);
  EXPECT_EQ(step_numbers(trace), (std::vector<int64_t>{2, 3, 4, 5, 6}));
}

TEST(KinetoReader, B200TraceClassifiesNcclDevKernelAsCommunication) {
  RankTrace trace =
      read_kineto(kTraces + "kineto-b200-rank0-of8-nccl2.27/eager_trace.json.gz", {});
  EXPECT_EQ(trace.rank, 0);
  EXPECT_EQ(trace.world_size, 8);
  Counts counts = count_spans(trace);
  EXPECT_EQ(counts.compute, 767U);
  EXPECT_EQ(counts.communication, 1U);
  EXPECT_EQ(counts.memory, 161U);
  ASSERT_EQ(trace.calls.size(), 1U);
  const CollectiveCall& call = trace.calls[0];
  EXPECT_EQ(call.kind, CollectiveKind::kAllGather);
  EXPECT_EQ(call.bytes, 402176U);  // Out msg nelems 201088 × BFloat16
  EXPECT_EQ(call.group, "3");
  EXPECT_EQ(call.group_ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(call.start_ns, 1768554939949863953);  // 1365627949863.953 µs + base
  EXPECT_EQ(call.end_ns, 1768554939949885906);
  EXPECT_TRUE(trace.steps.empty());  // no ProfilerStep: reported across ranks, not here
}

// A small trace: two compute kernels, one NCCL kernel launched inside c10d::allreduce_, a
// memcpy, a zero-length kernel, and host events that are not device work.
const char* const kSynthetic = R"({
  "distributedInfo": {"rank": 3, "world_size": 4,
                      "pg_config": [{"pg_name": "7", "ranks": [1, 3]}]},
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1,
     "ts": 100, "dur": 50},
    {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1, "tid": 1,
     "ts": 101, "dur": 10},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 9,
     "ts": 90, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING", "pid": 0, "tid": 9,
     "ts": 130, "dur": 5, "args": {"stream": 9, "correlation": 77}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 120,
     "dur": 8, "args": {"Collective name": "allreduce", "In msg nelems": 10, "dtype": "Half",
     "Process Group Name": "7"}},
    {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "pid": 1, "tid": 1, "ts": 120,
     "dur": 10},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
     "ts": 125, "dur": 1, "args": {"correlation": 77}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 110.5, "dur": 20,
     "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "empty", "pid": 0, "tid": 7, "ts": 140, "dur": 0,
     "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "relu", "pid": 0, "tid": 8, "ts": 131, "dur": 2},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 102,
     "dur": 1.5, "args": {"stream": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1,
     "ts": 103, "dur": 1},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 1, "tid": 1,
     "ts": 150, "dur": 40}
  ],
  "baseTimeNanoseconds": 1000000000})";

TEST(KinetoReader, SyntheticTraceByConstruction) {
  RankTrace trace = from_json(kSynthetic);
  EXPECT_EQ(trace.rank, 3);
  EXPECT_EQ(trace.world_size, 4);
  EXPECT_EQ(trace.source, "rank-2.json");
  Counts counts = count_spans(trace);
  EXPECT_EQ(counts.compute, 2U);  // gemm, relu; not the zero-length kernel
  EXPECT_EQ(counts.communication, 1U);
  EXPECT_EQ(counts.memory, 1U);
  const DeviceSpan* relu = nullptr;
  const DeviceSpan* memcpy = nullptr;
  for (const DeviceSpan& span : trace.spans) {
    if (span.start_ns == 1000131000) relu = &span;
    if (span.activity == Activity::kMemory) memcpy = &span;
  }
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->stream, 8U);  // no args.stream: the tid
  ASSERT_NE(memcpy, nullptr);
  EXPECT_EQ(memcpy->end_ns - memcpy->start_ns, 1500);
  ASSERT_EQ(trace.calls.size(), 1U);
  const CollectiveCall& call = trace.calls[0];
  // The kind from record_param_comms (innermost around the launch), its bytes (10 × Half),
  // its group, whose ranks come from pg_config.
  EXPECT_EQ(call.kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(call.bytes, 20U);
  EXPECT_EQ(call.group, "7");
  EXPECT_EQ(call.group_ranks, (std::vector<int>{1, 3}));
  EXPECT_EQ(call.start_ns, 1000130000);
  EXPECT_EQ(call.end_ns, 1000135000);
  // Steps: host annotations only (not the gpu_user_annotation), nested annotations are not
  // steps, absolute with the base time.
  ASSERT_EQ(trace.steps.size(), 2U);
  EXPECT_EQ(trace.steps[0].step, 7);
  EXPECT_EQ(trace.steps[0].start_ns, 1000100000);
  EXPECT_EQ(trace.steps[0].end_ns, 1000150000);
  EXPECT_EQ(trace.steps[1].step, 8);
}

TEST(KinetoReader, KindFallsBackToTheKernelNameWithoutALaunchingOp) {
  RankTrace trace = from_json(R"json({"distributedInfo": {"rank": 0}, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_ReduceScatter_RING_LL(x)", "pid": 0,
       "tid": 7, "ts": 5, "dur": 1, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING", "pid": 0, "tid": 7,
       "ts": 3, "dur": 1, "args": {"correlation": 2}},
      {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 1,
       "ts": 2, "dur": 1, "args": {"correlation": 2}}]})json");
  ASSERT_EQ(trace.calls.size(), 2U);
  EXPECT_EQ(trace.calls[0].kind, CollectiveKind::kSendRecv);  // by start: the earlier first
  EXPECT_EQ(trace.calls[1].kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(trace.world_size, -1);
}

TEST(KinetoReader, TheSameStepTwiceIsOneSpanOverBoth) {
  RankTrace trace = from_json(R"({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#3", "pid": 1, "tid": 2, "ts": 50,
       "dur": 10},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
       "ts": 0, "dur": 10},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1,
       "ts": 20, "dur": 10},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3 backward", "pid": 1,
       "tid": 1, "ts": 20, "dur": 100}]})");
  ASSERT_EQ(trace.steps.size(), 2U);
  EXPECT_EQ(trace.steps[0].step, 2);
  EXPECT_EQ(trace.steps[1].step, 3);
  EXPECT_EQ(trace.steps[1].start_ns, 20000);
  EXPECT_EQ(trace.steps[1].end_ns, 60000);
  EXPECT_EQ(trace.rank, 2);  // from the file name rank-2.json
}

TEST(KinetoReader, StepRegexFromTheOptions) {
  ReadOptions options;
  options.step_regex = "iteration_(\\d+)";
  RankTrace trace = from_json(R"({"traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "iteration_12", "ts": 0, "dur": 10},
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 10}]})",
                              "rank-0.json", options);
  EXPECT_EQ(step_numbers(trace), (std::vector<int64_t>{12}));
  options.step_regex = "iteration_(";
  EXPECT_EQ(test::error_message([&] { from_json(R"({"traceEvents": []})", "r.json", options); }),
            "--step-regex 'iteration_(': not a valid regular expression (missing ): iteration_()");
  options.step_regex = "iteration_\\d+";
  EXPECT_EQ(test::error_message([&] { from_json(R"({"traceEvents": []})", "r.json", options); }),
            "--step-regex 'iteration_\\d+': needs a capture group for the step number, as in "
            "'ProfilerStep#(\\d+)'");
}

TEST(KinetoReader, BadInputNamesTheFile) {
  EXPECT_EQ(test::error_message([] { from_json(R"({"traceEvents": []})", "/t/node-a.json"); }),
            "/t/node-a.json: no rank: distributedInfo.rank is missing and the file name does "
            "not say (name it rank-N.json)");
  EXPECT_EQ(test::error_message([] {
              from_json(R"({"traceEvents": [{"ph": "X", "ts": 1}, {"ph": )", "rank-1.json");
            }),
            "rank-1.json: byte 46: the JSON ends inside traceEvents: the file is truncated");
  const std::string dir = test::temp_dir("kineto-bad");
  std::string packed = test::read_file(kTraces + "kineto-2ranks-of-128/rank-0.json.gz");
  test::write_file(dir + "/rank-0.json.gz", packed.substr(0, packed.size() / 2));
  std::string cut = test::error_message([&] { read_kineto(dir + "/rank-0.json.gz", {}); });
  EXPECT_TRUE(cut.starts_with(dir + "/rank-0.json.gz: the gzip stream ends at byte " +
                              std::to_string(packed.size() / 2) + " (after "))
      << cut;
  EXPECT_TRUE(cut.ends_with(" bytes of text) without its end marker: the file is truncated"));
  test::write_file(dir + "/rank-1.json", std::string("{\"traceEvents\": []}\0", 20));
  EXPECT_EQ(test::error_message([&] { read_kineto(dir + "/rank-1.json", {}); }),
            dir + "/rank-1.json: byte 19: a NUL byte; expected JSON text (is this a binary "
                  "file?)");
}

// --- damaged input (docs/step.md, "Damaged input"): real traces broken on purpose; event
// numbers, steps and counts checked with Python's json on the files ---

std::string text_of(const std::string& file) { return std::string(read_trace_text(file).view()); }

// Where `what` is in `text` from `from` on (Boyer-Moore-Horspool: these texts are 35 MB of
// mostly quotes, which a plain find stops at); npos when it is not.
size_t find_in(std::string_view text, std::string_view what, size_t from = 0) {
  auto found = std::search(text.begin() + static_cast<std::ptrdiff_t>(from), text.end(),
                           std::boyer_moore_horspool_searcher(what.begin(), what.end()));
  return found == text.end() ? std::string::npos : static_cast<size_t>(found - text.begin());
}

// `text` with `from` (found exactly once) replaced by `to`.
std::string with(std::string text, std::string_view from, std::string_view to) {
  size_t at = find_in(text, from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  EXPECT_EQ(find_in(text, from, at + 1), std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

RankTrace read_as_rank1(const std::string& text) {
  return kineto_from_text(trace_text_from_bytes(text, "rank1.json"), {});
}

// Rank 1 of the 128-rank job (4720 events): its first NCCL kernel is traceEvents[2511], its
// first step traceEvents[0].
const std::string& small_text() {
  static const std::string text = text_of(kTraces + "kineto-2ranks-of-128/rank-1.json.gz");
  return text;
}
constexpr std::string_view kSendRecv = R"("ts": 1682725898129911, "dur": 57924.0)";
constexpr std::string_view kStep551 = R"("ts": 1682725898079484, "dur": 607904.0)";
const std::string kSendRecvEvent =
    "rank1.json: event 2511 ('ncclKernel_SendRecv_RING_SIMPLE_Sum_int8...')";

std::string small_error(std::string_view from, std::string_view to) {
  const std::string text = with(small_text(), from, to);
  return test::error_message([&] { read_as_rank1(text); });
}

TEST(KinetoDamage, TimesOfTheWrongTypeAreErrorsNamingTheEvent) {
  EXPECT_EQ(small_error(kSendRecv, R"("ts": 1682725898129911, "dur": "57924.0")"),
            kSendRecvEvent + ": 'dur' is a string (\"57924.0\"), expected a number of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": null, "dur": 57924.0)"),
            kSendRecvEvent + ": 'ts' is null, expected a number of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": "1682725898129911", "dur": 57924.0)"),
            kSendRecvEvent + ": 'ts' is a string (\"1682725898129911\"), expected a number "
                             "of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": "n/a", "dur": 57924.0)"),
            kSendRecvEvent + ": 'ts' is \"n/a\", expected a number of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": 1682725898129911)"),
            kSendRecvEvent + ": 'dur' is missing, expected a number of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": 1682725898129911, "dur": null)"),
            kSendRecvEvent + ": 'dur' is null, expected a number of µs");
  EXPECT_EQ(small_error(kSendRecv, R"("ts": 9223372036854775, "dur": 57924.0)"),
            kSendRecvEvent + ": 'ts' + 'dur' is out of the range of int64 nanoseconds");
  EXPECT_EQ(small_error(kStep551, R"("ts": 1682725898079484, "dur": "607904.0")"),
            "rank1.json: event 0 ('ProfilerStep#551'): 'dur' is a string (\"607904.0\"), "
            "expected a number of µs");
}

TEST(KinetoDamage, AStepWithANegativeDurationOrTimeIsAnError) {
  EXPECT_EQ(small_error(kStep551, R"("ts": 1682725898079484, "dur": -607904.0)"),
            "rank1.json: event 0 ('ProfilerStep#551'): 'dur' is negative (-607904.000 µs)");
  EXPECT_EQ(small_error(kStep551, R"("ts": -1682725898079484, "dur": 607904.0)"),
            "rank1.json: event 0 ('ProfilerStep#551'): the step starts before 1970 "
            "(-1682725898079484.000 µs); a step's span must be known");
}

TEST(KinetoDamage, ANegativeStartIsOutsideEveryStep) {
  RankTrace trace =
      read_as_rank1(with(small_text(), kSendRecv, R"("ts": -1682725898129911, "dur": 57924.0)"));
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(trace.dropped[0].why, "a negative time");
  std::vector<RankTrace> set;
  set.push_back(std::move(trace));
  std::vector<std::string> notes;
  check_trace_set(set, "ProfilerStep#(\\d+)", notes);
  ASSERT_EQ(notes.size(), 2U);
  EXPECT_EQ(notes[1],
            "rank 1 (rank1.json): dropped 1 device event for a negative time (the first: event "
            "2511 ('ncclKernel_SendRecv_RING_SIMPLE_Sum_int8...')): 1 outside every step; "
            "their time is missing from the figures");
  // With baseTimeNanoseconds, a negative "ts" is relative: what counts is the absolute time.
  RankTrace based = from_json(R"({"baseTimeNanoseconds": 5000, "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "ts": -4, "dur": 2},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": -6, "dur": 2}]})");
  ASSERT_EQ(based.spans.size(), 1U);
  EXPECT_EQ(based.spans[0].start_ns, 1000);
  ASSERT_EQ(based.dropped.size(), 1U);
  EXPECT_EQ(based.dropped[0].starts_ns, (std::vector<int64_t>{-1000}));
  EXPECT_EQ(based.dropped[0].first, "event 1 ('k')");
  EXPECT_EQ(test::error_message([] {
              from_json(R"({"baseTimeNanoseconds": -1, "traceEvents": []})");
            }),
            "rank-2.json: baseTimeNanoseconds is negative (-1); expected the profiler's start "
            "in ns since 1970");
}

TEST(KinetoDamage, AFileCutShortIsAnError) {
  // Cut just before the first NCCL kernel's event: the JSON ends inside traceEvents.
  const std::string& text = small_text();
  const size_t cut = text.rfind('{', text.find(kSendRecv));
  EXPECT_EQ(test::error_message([&] { read_as_rank1(text.substr(0, cut)); }),
            "rank1.json: byte " + std::to_string(cut) +
                ": the JSON ends inside traceEvents: the file is truncated");
  // Cut inside its name.
  const size_t in_name = text.find("ncclKernel_SendRecv");
  EXPECT_EQ(test::error_message([&] { read_as_rank1(text.substr(0, in_name + 4)); }),
            "rank1.json: byte " + std::to_string(in_name + 4) +
                ": a string is not closed: the file is truncated");
}

// `from` (found exactly once) overwritten by `to`, of the same length, in place: the DDP text is
// 35 MB, which a copy per change would allocate again.
void patch(TraceText& text, std::string_view from, std::string_view to) {
  ASSERT_EQ(from.size(), to.size());
  size_t at = find_in(text.view(), from);
  ASSERT_NE(at, std::string::npos) << from;
  ASSERT_EQ(find_in(text.view(), from, at + 1), std::string::npos) << from;
  std::copy(to.begin(), to.end(), text.data.get() + at);
}

// The DDP trace (rank 1 of 2, 216092 events): its first three AllReduce kernels,
// traceEvents[105013], [105031] and [105049], all in step 3, which holds 4458 device events of
// non-zero length. Whole, it reads as 22290 spans and 2020 calls
// (KinetoReader.DdpRankOneHasItsAllReducesOnTheirOwnStream).
TEST(KinetoDamage, DeviceEventsWithNegativeTimesAreDroppedAndNotedWithTheirSteps) {
  TraceText text = read_trace_text(kTraces + "kineto-ddp-rank1-of2/df_index_resolver.json.gz");
  text.source = "rank1.json";
  patch(text, R"("ts": 1669783687929439, "dur": 15,)", R"("ts": 1669783687929439, "dur":-15,)");
  patch(text, R"("ts": 1669783687929583, "dur": 5,)", R"("ts": 1669783687929583, "dur":-5,)");
  patch(text, R"("ts": 1669783687929943, "dur": 29,)", R"("ts": 1669783687929943, "dur":-29,)");
  RankTrace trace = kineto_from_text(text, {});
  EXPECT_EQ(trace.spans.size(), 22290U - 3);
  EXPECT_EQ(trace.calls.size(), 2020U - 3);
  for (const DeviceSpan& span : trace.spans) ASSERT_GT(span.end_ns, span.start_ns);
  const std::string first = "event 105013 ('ncclKernel_AllReduce_RING_LL_Sum_float(n...')";
  ASSERT_EQ(trace.dropped.size(), 1U);
  EXPECT_EQ(trace.dropped[0].why, "a negative 'dur'");
  EXPECT_EQ(trace.dropped[0].first, first);
  EXPECT_EQ(trace.dropped[0].starts_ns,
            (std::vector<int64_t>{1669783687929439000, 1669783687929583000,
                                  1669783687929943000}));
  std::vector<RankTrace> set;
  set.push_back(std::move(trace));
  std::vector<std::string> notes;
  check_trace_set(set, "ProfilerStep#(\\d+)", notes);
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "1 of 2 ranks: cross-rank figures (skew, stragglers, matched collectives) "
                       "cover only these ranks",
                       "rank 1 (rank1.json): dropped 3 device events for a negative 'dur' (the "
                       "first: " + first + "): 3 of 4458 in step 3; their time is missing from "
                       "the figures"}));
}

// The note travels in StepResult::notes to every report (the CSV keeps msprof-analyze's columns
// only; the console beside it shows the notes).
TEST(KinetoDamage, TheNoteReachesTheConsoleJsonAndHtml) {
  RankTrace trace = from_json(R"({"distributedInfo": {"rank": 0, "world_size": 1},
      "traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
      {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 10, "dur": 50},
      {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 70, "dur": -20}]})",
                              "rank-0.json");
  std::vector<RankTrace> traces;
  traces.push_back(std::move(trace));
  const StepResult result = analyze(std::move(traces), {});
  const std::string note =
      "rank 0 (rank-0.json): dropped 1 device event for a negative 'dur' (the first: event 2 "
      "('gemm')): 1 of 2 in step 1; their time is missing from the figures";
  EXPECT_EQ(result.notes, (std::vector<std::string>{note}));
  ASSERT_EQ(result.ranks.at(0).steps.size(), 1U);
  EXPECT_EQ(result.ranks[0].steps[0].compute_us, 50.0);
  std::ostringstream console;
  report::StepConsoleReporter().report(result, console);
  EXPECT_NE(console.str().find("  - " + note + "\n"), std::string::npos) << console.str();
  EXPECT_EQ(report::step_to_json(result)["notes"], nlohmann::json::array({note}));
  std::ostringstream html;
  report::write_step_html(result, html);
  EXPECT_NE(html.str().find("dropped 1 device event for a negative"), std::string::npos);
}

// Events plumb does not use are not judged: a flow event's null "ts" changes no figure.
TEST(KinetoDamage, UnusedEventsAreNotJudged) {
  RankTrace trace = from_json(R"({"traceEvents": [
      {"ph": "s", "cat": "ac2g", "name": "ac2g", "ts": null},
      {"ph": "X", "cat": "python_function", "name": "f", "ts": "soon", "dur": "x"},
      {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]})");
  EXPECT_EQ(trace.spans.size(), 1U);
  EXPECT_TRUE(trace.dropped.empty());
  EXPECT_EQ(test::error_message([] {
              from_json(R"({"traceEvents": [
                  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": null,
                   "args": {"correlation": 7}}]})");
            }),
            "rank-2.json: event 0 ('cudaLaunchKernel'): 'ts' is null, expected a number of µs");
  EXPECT_EQ(test::error_message([] {
              from_json(R"({"traceEvents": [
                  {"ph": "X", "cat": "cpu_op", "name": "c10d::allreduce_", "ts": 5, "dur": -1}]})");
            }),
            "rank-2.json: event 0 ('c10d::allreduce_'): 'dur' is negative (-1.000 µs)");
}

TEST(RankFromFileName, ReadsTheRankTheNameSays) {
  EXPECT_EQ(rank_from_file_name("rank-3.json"), 3);
  EXPECT_EQ(rank_from_file_name("rank_12.json.gz"), 12);
  EXPECT_EQ(rank_from_file_name("RANK7.pt.trace.json"), 7);
  EXPECT_EQ(rank_from_file_name("rank3_ascend_pt"), 3);
  EXPECT_EQ(rank_from_file_name("trace_8_rank_1.json"), 1);
  EXPECT_EQ(rank_from_file_name("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"), 0);
  EXPECT_EQ(rank_from_file_name("df_index_resolver.json"), -1);
  EXPECT_EQ(rank_from_file_name("cranky3.json"), -1);
  EXPECT_EQ(rank_from_file_name("rank-.json"), -1);
}

}  // namespace
}  // namespace plumb::step
