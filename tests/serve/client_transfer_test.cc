#include "serve/client_transfer.h"

#include <gtest/gtest.h>

namespace plumb::serve {
namespace {

RequestRecord settle(const std::string& api, const TransferEnd& end, StreamState state = {},
                     RequestRecord record = {}) {
  RequestSpec spec;
  spec.input_tokens = 9;
  settle_record(find_api(api), end, state, spec, "h:1", 600, 50, record);
  return record;
}

TEST(ServeClientTransfer, HttpStatusDetailIsTheBodysFirstLine) {
  EXPECT_EQ(http_status_detail(500, "overloaded\n"), "HTTP 500: overloaded");
  EXPECT_EQ(http_status_detail(404, ""), "HTTP 404");
  EXPECT_EQ(http_status_detail(400, "{\"error\":\n \"bad\"}"), "HTTP 400: {\"error\":  \"bad\"}");
  EXPECT_EQ(http_status_detail(503, std::string(300, 'x')), "HTTP 503: " + std::string(200, 'x'));
}

TEST(ServeClientTransfer, AnEndedStreamIsOkWhateverFollows) {
  StreamState state;
  state.ended = true;
  TransferEnd end;
  end.code = CURLE_RECV_ERROR;
  end.http_status = 200;
  RequestRecord r = settle("tgi", end, state);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.end_ns, 50);
}

TEST(ServeClientTransfer, TritonEndsWithItsStream) {
  TransferEnd end;
  end.http_status = 200;
  EXPECT_TRUE(settle("triton", end).ok());
  RequestRecord tgi = settle("tgi", end);
  EXPECT_EQ(tgi.error, ErrorKind::dropped);
  EXPECT_EQ(tgi.error_detail, "the stream ended before an event with generated_text");
}

TEST(ServeClientTransfer, AnAnswerThatIsNotAnEventStreamIsMalformed) {
  TransferEnd end;
  end.http_status = 200;
  end.content_type = "application/json";
  RequestRecord r = settle("openai-completions", end);
  EXPECT_EQ(r.error, ErrorKind::malformed);
  EXPECT_EQ(r.error_detail,
            "the answer is not server-sent events (Content-Type: application/json)");
  end.content_type = "text/event-stream; charset=utf-8";
  EXPECT_TRUE(settle("triton", end).ok());
}

TEST(ServeClientTransfer, ErrorKindsFromLibcurlCodes) {
  TransferEnd end;
  end.code = CURLE_COULDNT_RESOLVE_HOST;
  end.curl_error = "Could not resolve host: nowhere";
  RequestRecord r = settle("tgi", end);
  EXPECT_EQ(r.error, ErrorKind::connect);
  EXPECT_EQ(r.error_detail, "Could not resolve host: nowhere");
  end.code = CURLE_OPERATION_TIMEDOUT;
  end.curl_error = "Connection timed out after 10001 milliseconds";
  EXPECT_EQ(settle("tgi", end).error, ErrorKind::connect);  // never connected
  end.connected = true;
  end.http_status = 200;
  r = settle("tgi", end);
  EXPECT_EQ(r.error, ErrorKind::timeout);
  EXPECT_EQ(r.error_detail, "no end within 600 s of being sent (0 chunks read)");
  end.code = CURLE_PARTIAL_FILE;
  end.curl_error = "transfer closed with outstanding read data remaining";
  r = settle("openai-chat", end);
  EXPECT_EQ(r.error, ErrorKind::dropped);
  EXPECT_EQ(r.error_detail, "the connection closed before data: [DONE] (transfer closed with "
                            "outstanding read data remaining)");
}

TEST(ServeClientTransfer, AnErrorTheStreamSaidIsKept) {
  RequestRecord record;
  record.error = ErrorKind::server;
  record.error_detail = "CUDA out of memory";
  record.end_ns = 20;
  TransferEnd end;
  end.code = CURLE_WRITE_ERROR;
  end.http_status = 200;
  RequestRecord r = settle("tgi", end, {}, record);
  EXPECT_EQ(r.error, ErrorKind::server);
  EXPECT_EQ(r.error_detail, "CUDA out of memory");
  EXPECT_EQ(r.end_ns, 20);
}

TEST(ServeClientTransfer, TokensFromUsageElseFromChunks) {
  TransferEnd end;
  end.http_status = 200;
  RequestRecord counted;
  counted.chunks = {{1, 1}, {2, 1}, {3, 1}};
  RequestRecord r = settle("triton", end, {}, counted);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.input_tokens, 9);
  EXPECT_EQ(r.token_source, TokenSource::chunks);
  StreamState state;
  state.ended = true;
  state.usage_prompt = 5;
  state.usage_completion = 7;
  r = settle("openai-completions", end, state, counted);
  EXPECT_EQ(r.output_tokens, 7);
  EXPECT_EQ(r.input_tokens, 5);
  EXPECT_EQ(r.token_source, TokenSource::usage);
}

}  // namespace
}  // namespace plumb::serve
