#include "serve/sse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plumb::serve {
namespace {

struct Seen {
  std::string type, data, id;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> feed_all(SseParser& parser, std::string_view bytes) {
  std::vector<Seen> seen;
  parser.feed(bytes, [&](const SseEvent& e) {
    seen.push_back({std::string(e.type), std::string(e.data), std::string(e.id)});
    return true;
  });
  return seen;
}

std::vector<Seen> parse(std::string_view bytes) {
  SseParser parser;
  return feed_all(parser, bytes);
}

// Every split of `bytes` into two feeds gives the same events as one feed.
void expect_split_invariant(std::string_view bytes) {
  std::vector<Seen> whole = parse(bytes);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    SseParser parser;
    std::vector<Seen> parts = feed_all(parser, bytes.substr(0, cut));
    for (Seen& s : feed_all(parser, bytes.substr(cut))) parts.push_back(s);
    EXPECT_EQ(parts, whole) << "split at byte " << cut;
  }
}

TEST(ServeSse, DataLinesAreJoinedAndDispatchedOnABlankLine) {
  EXPECT_EQ(parse("data: a\ndata: b\n\ndata:c\n\n"),
            (std::vector<Seen>{{"", "a\nb", ""}, {"", "c", ""}}));
}

TEST(ServeSse, OneLeadingSpaceIsRemovedOnce) {
  EXPECT_EQ(parse("data:  two\n\n"), (std::vector<Seen>{{"", " two", ""}}));
}

TEST(ServeSse, EveryLineEndIsALineEnd) {
  EXPECT_EQ(parse("data: a\r\n\r\ndata: b\r\rdata: c\n\n"),
            (std::vector<Seen>{{"", "a", ""}, {"", "b", ""}, {"", "c", ""}}));
}

TEST(ServeSse, CommentsAndUnknownFieldsAreIgnored) {
  EXPECT_EQ(parse(": ping\nfoo: bar\ndata: x\n: keep-alive\n\n"),
            (std::vector<Seen>{{"", "x", ""}}));
}

TEST(ServeSse, EventIdAndRetryFields) {
  SseParser parser;
  EXPECT_EQ(feed_all(parser, "event: error\nid: 7\nretry: 3000\ndata: {}\n\ndata: y\n\n"),
            (std::vector<Seen>{{"error", "{}", "7"}, {"", "y", "7"}}));
  EXPECT_EQ(parser.retry_ms(), 3000);
  SseParser bad_retry;
  feed_all(bad_retry, "retry: 3s\n\n");
  EXPECT_EQ(bad_retry.retry_ms(), -1);
}

TEST(ServeSse, ABlankLineWithoutDataDispatchesNothing) {
  EXPECT_TRUE(parse("\n\nevent: x\n\n").empty());
  EXPECT_EQ(parse("data\n\n"), (std::vector<Seen>{{"", "", ""}}));  // a field with no colon
}

TEST(ServeSse, AnEventWithoutItsBlankLineIsNotDispatched) {
  SseParser parser;
  EXPECT_TRUE(feed_all(parser, "data: half").empty());
  EXPECT_FALSE(parser.at_event_boundary());
  EXPECT_EQ(feed_all(parser, "\n\n"), (std::vector<Seen>{{"", "half", ""}}));
  EXPECT_TRUE(parser.at_event_boundary());
}

TEST(ServeSse, SplitAtEveryByteGivesTheSameEvents) {
  expect_split_invariant("data: {\"a\":1}\r\n\r\n: c\revent: e\rdata: x\r\rdata:y\ndata: z\n\n");
  expect_split_invariant("data: [DONE]\r\n\r\n");
}

TEST(ServeSse, OneByteAtATime) {
  std::string stream = "data: a\r\n\r\ndata: b\r\rdata: c\n\n";
  SseParser parser;
  std::vector<Seen> seen;
  for (char c : stream) {
    for (Seen& s : feed_all(parser, std::string_view(&c, 1))) seen.push_back(s);
  }
  EXPECT_EQ(seen, parse(stream));
}

TEST(ServeSse, TheCallbackStopsReading) {
  SseParser parser;
  int calls = 0;
  parser.feed("data: a\n\ndata: b\n\n", [&](const SseEvent&) { return ++calls < 1; });
  EXPECT_EQ(calls, 1);
}

TEST(ServeSse, AnOversizeEventIsReportedNotGrown) {
  SseParser parser;
  std::string line = "data: " + std::string(kMaxSseEventBytes, 'x');
  EXPECT_EQ(parser.feed(line, [](const SseEvent&) { return true; }), SseParser::Status::oversize);
  SseParser many_lines;
  std::string chunk = "data: " + std::string(1000, 'y') + "\n";
  SseParser::Status status = SseParser::Status::ok;
  for (int i = 0; i < 1100 && status == SseParser::Status::ok; ++i) {
    status = many_lines.feed(chunk, [](const SseEvent&) { return true; });
  }
  EXPECT_EQ(status, SseParser::Status::oversize);
  many_lines.reset();
  EXPECT_EQ(many_lines.status(), SseParser::Status::ok);
  EXPECT_EQ(feed_all(many_lines, "data: ok\n\n"), (std::vector<Seen>{{"", "ok", ""}}));
}

}  // namespace
}  // namespace plumb::serve
