#include "exporter/http_request.h"

#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using State = HttpParse::State;

HttpParse parse(const std::string& text, HttpLimits limits = {}) {
  return parse_http_request(text, limits);
}

void expect_error(const std::string& text, int status, const std::string& message,
                  HttpLimits limits = {}) {
  const HttpParse p = parse(text, limits);
  EXPECT_EQ(p.state, State::kError) << text;
  EXPECT_EQ(p.status, status) << text;
  EXPECT_EQ(p.message, message) << text;
}

TEST(HttpRequest, ParsesAGetWithLowerCasedHeaderNames) {
  const std::string text =
      "GET /metrics?name[]=up HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nAccept:  text/plain \r\n\r\n";
  const HttpParse p = parse(text);
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.method, "GET");
  EXPECT_EQ(p.request.target, "/metrics?name[]=up");
  EXPECT_EQ(p.request.path, "/metrics");
  ASSERT_EQ(p.request.headers.size(), 2u);
  EXPECT_EQ(p.request.headers[0].first, "host");
  EXPECT_EQ(p.request.header("accept"), "text/plain");
  EXPECT_EQ(p.request.header("user-agent"), "");
  EXPECT_EQ(p.consumed, text.size());
  EXPECT_TRUE(p.keep_alive);
  EXPECT_FALSE(p.head);
  EXPECT_EQ(p.request.body, "");
}

TEST(HttpRequest, KeepAliveFollowsTheVersionAndTheConnectionHeader) {
  EXPECT_TRUE(parse("GET / HTTP/1.1\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n").keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
  EXPECT_TRUE(parse("HEAD / HTTP/1.1\r\n\r\n").head);
}

TEST(HttpRequest, IncompleteUntilTheBlankLineAndTheWholeBody) {
  EXPECT_EQ(parse("").state, State::kIncomplete);
  EXPECT_EQ(parse("GET /metrics HT").state, State::kIncomplete);
  EXPECT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n").state, State::kIncomplete);
  EXPECT_EQ(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r").state, State::kIncomplete);
  EXPECT_EQ(parse("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc").state, State::kIncomplete);
}

TEST(HttpRequest, ABodyEndsAtContentLengthAndThePipelinedRequestWaits) {
  const std::string first = "POST /api/v2/alerts HTTP/1.1\r\nContent-Length: 007\r\n\r\n{\"a\":1}";
  const HttpParse p = parse(first + "GET /healthz HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.body, "{\"a\":1}");
  EXPECT_EQ(p.consumed, first.size());
  const HttpParse same = parse("POST / HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok");
  EXPECT_EQ(same.request.body, "ok");
}

TEST(HttpRequest, SkipsLeadingBlankLinesAcceptsBareLineFeedsAndAbsoluteTargets) {
  const HttpParse p = parse("\r\n\nGET http://node1:9464/metrics?a=b HTTP/1.1\nHost: n\n\n");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.path, "/metrics");
  EXPECT_EQ(p.request.header("host"), "n");
  EXPECT_EQ(parse("GET http://node1 HTTP/1.1\r\n\r\n").request.path, "/");
  EXPECT_EQ(parse("OPTIONS * HTTP/1.1\r\n\r\n").request.path, "*");
}

TEST(HttpRequest, AMalformedRequestLineIs400) {
  const std::string m = "malformed request line: expected METHOD TARGET HTTP/1.1";
  expect_error("GET /metrics\r\n\r\n", 400, m);
  expect_error("GET  /metrics HTTP/1.1\r\n\r\n", 400, m);
  expect_error("GET /metrics HTTP/1.1 \r\n\r\n", 400, m);
  expect_error("G(T /metrics HTTP/1.1\r\n\r\n", 400, m);
  expect_error("GET /met\x01rics HTTP/1.1\r\n\r\n", 400, m);
  expect_error("GET /metrics http/1.1\r\n\r\n", 400, m);
  expect_error("\x16\x03\x01\x02\x05\x01\x03\x03\n", 400, m);  // TLS hello
  expect_error("GET metrics HTTP/1.1\r\n\r\n", 400,
               "malformed request target: expected a path (/metrics)");
  expect_error("GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0 is not supported: use HTTP/1.1 or HTTP/1.0");
}

TEST(HttpRequest, AMalformedHeaderIs400WithItsLineNumber) {
  expect_error("GET / HTTP/1.1\r\nHost: a\r\nAccept text/plain\r\n\r\n", 400,
               "malformed header line 2: expected NAME: VALUE");
  expect_error("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400,
               "malformed header line 1: expected NAME: VALUE");
  expect_error("GET / HTTP/1.1\r\n: a\r\n\r\n", 400,
               "malformed header line 1: expected NAME: VALUE");
  expect_error("GET / HTTP/1.1\r\nX-A: 1\r\n 2\r\n\r\n", 400,
               "header line 2: folded continuation lines are not accepted");
  expect_error(std::string("GET / HTTP/1.1\r\nX-A: 1") + '\0' + "2\r\n\r\n", 400,
               "header line 1: control character in the value");
}

TEST(HttpRequest, BodiesNeedOneContentLengthWithinTheLimit) {
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 411,
               "chunked request bodies are not supported: send Content-Length");
  expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
               "Transfer-Encoding is not supported: send the body with Content-Length");
  expect_error("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
               "Content-Length is not a number of bytes");
  expect_error("POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", 400,
               "Content-Length is not a number of bytes");
  expect_error("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400,
               "two different Content-Length headers");
  HttpLimits small;
  small.max_body_bytes = 10;
  const std::string too_large = "request body larger than the limit of 10 bytes";
  expect_error("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", 413, too_large, small);
  expect_error("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413,
               too_large, small);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789", small).state,
            State::kComplete);
}

TEST(HttpRequest, HeadersPastTheLimitAre431WhetherCompleteOrNot) {
  HttpLimits small;
  small.max_header_bytes = 64;
  const std::string m = "request line and headers larger than the limit of 64 bytes";
  const std::string big = "GET / HTTP/1.1\r\nX-Long: " + std::string(60, 'a');
  expect_error(big, 431, m, small);                 // no line end yet
  expect_error(big + "\r\n\r\n", 431, m, small);    // complete, too large
  expect_error(std::string(70, '\n'), 431, m, small);  // blank lines count too
  const std::string fits = "GET / HTTP/1.1\r\nX-A: " + std::string(39, 'a') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 64u);
  EXPECT_EQ(parse(fits, small).state, State::kComplete);
}

TEST(HttpRequest, ResponsesCarryLengthTypeAndConnection) {
  std::string out;
  append_http_response(out, {200, "text/plain; version=0.0.4; charset=utf-8", "up 1\n", {}}, true,
                       false);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 5\r\nConnection: keep-alive\r\n\r\nup 1\n");
  out.clear();
  append_http_response(out, {405, "text/plain; charset=utf-8", "no\n", {{"Allow", "GET, HEAD"}}},
                       false, true);
  EXPECT_EQ(out,
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 3\r\nAllow: GET, HEAD\r\nConnection: close\r\n\r\n");
  out.clear();
  append_http_response(out, {204, "text/plain", "ignored", {}}, true, false);
  EXPECT_EQ(out, "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(http_reason(431), "Request Header Fields Too Large");
  EXPECT_EQ(http_reason(299), "");
}

TEST(ListenAddress, TakesHostAndPortApart) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9464", "--listen").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address("127.0.0.1:9464", "--listen").port, 9464);
  EXPECT_EQ(parse_listen_address("[::1]:0", "--listen").host, "::1");
  EXPECT_EQ(parse_listen_address("[::1]:0", "--listen").port, 0);
  EXPECT_EQ(parse_listen_address(":9093", "--listen").host, "");
  EXPECT_EQ(parse_listen_address("localhost:65535", "--listen").port, 65535);
}

TEST(ListenAddress, NamesTheOptionWhenMalformed) {
  for (const std::string bad : {"9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "::1:9464",
                                "[::1]9464", "[]:1", "host:65536", "host:123456", "host:-1"}) {
    EXPECT_EQ(test::error_message([&] { parse_listen_address(bad, "--listen"); }),
              "--listen " + bad + ": expected HOST:PORT");
  }
}

}  // namespace
}  // namespace plumb::exporter
