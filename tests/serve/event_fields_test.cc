#include "serve/event_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace plumb::serve {
namespace {

TEST(ServeEventFields, OnlyTheExactPathsCount) {
  EXPECT_TRUE(read_event_fields(R"({"choices":[{"index":0,"text":"a"}]})").choice_text);
  EXPECT_FALSE(read_event_fields(R"({"choices":[{"text":""}]})").choice_text);
  EXPECT_FALSE(read_event_fields(R"({"choices":[{"x":{"text":"a"}}]})").choice_text);
  EXPECT_FALSE(read_event_fields(R"({"choices":[{"text":""},{"text":"b"}]})").choice_text);
  EXPECT_FALSE(read_event_fields(R"({"text":"a","choices":{"text":"a"}})").choice_text);
  EXPECT_TRUE(read_event_fields(R"({"choices":[{"delta":{"role":"assistant","content":"x"}}]})")
                  .delta_text);
  EXPECT_TRUE(
      read_event_fields(R"({"choices":[{"delta":{"reasoning_content":"x","content":null}}]})")
          .delta_text);
  EXPECT_FALSE(
      read_event_fields(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})").delta_text);
}

TEST(ServeEventFields, CountsAndTheirPlaces) {
  EventFields f = read_event_fields(
      R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4,"x":{"prompt_tokens":9}}})");
  EXPECT_EQ(f.prompt_tokens, 7);
  EXPECT_EQ(f.completion_tokens, 4);
  EXPECT_EQ(read_event_fields(R"({"usage":null})").completion_tokens, -1);
  EXPECT_EQ(read_event_fields(R"({"completion_tokens":3})").completion_tokens, -1);
  EXPECT_EQ(read_event_fields(R"({"usage":{"completion_tokens":3.5}})").completion_tokens, -1);
  EventFields tgi = read_event_fields(
      R"({"token":{"id":1,"text":"a"},"generated_text":"a","details":{"generated_tokens":1}})");
  EXPECT_TRUE(tgi.token);
  EXPECT_TRUE(tgi.generated_text);
  EXPECT_EQ(tgi.generated_tokens, 1);
  EXPECT_FALSE(read_event_fields(R"({"token":{},"generated_text":null})").generated_text);
}

TEST(ServeEventFields, ErrorShapes) {
  EventFields text = read_event_fields(R"({"error":"boom","error_type":"generation"})");
  EXPECT_TRUE(text.error);
  EXPECT_EQ(text.error_message, "boom");
  EventFields object = read_event_fields(R"({"error":{"message":"overloaded","code":500}})");
  EXPECT_TRUE(object.error);
  EXPECT_EQ(object.error_message, "overloaded");
  EventFields old = read_event_fields(R"({"object":"error","message":"bad","code":400})");
  EXPECT_TRUE(old.error);
  EXPECT_EQ(old.error_message, "bad");
  EventFields bare = read_event_fields(R"({"error":{"code":500}})");
  EXPECT_TRUE(bare.error);
  EXPECT_EQ(bare.error_message, "");
  EXPECT_FALSE(read_event_fields(R"({"error":null,"message":"fine"})").error);
}

TEST(ServeEventFields, NotAnObjectOrNotJson) {
  EventFields array = read_event_fields("[1]");
  EXPECT_FALSE(array.valid);
  EXPECT_EQ(array.problem, "expected an object");
  EventFields cut = read_event_fields(R"({"text":)");
  EXPECT_FALSE(cut.valid);
  EXPECT_EQ(cut.problem.rfind("not valid JSON: ", 0), 0u) << cut.problem;
  EventFields deep = read_event_fields(std::string(600, '[') + std::string(600, ']'));
  EXPECT_FALSE(deep.valid);
  EXPECT_EQ(deep.problem, "JSON nested deeper than 512 levels (at byte 512)");
  EXPECT_FALSE(read_event_fields("{} {}").valid);
}

}  // namespace
}  // namespace plumb::serve
