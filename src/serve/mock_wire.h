// The wire formats the reference server speaks, one table entry per API, byte for byte as the
// real servers write them (docs/serve.md, "Wire formats"):
//   openai-completions  POST /v1/completions        vLLM's OpenAI server (FastAPI/uvicorn)
//   openai-chat         POST /v1/chat/completions   the same, chat.completion.chunk objects
//   tgi                 POST /generate_stream       text-generation-inference (axum: "data:")
//   triton              POST /v2/models/M/generate_stream   Triton's generate extension
// Each stream is server-sent events; the mock sends one token per event.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace plumb::serve {

// What the mock read from a request's body.
struct MockRequest {
  std::string model;         // as asked ("model" field, or Triton's path); "" = the server's
  int max_tokens = 0;        // max_tokens / max_new_tokens; 0 = not given
  bool stream = true;        // the APIs' own stream flag; the mock only streams
  bool include_usage = false;  // OpenAI stream_options.include_usage
  int prompt_tokens = 0;     // words of the prompt (the mock has no tokenizer)
  std::string prompt_head;   // the prompt's first kPromptHead bytes: a test's tag for the request
  long long created = 0;     // set by the server: the Unix time of the answer (OpenAI "created")
};

struct MockApi {
  std::string_view name;
  std::string_view content_type;  // of the stream
  bool (*matches)(std::string_view path);
  // Reads the body; "" when it is usable, else one line saying what is wrong (answered 400).
  std::string (*parse)(std::string_view body, std::string_view path, MockRequest& out);
  // The event(s) carrying token `k` (1-based) of `total`: the first carries chat's role, the last
  // the finish reason (and TGI's generated_text and details).
  std::string (*token)(const MockRequest& request, const std::string& id, int k, int total);
  // What follows the last token: OpenAI's usage chunk (when asked) and "data: [DONE]".
  std::string (*end)(const MockRequest& request, const std::string& id, int total);
  // The body of an error answer with `status`.
  std::string (*error_body)(int status, std::string_view message);
};

const std::vector<MockApi>& mock_apis();
const MockApi* find_mock_api(std::string_view path);  // nullptr: not a generation path

// The text of every token ("tok" with a space before it, as BPE tokens carry one).
inline constexpr std::string_view kMockTokenText = " tok";
inline constexpr std::size_t kPromptHead = 64;

// An event that is not JSON, for the malformed fault: "data: {\"choices\": [{\"text\n\n".
std::string mock_malformed_event();

}  // namespace plumb::serve
