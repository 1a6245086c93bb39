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

TEST(JsonParse, TooDeepForSaxReaders) {
  EXPECT_EQ(json_too_deep(nested(kMaxJsonDepth)), std::nullopt);
  EXPECT_EQ(json_too_deep(" " + nested(kMaxJsonDepth + 1)),
            "JSON nested deeper than 512 levels (at byte 513)");
}

// The callback keeps only some keys; a deep document is refused before it runs.
TEST(JsonParse, WithACallback) {
  const auto no_b = [](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    return !(event == nlohmann::json::parse_event_t::key && parsed == "b");
  };
  EXPECT_EQ(parse_json(R"({"a": 1, "b": 2})", "f.json", no_b), (nlohmann::json{{"a", 1}}));
  try {
    parse_json(nested(100000), "nodes.json", no_b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "nodes.json: JSON nested deeper than 512 levels (at byte 512)");
  }
  try {
    parse_json("[1, 2", "nodes.json", no_b);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "nodes.json: not valid JSON: parse error at line 1, column 6: syntax "
                           "error while parsing array - unexpected end of input; expected ']'");
  }
}

// An unterminated string is one token to the end of the input: the message quotes 40 bytes of it.
TEST(JsonParse, TheQuotedTokenIsShort) {
  try {
    parse_json("{\"a\": \"" + std::string(100000, 'x'), "big.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), ("big.json: not valid JSON: parse error at line 1, column 100008: "
                            "syntax error while parsing value - invalid string: missing closing "
                            "quote; last read: '\"" + std::string(39, 'x') + "...'")
                               .c_str());
  }
}

// Issue 31: nlohmann reads 0 as an unsigned number; the low bound holds for it too.
TEST(JsonFields, IntegerKeepsBothBoundsForUnsignedNumbers) {
  const JsonFields fields("f.json");
  const nlohmann::json doc = {{"n", 0}, {"m", 5}, {"k", -1}};
  EXPECT_EQ(fields.integer(doc, "", "m", 1, 10), 5);
  try {
    fields.integer(doc, "", "n", 1, 10);
    FAIL() << "0 passed a range of 1 to 10";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "f.json: n: expected a whole number from 1 to 10, got 0");
  }
  EXPECT_THROW(fields.integer(doc, "", "m", 1, 4), Error);
  EXPECT_THROW(fields.integer(doc, "", "k", 0, 4), Error);
  EXPECT_EQ(fields.integer(doc, "", "k", -1, 4), -1);
}

}  // namespace
}  // namespace plumb
