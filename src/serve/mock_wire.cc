#include "serve/mock_wire.h"

#include "common/json.h"
#include "common/strings.h"

#include <nlohmann/json.hpp>

namespace plumb::serve {
namespace {

using nlohmann::json;

std::string quote(std::string_view text) { return json(std::string(text)).dump(); }

int count_words(std::string_view text);

void read_prompt(std::string_view text, MockRequest& out) {
  out.prompt_tokens += count_words(text);
  auto head = text.substr(0, kPromptHead);
  if (out.prompt_head.empty()) out.prompt_head = std::string(head.substr(0, complete_utf8_prefix(head)));
}

int count_words(std::string_view text) {
  int words = 0;
  bool in_word = false;
  for (char c : text) {
    bool blank = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (!blank && !in_word) ++words;
    in_word = !blank;
  }
  return words;
}

// A field that must be a non-negative integer when present; "" when fine.
std::string read_count(const json& object, const char* key, int& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 1 << 30)
    return std::string(key) + ": expected a non-negative integer";
  out = it->get<int>();
  return "";
}

std::string parse_object(std::string_view body, json& doc) {
  std::string problem;
  doc = parse_json_or_discarded(body, problem);
  if (doc.is_discarded()) return "request body: " + problem;
  if (!doc.is_object()) return "request body: expected a JSON object";
  return "";
}

void read_openai_common(const json& doc, MockRequest& out) {
  if (auto it = doc.find("model"); it != doc.end() && it->is_string()) out.model = *it;
  out.stream = doc.value("stream", false) == true;
  if (auto it = doc.find("stream_options"); it != doc.end() && it->is_object())
    out.include_usage = it->value("include_usage", false) == true;
}

std::string parse_completions(std::string_view body, std::string_view, MockRequest& out) {
  json doc;
  if (auto problem = parse_object(body, doc); !problem.empty()) return problem;
  read_openai_common(doc, out);
  if (auto it = doc.find("prompt"); it != doc.end() && it->is_string())
    read_prompt(it->get<std::string>(), out);
  return read_count(doc, "max_tokens", out.max_tokens);
}

std::string parse_chat(std::string_view body, std::string_view, MockRequest& out) {
  json doc;
  if (auto problem = parse_object(body, doc); !problem.empty()) return problem;
  read_openai_common(doc, out);
  if (auto it = doc.find("messages"); it != doc.end() && it->is_array())
    for (const auto& message : *it)
      if (message.is_object() && message.contains("content") && message["content"].is_string())
        read_prompt(message["content"].get<std::string>(), out);
  if (auto problem = read_count(doc, "max_completion_tokens", out.max_tokens); !problem.empty())
    return problem;
  return out.max_tokens ? "" : read_count(doc, "max_tokens", out.max_tokens);
}

std::string parse_tgi(std::string_view body, std::string_view, MockRequest& out) {
  json doc;
  if (auto problem = parse_object(body, doc); !problem.empty()) return problem;
  if (auto it = doc.find("inputs"); it != doc.end() && it->is_string())
    read_prompt(it->get<std::string>(), out);
  out.stream = true;  // the path says so
  auto it = doc.find("parameters");
  if (it == doc.end() || !it->is_object()) return "";
  return read_count(*it, "max_new_tokens", out.max_tokens);
}

// POST /v2/models/<model>[/versions/<v>]/generate_stream; max_tokens at the top (TensorRT-LLM's
// ensemble, as vLLM's bench sends it) or in "parameters" (Triton's vLLM backend).
std::string parse_triton(std::string_view body, std::string_view path, MockRequest& out) {
  json doc;
  if (auto problem = parse_object(body, doc); !problem.empty()) return problem;
  auto model = path.substr(std::string_view("/v2/models/").size());
  out.model = std::string(model.substr(0, model.find('/')));
  if (auto it = doc.find("text_input"); it != doc.end() && it->is_string())
    read_prompt(it->get<std::string>(), out);
  out.stream = true;
  if (auto problem = read_count(doc, "max_tokens", out.max_tokens); !problem.empty()) return problem;
  auto it = doc.find("parameters");
  if (out.max_tokens || it == doc.end() || !it->is_object()) return "";
  return read_count(*it, "max_tokens", out.max_tokens);
}

std::string sse(std::string_view data) { return "data: " + std::string(data) + "\n\n"; }

std::string openai_head(const MockRequest& r, const std::string& id, std::string_view object) {
  return R"({"id":")" + id + R"(","object":")" + std::string(object) +
         R"(","created":)" + std::to_string(r.created) + R"(,"model":)" + quote(r.model);
}

std::string finish(int k, int total) { return k == total ? R"("length")" : "null"; }

std::string completions_token(const MockRequest& r, const std::string& id, int k, int total) {
  return sse(openai_head(r, id, "text_completion") + R"(,"choices":[{"index":0,"text":)" +
             quote(kMockTokenText) + R"(,"logprobs":null,"finish_reason":)" + finish(k, total) +
             R"(,"stop_reason":null}],"usage":null})");
}

// vLLM sends the assistant's role in a chunk of its own, with the first output.
std::string chat_token(const MockRequest& r, const std::string& id, int k, int total) {
  std::string head = openai_head(r, id, "chat.completion.chunk");
  std::string out;
  if (k == 1)
    out = sse(head + R"(,"choices":[{"index":0,"delta":{"role":"assistant","content":""},)"
                     R"("logprobs":null,"finish_reason":null}]})");
  std::string last = k == total ? R"("length","stop_reason":null)" : "null";
  return out + sse(head + R"(,"choices":[{"index":0,"delta":{"content":)" +
                   quote(kMockTokenText) + R"(},"logprobs":null,"finish_reason":)" + last + "}]}");
}

// The usage chunk (when asked) and [DONE]. Completions are serialized with exclude_unset=False
// (every field, prompt_tokens_details too), chat chunks with exclude_unset=True.
std::string openai_end(const MockRequest& r, const std::string& id, int total,
                       std::string_view object, std::string_view usage_tail) {
  std::string out;
  if (r.include_usage)
    out = sse(openai_head(r, id, object) + R"(,"choices":[],"usage":{"prompt_tokens":)" +
              std::to_string(r.prompt_tokens) + R"(,"total_tokens":)" +
              std::to_string(r.prompt_tokens + total) + R"(,"completion_tokens":)" +
              std::to_string(total) + std::string(usage_tail) + "}}");
  return out + sse("[DONE]");
}

std::string completions_end(const MockRequest& r, const std::string& id, int total) {
  return openai_end(r, id, total, "text_completion", R"(,"prompt_tokens_details":null)");
}
std::string chat_end(const MockRequest& r, const std::string& id, int total) {
  return openai_end(r, id, total, "chat.completion.chunk", "");
}

// vLLM's ErrorResponse.
std::string openai_error(int status, std::string_view message) {
  return R"({"object":"error","message":)" + quote(message) +
         R"(,"type":"mock_error","param":null,"code":)" + std::to_string(status) + "}";
}

// TGI's StreamResponse; axum writes "data:" with no space.
std::string tgi_token(const MockRequest& r, const std::string&, int k, int total) {
  std::string generated = "null", details = "null";
  if (k == total) {
    std::string text;
    for (int i = 0; i < total; ++i) text += kMockTokenText;
    generated = quote(text);
    details = R"({"finish_reason":"length","generated_tokens":)" + std::to_string(total) +
              R"(,"seed":null,"input_length":)" + std::to_string(r.prompt_tokens) + "}";
  }
  return R"(data:{"index":)" + std::to_string(k) + R"(,"token":{"id":)" + std::to_string(k) +
         R"(,"text":)" + quote(kMockTokenText) + R"(,"logprob":-0.1,"special":false},)"
         R"("generated_text":)" + generated + R"(,"details":)" + details + "}\n\n";
}

std::string tgi_error(int, std::string_view message) {
  return R"({"error":)" + quote(message) + R"(,"error_type":"mock"})";
}

std::string triton_token(const MockRequest& r, const std::string&, int, int) {
  return sse(R"({"model_name":)" + quote(r.model) + R"(,"model_version":"1","text_output":)" +
             quote(kMockTokenText) + "}");
}

std::string triton_error(int, std::string_view message) {
  return R"({"error":)" + quote(message) + "}";
}

std::string no_end(const MockRequest&, const std::string&, int) { return ""; }

bool triton_path(std::string_view path) {
  return path.starts_with("/v2/models/") && path.ends_with("/generate_stream") &&
         path.size() > std::string_view("/v2/models//generate_stream").size();
}

}  // namespace

const std::vector<MockApi>& mock_apis() {
  static const std::vector<MockApi> apis = {
      {"openai-completions", "text/event-stream; charset=utf-8",
       [](std::string_view p) { return p == "/v1/completions"; }, parse_completions,
       completions_token, completions_end, openai_error},
      {"openai-chat", "text/event-stream; charset=utf-8",
       [](std::string_view p) { return p == "/v1/chat/completions"; }, parse_chat, chat_token,
       chat_end, openai_error},
      {"tgi", "text/event-stream", [](std::string_view p) { return p == "/generate_stream"; },
       parse_tgi, tgi_token, no_end, tgi_error},
      {"triton", "text/event-stream; charset=utf-8", triton_path, parse_triton, triton_token,
       no_end, triton_error},
  };
  return apis;
}

const MockApi* find_mock_api(std::string_view path) {
  for (const auto& api : mock_apis())
    if (api.matches(path)) return &api;
  return nullptr;
}

std::string mock_malformed_event() { return "data: {\"choices\": [{\"text\n\n"; }

}  // namespace plumb::serve
