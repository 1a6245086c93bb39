// plumb.mem-events/1: every field read, step marks, the end-state segments, and exact errors.
#include "mem/jsonl_reader.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace plumb::mem {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_events_jsonl(text, "run.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(EventsJsonl, EventsFramesStepsAndSegments) {
  const Trace t = parse_events_jsonl(
      "# a comment\n"
      "{\"device\": 3}\n"
      "{\"action\": \"segment_alloc\", \"addr\": 0, \"size\": 20971520}\n"
      "{\"action\": \"step\"}\n"
      "{\"action\": \"alloc\", \"addr\": 0, \"size\": 2097152, \"stream\": 7, \"time_us\": 12.5,"
      " \"frames\": [{\"name\": \"forward\", \"filename\": \"model.py\", \"line\": 10}]}\n"
      "\n"
      "{\"action\": \"oom\", \"size\": 104857600, \"device_free\": 1048576}\n"
      "{\"segment\": {\"address\": 0, \"total_size\": 20971520, \"blocks\": ["
      "{\"address\": 0, \"size\": 2097152, \"state\": \"active_allocated\"},"
      "{\"address\": 2097152, \"size\": 18874368, \"state\": \"inactive\"}]}}\n",
      "run.jsonl");
  EXPECT_EQ(t.device, 3);
  ASSERT_EQ(t.events.size(), 3u);
  EXPECT_EQ(t.events[1].action, Action::kAlloc);
  EXPECT_EQ(t.events[1].size, 2097152u);
  EXPECT_EQ(t.stream_of(t.events[1]), 7);
  EXPECT_DOUBLE_EQ(t.events[1].time_us, 12.5);
  ASSERT_EQ(t.stacks.size(), 1u);
  EXPECT_EQ(t.frames[t.stacks[0][0]].name, "forward");
  EXPECT_EQ(t.events[2].action, Action::kOom);
  EXPECT_EQ(t.device_free_of(2), 1048576u);
  EXPECT_EQ(t.step_marks, std::vector<size_t>{1});
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].blocks[0].state, BlockState::kActiveAllocated);
  EXPECT_TRUE(t.has_time);
}

TEST(EventsJsonl, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("{\"action\": \"alloc\", \"addr\": 1}\n"), "run.jsonl:1: missing 'size'");
  EXPECT_EQ(error_of("\n{\"action\": \"alloc\", \"addr\": -1, \"size\": 2}\n"),
            "run.jsonl:2: 'addr' must be a non-negative integer");
  EXPECT_EQ(error_of("{\"action\": \"malloc\", \"addr\": 1, \"size\": 2}\n"),
            "run.jsonl:1: unknown action 'malloc': expected alloc, free_requested, free_completed, "
            "segment_alloc, segment_free, segment_map, segment_unmap, snapshot, oom, "
            "workspace_snapshot or step");
  EXPECT_EQ(error_of("{\"action\": \"alloc\",\n"),
            "run.jsonl:1: not valid JSON: parse error at line 1, column 20: syntax error while "
            "parsing object key - unexpected end of input; expected string literal");
  EXPECT_EQ(error_of("[1, 2]\n"), "run.jsonl:1: expected a JSON object");
  EXPECT_EQ(error_of("# nothing\n"), "run.jsonl: no allocator events");
  // Found by the fuzzer: a field of another type than expected is one line, not an abort.
  EXPECT_EQ(error_of("{\"device\": \"segment_alloc\"}\n"), "run.jsonl:1: 'device' must be an integer");
  EXPECT_EQ(error_of("{\"action\": \"alloc\", \"addr\": 1, \"size\": 2, \"frames\": [{\"line\": 7.7e21}]}\n"),
            "run.jsonl:1: 'line' must be an integer");
  EXPECT_EQ(error_of("{\"action\": \"alloc\", \"addr\": 1, \"size\": 2, \"frames\": [{\"name\": 3}]}\n"),
            "run.jsonl:1: 'name' must be a string, not number");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 0, \"total_size\": 1, \"blocks\": [{\"address\": 0, "
                     "\"size\": 1, \"state\": \"busy\"}]}}\n"),
            "run.jsonl:1: block state 'busy': expected active_allocated, active_pending_free or inactive");
}

}  // namespace
}  // namespace plumb::mem
