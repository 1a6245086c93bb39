#include "common/json.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"

namespace plumb {
namespace {

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonDepth, CountsBracketsOutsideStrings) {
  EXPECT_EQ(json_depth_exceeded(nested(3), 3), std::nullopt);
  EXPECT_EQ(json_depth_exceeded(nested(4), 3), 3u);
  EXPECT_EQ(json_depth_exceeded(R"({"a": "[[[[\"[[[[", "b": [1]})", 2), std::nullopt);
  EXPECT_EQ(json_depth_exceeded(R"({"a": {"b": {"c": 1}}})", 2), 12u);
}

TEST(JsonParse, RefusesDeepNestingByName) {
  try {
    parse_json(nested(100000), "POST /alerts");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "POST /alerts: JSON nested deeper than 512 levels (at byte 512)");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
  const nlohmann::json ok = parse_json(nested(kMaxJsonDepth), "f.json");
  const nlohmann::json copy = ok;  // copies recurse: fine at the limit
  EXPECT_EQ(copy, ok);
}

TEST(JsonParse, NamesTheSourceAndTheParsersReason) {
  try {
    parse_json("{\"a\": }", "run.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "run.json: not valid JSON: parse error at line 1, column 7: syntax error while "
              "parsing value - unexpected '}'; expected '[', '{', or a literal");
  }
  std::string problem;
  EXPECT_TRUE(parse_json_or_discarded("[1,", problem).is_discarded());
  EXPECT_NE(problem.find("not valid JSON: parse error"), std::string::npos);
  EXPECT_EQ(parse_json("{\"a\": [1, 2]}", "x")["a"][1], 2);
}

}  // namespace
}  // namespace plumb
