#include "serve/api.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/json.h"
#include "serve/client_transfer.h"
#include "serve/sse.h"

namespace plumb::serve {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PLUMB_TEST_FIXTURES) + "/serve/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fixture stream read as the engine reads it: every event applied at times 1, 2, 3...
struct Read {
  RequestRecord record;
  StreamState state;
};

Read read_stream(const std::string& api, const std::string& file) {
  Read out;
  SseParser parser;
  Nanos at = 0;
  parser.feed(fixture(file), [&](const SseEvent& event) {
    return apply_event(find_api(api), event, ++at, out.state, out.record);
  });
  return out;
}

std::vector<Nanos> chunk_times(const RequestRecord& record) {
  std::vector<Nanos> times;
  for (const Chunk& chunk : record.chunks) times.push_back(chunk.at_ns);
  return times;
}

TEST(ServeApi, OpenAiCompletionsStream) {
  Read r = read_stream("openai-completions", "openai-completions/stream.txt");
  EXPECT_EQ(chunk_times(r.record), (std::vector<Nanos>{1, 2, 3, 4}));
  EXPECT_EQ(r.record.first_token_ns, 1);
  EXPECT_TRUE(r.state.ended);
  EXPECT_EQ(r.record.end_ns, 6);  // [DONE], after the usage chunk
  EXPECT_EQ(r.state.usage_prompt, 7);
  EXPECT_EQ(r.state.usage_completion, 4);
}

TEST(ServeApi, OpenAiChatStreamSkipsTheRoleChunk) {
  Read r = read_stream("openai-chat", "openai-chat/stream.txt");
  EXPECT_EQ(chunk_times(r.record), (std::vector<Nanos>{2, 3, 4}));
  EXPECT_EQ(r.record.first_token_ns, 2);
  EXPECT_TRUE(r.state.ended);
  EXPECT_EQ(r.state.usage_prompt, 12);
  EXPECT_EQ(r.state.usage_completion, 3);
}

TEST(ServeApi, TgiStreamEndsAtGeneratedText) {
  Read r = read_stream("tgi", "tgi/stream.txt");
  EXPECT_EQ(chunk_times(r.record), (std::vector<Nanos>{1, 2, 3, 4}));
  EXPECT_TRUE(r.state.ended);
  EXPECT_EQ(r.record.end_ns, 4);
  EXPECT_EQ(r.state.usage_prompt, -1);
  EXPECT_EQ(r.state.usage_completion, 4);
}

TEST(ServeApi, TritonStreamHasNoEndMarker) {
  Read r = read_stream("triton", "triton/stream.txt");
  EXPECT_EQ(chunk_times(r.record), (std::vector<Nanos>{1, 2, 3, 4}));
  EXPECT_FALSE(r.state.ended);
  EXPECT_EQ(r.state.usage_completion, -1);
}

TEST(ServeApi, ErrorsInsideTheStreamAreServerErrors) {
  Read openai = read_stream("openai-completions", "openai-completions/error.txt");
  EXPECT_EQ(openai.record.error, ErrorKind::server);
  EXPECT_EQ(openai.record.error_detail, "The model is overloaded, please retry.");
  Read tgi = read_stream("tgi", "tgi/error.txt");
  EXPECT_EQ(tgi.record.error, ErrorKind::server);
  EXPECT_EQ(tgi.record.error_detail,
            "Request failed during generation: Server error: CUDA out of memory.");
  Read triton = read_stream("triton", "triton/error.txt");
  EXPECT_EQ(triton.record.error, ErrorKind::server);
  EXPECT_EQ(triton.record.error_detail,
            "in ensemble 'ensemble', Executor failed process requestId 5 due to the following "
            "error: max_tokens exceeds the limit");
  EXPECT_EQ(triton.record.end_ns, 1);
}

TEST(ServeApi, AnEventThatIsNotJsonIsMalformed) {
  EventReading reading = find_api("tgi").read("{\"token\": ");
  EXPECT_EQ(reading.error, ErrorKind::malformed);
  EXPECT_EQ(reading.error_detail.rfind("an SSE event that is not JSON (", 0), 0u);
  EXPECT_EQ(find_api("triton").read("[1]").error_detail,
            "an SSE event that is not JSON (expected an object): [1]");
}

TEST(ServeApi, UnknownApiSuggestsTheNearest) {
  try {
    find_api("openai-chatt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "plumb serve: unknown API 'openai-chatt' (did you mean 'openai-chat'?); expected "
                 "one of openai-completions, openai-chat, tgi, triton");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

TEST(ServeApi, TheUrlIsCompletedFromABaseUrl) {
  EXPECT_EQ(request_url(find_api("openai-completions"), "http://h:8000", "m"),
            "http://h:8000/v1/completions");
  EXPECT_EQ(request_url(find_api("openai-chat"), "https://h/", "m"),
            "https://h/v1/chat/completions");
  EXPECT_EQ(request_url(find_api("tgi"), "http://h:3000", ""), "http://h:3000/generate_stream");
  EXPECT_EQ(request_url(find_api("triton"), "http://h:8000", "ensemble"),
            "http://h:8000/v2/models/ensemble/generate_stream");
  // A URL with a path is used as it is.
  EXPECT_EQ(request_url(find_api("openai-completions"), "http://h/proxy/v1/completions", "m"),
            "http://h/proxy/v1/completions");
  EXPECT_EQ(request_url(find_api("triton"), "http://h/v2/models/x/generate_stream", ""),
            "http://h/v2/models/x/generate_stream");
}

TEST(ServeApi, BadUrlsAndAMissingModelAreRefused) {
  for (const char* url : {"localhost:8000", "ftp://h/x", "http://", "http://:80/x", "http:// h"}) {
    try {
      request_url(find_api("tgi"), url, "");
      FAIL() << url;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("plumb serve: --url '") + url +
                    "': expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]");
    }
  }
  try {
    request_url(find_api("openai-completions"), "http://h:8000/v1/completions", "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "plumb serve: --api openai-completions needs --model NAME (the model the server "
                 "serves)");
  }
}

TEST(ServeApi, Bodies) {
  RequestSpec spec;
  spec.prompt = "say \"hi\"\n";
  spec.max_output_tokens = 16;
  std::string body;
  find_api("openai-completions").body(spec, "m", true, body);
  EXPECT_EQ(body, R"({"model":"m","prompt":"say \"hi\"\u000a","max_tokens":16,"temperature":0,)"
                  R"("stream":true,"stream_options":{"include_usage":true},"ignore_eos":true})");
  find_api("openai-chat").body(spec, "m", false, body);
  EXPECT_EQ(
      body,
      R"({"model":"m","messages":[{"role":"user","content":"say \"hi\"\u000a"}],)"
      R"("max_tokens":16,"temperature":0,"stream":true,"stream_options":{"include_usage":true}})");
  find_api("tgi").body(spec, "", true, body);
  EXPECT_EQ(body, R"({"inputs":"say \"hi\"\u000a","parameters":{"details":true,"do_sample":false,)"
                  R"("max_new_tokens":16}})");
  find_api("triton").body(spec, "ensemble", true, body);
  EXPECT_EQ(body, R"({"text_input":"say \"hi\"\u000a","max_tokens":16,"min_length":16,)"
                  R"("temperature":0,"stream":true})");
  // Every body is JSON.
  for (const ApiRow& row : api_table()) {
    row.body(spec, "m", true, body);
    std::string problem;
    EXPECT_FALSE(parse_json_or_discarded(body, problem).is_discarded()) << row.name;
  }
}

}  // namespace
}  // namespace plumb::serve
