// The reference server: its bytes on the wire per API, its capacity model as its own recorded
// truth shows it, and each programmed fault.
#include "serve/mock_server.h"

#include "common/error.h"
#include "serve/mock_http.h"
#include "serve/mock_wire.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace plumb::serve {
namespace {

using testing::dechunk;
using testing::http_exchange;
using testing::without_created;

constexpr Nanos kMs = 1'000'000;

struct Running {
  MockServer server;
  explicit Running(MockConfig config) : server(std::move(config)) { server.start(); }
};

MockConfig quick(int tokens = 2) {
  MockConfig config;
  config.plan.tokens = tokens;
  return config;
}

TEST(MockWire, OpenAiCompletionsStreamIsVllmsBytes) {
  Running mock(quick());
  auto answer = http_exchange(mock.server.port(), "POST", "/v1/completions",
                              R"({"model":"m","prompt":"a b c","max_tokens":2,"stream":true,)"
                              R"("stream_options":{"include_usage":true}})");
  auto decoded = dechunk(answer.bytes);
  EXPECT_EQ(decoded.head,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
            "transfer-encoding: chunked\r\n");
  EXPECT_TRUE(decoded.complete);
  EXPECT_EQ(without_created(decoded.body),
            R"(data: {"id":"cmpl-mock1","object":"text_completion","created":0,"model":"m",)"
            R"("choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null,)"
            R"("stop_reason":null}],"usage":null})" "\n\n"
            R"(data: {"id":"cmpl-mock1","object":"text_completion","created":0,"model":"m",)"
            R"("choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":"length",)"
            R"("stop_reason":null}],"usage":null})" "\n\n"
            R"(data: {"id":"cmpl-mock1","object":"text_completion","created":0,"model":"m",)"
            R"("choices":[],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2,)"
            R"("prompt_tokens_details":null}})"
            "\n\ndata: [DONE]\n\n");
}

TEST(MockWire, OpenAiChatSendsTheRoleFirstAndNoUsageUnlessAsked) {
  MockRequest request;
  request.model = "m";
  const MockApi& chat = *find_mock_api("/v1/chat/completions");
  EXPECT_EQ(chat.name, "openai-chat");
  EXPECT_EQ(chat.token(request, "chatcmpl-x", 1, 1) + chat.end(request, "chatcmpl-x", 1),
            R"(data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":0,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,)"
            R"("finish_reason":null}]})" "\n\n"
            R"(data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":0,"model":"m",)"
            R"("choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,)"
            R"("finish_reason":"length","stop_reason":null}]})" "\n\ndata: [DONE]\n\n");
}

TEST(MockWire, TgiStreamIsAxumsDataWithoutASpace) {
  Running mock(quick());
  auto answer = http_exchange(mock.server.port(), "POST", "/generate_stream",
                              R"({"inputs":"a b","parameters":{"max_new_tokens":2}})");
  auto decoded = dechunk(answer.bytes);
  EXPECT_TRUE(decoded.complete);
  EXPECT_EQ(decoded.body,
            R"(data:{"index":1,"token":{"id":1,"text":" tok","logprob":-0.1,"special":false},)"
            R"("generated_text":null,"details":null})" "\n\n"
            R"(data:{"index":2,"token":{"id":2,"text":" tok","logprob":-0.1,"special":false},)"
            R"("generated_text":" tok tok","details":{"finish_reason":"length",)"
            R"("generated_tokens":2,"seed":null,"input_length":2}})" "\n\n");
}

TEST(MockWire, TritonStreamNamesTheModelOfItsPath) {
  Running mock(quick(5));
  auto answer = http_exchange(mock.server.port(), "POST", "/v2/models/ensemble/generate_stream",
                              R"({"text_input":"a","parameters":{"max_tokens":1}})");
  EXPECT_EQ(dechunk(answer.bytes).body,
            "data: {\"model_name\":\"ensemble\",\"model_version\":\"1\",\"text_output\":\" tok\"}\n\n");
}

TEST(MockWire, CloseDelimitedStreamEndsByClosing) {
  Running mock(quick());
  auto answer = http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})",
                              "X-Plumb-Mock: framing=close,tokens=1\r\n");
  EXPECT_TRUE(answer.closed);
  EXPECT_EQ(answer.bytes.substr(0, answer.bytes.find("\r\n\r\n")),
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close");
  EXPECT_TRUE(answer.bytes.ends_with("\"input_length\":1}}\n\n"));
}

TEST(MockWire, RequestsItCannotServeAreAnsweredWithTheReason) {
  Running mock(quick());
  int port = mock.server.port();
  EXPECT_TRUE(http_exchange(port, "POST", "/v1/completions", "{oops").bytes.ends_with(
      R"({"object":"error","message":"request body: not valid JSON: parse error at line 1, column 2: syntax error while )"
      R"(parsing object key - invalid literal; last read: '{o'; expected string literal","type":)"
      R"("mock_error","param":null,"code":400})"));
  EXPECT_TRUE(http_exchange(port, "POST", "/v1/completions", R"({"prompt":"a"})").bytes.ends_with(
      R"("message":"the mock server only streams: set \"stream\": true","type":"mock_error",)"
      R"("param":null,"code":400})"));
  EXPECT_TRUE(http_exchange(port, "POST", "/generate_stream", R"({"inputs":"a"})",
                            "X-Plumb-Mock: ttft=fast\r\n").bytes.ends_with(
      R"({"error":"X-Plumb-Mock ttft 'fast': expected a duration such as 50ms, 200us or 1.5s",)"
      R"("error_type":"mock"})"));
  EXPECT_TRUE(http_exchange(port, "GET", "/nowhere", "").bytes.starts_with("HTTP/1.1 404"));
}

// The capacity model seen in the server's own truth: deadlines are absolute, so a token is never
// before its due time, and the request that waited got its slot when the first one ended.
TEST(MockServerTiming, TheGapGrowsWithTheBatch) {
  MockPlan plan;
  plan.itl_ns = 2 * kMs;
  plan.itl_per_active_ns = kMs / 2;
  EXPECT_EQ(mock_gap(plan, 1), 2 * kMs);
  EXPECT_EQ(mock_gap(plan, 2), 2 * kMs + kMs / 2);
  EXPECT_EQ(mock_gap(plan, 9), 6 * kMs);
  EXPECT_EQ(mock_gap(plan, 0), 2 * kMs);
}

TEST(MockServerTiming, AThirdRequestWaitsForASlotFifo) {
  MockConfig config = quick(3);
  config.slots = 2;
  config.plan.ttft_ns = 4 * kMs;
  config.plan.itl_ns = 2 * kMs;
  config.plan.itl_per_active_ns = 1 * kMs;
  Running mock(config);
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&mock] {
      http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})");
    });
  for (auto& client : clients) client.join();
  auto truth = mock.server.truth();
  ASSERT_EQ(truth.size(), 3u);
  std::sort(truth.begin(), truth.end(),
            [](const MockTruth& a, const MockTruth& b) { return a.started_ns < b.started_ns; });
  for (const auto& t : truth) {
    ASSERT_EQ(t.outcome, "completed");
    ASSERT_EQ(t.token_ns.size(), 3u);
    EXPECT_GE(t.token_ns[0], t.started_ns + 4 * kMs);
  }
  // Every gap is at least the one-active gap (2 ms): tokens are never early.
  for (const auto& t : truth) EXPECT_GE(t.token_ns[2], t.started_ns + 4 * kMs + 2 * 2 * kMs);
  // The third waited (FIFO) for a slot, freed at a first one's last token's due time.
  Nanos first_end_due = std::min(truth[0].started_ns, truth[1].started_ns) + 8 * kMs;
  EXPECT_GE(truth[2].started_ns, first_end_due);
  EXPECT_LE(truth[2].started_ns, std::max(truth[0].end_ns, truth[1].end_ns));
  EXPECT_GT(truth[2].started_ns, truth[2].arrived_ns);
  // The queue and the batch are empty again.
  auto metrics = http_exchange(mock.server.port(), "GET", "/metrics", "").bytes;
  EXPECT_NE(metrics.find("vllm:num_requests_waiting{engine=\"0\",model_name=\"mock\"} 0.0\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("vllm:num_requests_running{engine=\"0\",model_name=\"mock\"} 0.0\n"),
            std::string::npos);
}

TEST(MockServerTiming, AStallDelaysTheTokensAfterIt) {
  Running mock(quick(3));
  http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})",
                "X-Plumb-Mock: itl=1ms,stall=1:20ms\r\n");
  auto t = mock.server.truth().at(0);
  ASSERT_EQ(t.token_ns.size(), 3u);
  EXPECT_GE(t.token_ns[1], t.started_ns + 21 * kMs);
  EXPECT_GE(t.token_ns[2], t.started_ns + 22 * kMs);
}

TEST(MockServerFaults, ErrorRulesCountRequestsByArrival) {
  MockConfig config = quick(1);
  config.errors = {parse_mock_error_rule("503:1-2", "--error"),
                   parse_mock_error_rule("500:every=5", "--error")};
  Running mock(config);
  std::vector<std::string> status;
  for (int i = 0; i < 6; ++i)
    status.push_back(http_exchange(mock.server.port(), "POST", "/generate_stream",
                                   R"({"inputs":"a"})").bytes.substr(9, 3));
  EXPECT_EQ(status, (std::vector<std::string>{"200", "503", "503", "200", "500", "200"}));
  EXPECT_EQ(mock.server.truth().at(1).outcome, "error");
  EXPECT_EQ(mock.server.truth().at(1).status, 503);
}

TEST(MockServerFaults, ADroppedConnectionEndsWithoutTheLastChunk) {
  Running mock(quick(4));
  auto answer = http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})",
                              "X-Plumb-Mock: drop=2\r\n");
  auto decoded = dechunk(answer.bytes);
  EXPECT_TRUE(answer.closed);
  EXPECT_FALSE(decoded.complete);
  EXPECT_EQ(decoded.body.find("\"index\":3"), std::string::npos);
  EXPECT_NE(decoded.body.find("\"index\":2"), std::string::npos);
  EXPECT_EQ(mock.server.truth().at(0).outcome, "dropped");
  EXPECT_EQ(mock.server.truth().at(0).token_ns.size(), 2u);
}

TEST(MockServerFaults, AMalformedEventComesAfterTokenK) {
  Running mock(quick(2));
  auto answer = http_exchange(mock.server.port(), "POST", "/v2/models/m/generate_stream",
                              R"({"text_input":"a"})", "X-Plumb-Mock: malformed=1\r\n");
  auto decoded = dechunk(answer.bytes);
  EXPECT_TRUE(decoded.complete);
  std::string token = "data: {\"model_name\":\"m\",\"model_version\":\"1\",\"text_output\":\" tok\"}\n\n";
  EXPECT_EQ(decoded.body, token + mock_malformed_event() + token);
  EXPECT_EQ(mock.server.truth().at(0).outcome, "malformed");
}

TEST(MockServerFaults, AHangSendsNothingMoreUntilTheClientGivesUp) {
  Running mock(quick(3));
  auto answer = http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})",
                              "X-Plumb-Mock: hang=1\r\n", 0.3);
  EXPECT_FALSE(answer.closed);
  EXPECT_NE(dechunk(answer.bytes).body.find("\"index\":1"), std::string::npos);
  EXPECT_EQ(dechunk(answer.bytes).body.find("\"index\":2"), std::string::npos);
  // The client closed: the server notices on its next read.
  for (int i = 0; i < 100 && mock.server.truth().at(0).outcome.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(mock.server.truth().at(0).outcome, "hang");
}

TEST(MockServerMetrics, ExposesVllmsNamesInVllmsLabelOrder) {
  MockConfig config = quick(3);
  config.model = "llama";
  Running mock(config);
  http_exchange(mock.server.port(), "POST", "/v1/completions",
                R"({"prompt":"one two","stream":true})");
  auto text = http_exchange(mock.server.port(), "GET", "/metrics", "").bytes;
  EXPECT_NE(text.find("content-type: text/plain; version=0.0.4; charset=utf-8"), std::string::npos);
  EXPECT_NE(text.find("vllm:generation_tokens_total{engine=\"0\",model_name=\"llama\"} 3.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:prompt_tokens_total{engine=\"0\",model_name=\"llama\"} 2.0\n"),
            std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"llama\"} "
                      "1.0\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"llama\"} 1.0\n"), std::string::npos);
  EXPECT_NE(text.find("vllm:num_requests_running{engine=\"0\",model_name=\"llama\"} 0.0\n"),
            std::string::npos);
}

TEST(MockServerLog, WritesOneTruthLinePerRequest) {
  std::string path = ::testing::TempDir() + "/mock_truth.jsonl";
  MockConfig config = quick(1);
  config.log_path = path;
  {
    Running mock(config);
    http_exchange(mock.server.port(), "POST", "/generate_stream", R"({"inputs":"a"})");
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find(R"("api":"tgi")"), std::string::npos);
  EXPECT_NE(line.find(R"("outcome":"completed")"), std::string::npos);
  EXPECT_NE(line.find(R"("tokens_planned":1)"), std::string::npos);
}

TEST(MockConfig, OverridesAndRulesAreReadWithExactErrors) {
  MockPlan plan;
  apply_mock_overrides(plan, "ttft=50ms, itl=1.5ms,itl_per_active=200us,stall=3:1s,tokens=7", "h");
  EXPECT_EQ(plan.ttft_ns, 50 * kMs);
  EXPECT_EQ(plan.itl_ns, 1'500'000);
  EXPECT_EQ(plan.itl_per_active_ns, 200'000);
  EXPECT_EQ(plan.stall_after, 3);
  EXPECT_EQ(plan.stall_ns, 1000 * kMs);
  EXPECT_EQ(plan.tokens, 7);
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { apply_mock_overrides(plan, "ttfd=1ms", "X-Plumb-Mock"); }),
            "X-Plumb-Mock: unknown key 'ttfd' (did you mean 'ttft'?); expected one of ttft, itl, "
            "itl_per_active, tokens, stall, status, drop, malformed, hang, framing");
  EXPECT_EQ(message([&] { apply_mock_overrides(plan, "stall=3", "h"); }),
            "h stall '3': expected K:DURATION (stall after K tokens)");
  EXPECT_EQ(message([&] { apply_mock_overrides(plan, "status=99", "h"); }),
            "h status '99': expected an HTTP status (100-599)");
  EXPECT_EQ(message([] { parse_mock_error_rule("500", "--error"); }),
            "--error '500': expected STATUS:FIRST-LAST, STATUS:INDEX or STATUS:every=N");
  EXPECT_EQ(message([] { parse_mock_error_rule("500:5-3", "--error"); }),
            "--error '500:5-3': the range ends before it starts");
  EXPECT_EQ(message([] { MockServer s([] { MockConfig c; c.host = "203.0.113.1"; return c; }()); }),
            "plumb serve mock: cannot listen on 203.0.113.1:0: Cannot assign requested address");
}

}  // namespace
}  // namespace plumb::serve
