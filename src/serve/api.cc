#include "serve/api.h"

#include <array>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/strings.h"
#include "serve/event_fields.h"

namespace plumb::serve {
namespace {

// ---- bodies -------------------------------------------------------------------------------

void append_field(std::string& out, std::string_view name, std::string_view raw) {
  if (out.size() > 1) out.push_back(',');
  append_json_string(name, out);
  out.push_back(':');
  out.append(raw);
}

void append_text_field(std::string& out, std::string_view name, std::string_view text) {
  if (out.size() > 1) out.push_back(',');
  append_json_string(name, out);
  out.push_back(':');
  append_json_string(text, out);
}

// The fields both OpenAI APIs share: greedy, streamed, with the usage chunk asked for
// (stream_options.include_usage, OpenAI's API reference; vLLM honours it) and vLLM's
// ignore_eos extension (vllm/entrypoints/openai/protocol.py, as vLLM's bench sends it).
void openai_common(const RequestSpec& request, bool ignore_eos, std::string_view max_name,
                   std::string& out) {
  if (request.max_output_tokens > 0) {
    append_field(out, max_name, std::to_string(request.max_output_tokens));
  }
  append_field(out, "temperature", "0");
  append_field(out, "stream", "true");
  append_field(out, "stream_options", R"({"include_usage":true})");
  if (ignore_eos && request.ignore_eos) append_field(out, "ignore_eos", "true");
}

void completions_body(const RequestSpec& request, std::string_view model, bool ignore_eos,
                      std::string& out) {
  out.assign("{");
  append_text_field(out, "model", model);
  append_text_field(out, "prompt", request.prompt);
  openai_common(request, ignore_eos, "max_tokens", out);
  out.push_back('}');
}

// max_tokens, not max_completion_tokens: every OpenAI-compatible server (vLLM, SGLang, TGI's
// messages API, TensorRT-LLM, MindIE) reads it; OpenAI itself still accepts it for chat models.
void chat_body(const RequestSpec& request, std::string_view model, bool ignore_eos,
               std::string& out) {
  out.assign("{");
  append_text_field(out, "model", model);
  out.append(R"(,"messages":[{"role":"user","content":)");
  append_json_string(request.prompt, out);
  out.append("}]");
  openai_common(request, ignore_eos, "max_tokens", out);
  out.push_back('}');
}

// TGI's /generate_stream (text-generation-inference docs/openapi.json, GenerateRequest):
// details=true makes the last event carry details.generated_tokens. TGI has no ignore_eos.
void tgi_body(const RequestSpec& request, std::string_view, bool, std::string& out) {
  out.assign("{");
  append_text_field(out, "inputs", request.prompt);
  out.append(R"(,"parameters":{"details":true,"do_sample":false)");
  if (request.max_output_tokens > 0) {
    out.append(",\"max_new_tokens\":").append(std::to_string(request.max_output_tokens));
  }
  out.append("}}");
}

// Triton's generate extension (server docs/protocol/extension_generate.md) with the
// TensorRT-LLM ensemble's inputs, as vLLM's bench and GenAI-Perf send them: text_input,
// max_tokens, stream; min_length = max_tokens stands for ignore_eos.
void triton_body(const RequestSpec& request, std::string_view, bool ignore_eos, std::string& out) {
  out.assign("{");
  append_text_field(out, "text_input", request.prompt);
  if (request.max_output_tokens > 0) {
    std::string n = std::to_string(request.max_output_tokens);
    append_field(out, "max_tokens", n);
    if (ignore_eos && request.ignore_eos) append_field(out, "min_length", n);
  }
  append_field(out, "temperature", "0");
  append_field(out, "stream", "true");
  out.push_back('}');
}

// ---- events -------------------------------------------------------------------------------

// The line an event that is not JSON leaves, cut to a readable length.
constexpr size_t kShownBytes = 80;

// The event's fields, or a reading that says why there are none or that the server sent an error.
bool read_fields(std::string_view data, EventFields& fields, EventReading& reading) {
  fields = read_event_fields(data);
  if (!fields.valid) {
    reading.error = ErrorKind::malformed;
    reading.error_detail = "an SSE event that is not JSON (" + fields.problem +
                           "): " + std::string(data.substr(0, kShownBytes));
    return false;
  }
  if (fields.error) {
    reading.error = ErrorKind::server;
    reading.error_detail =
        fields.error_message.empty()
            ? "an error without a message: " + std::string(data.substr(0, kShownBytes))
            : fields.error_message;
    return false;
  }
  return true;
}

int count(std::int64_t n) {
  constexpr std::int64_t kMostTokens = 1'000'000'000;  // beyond any context window: not a count
  return n < 0 || n > kMostTokens ? -1 : static_cast<int>(n);
}

// OpenAI's streams end with "data: [DONE]" (OpenAI API reference, "Streaming"; vLLM's
// serving_completion.py / serving_chat.py); the usage chunk before it has `choices: []`.
EventReading read_openai(std::string_view data, bool chat) {
  EventReading reading;
  if (data == "[DONE]") {
    reading.end = true;
    return reading;
  }
  EventFields fields;
  if (!read_fields(data, fields, reading)) return reading;
  reading.content = chat ? fields.delta_text : fields.choice_text;
  reading.prompt_tokens = count(fields.prompt_tokens);
  reading.completion_tokens = count(fields.completion_tokens);
  reading.has_usage = reading.completion_tokens >= 0;
  return reading;
}

EventReading read_completions(std::string_view data) { return read_openai(data, false); }

// A chat chunk's text is in delta.content; reasoning models stream their thinking in
// delta.reasoning_content (vLLM, SGLang, DeepSeek) — generated tokens all the same. The first
// chunk, with only the role, is no content.
EventReading read_chat(std::string_view data) { return read_openai(data, true); }

// TGI's StreamResponse (router/src/lib.rs): {token: {id, text, logprob, special},
// generated_text (the whole text, on the last event only), details (with details=true, on the
// last event: finish_reason, generated_tokens, seed)}. Every event is one generated token.
EventReading read_tgi(std::string_view data) {
  EventReading reading;
  EventFields fields;
  if (!read_fields(data, fields, reading)) return reading;
  reading.content = fields.token;
  reading.end = fields.generated_text;
  reading.completion_tokens = count(fields.generated_tokens);
  reading.has_usage = reading.completion_tokens >= 0;
  return reading;
}

// Triton's generate_stream: one JSON object per response with the model's outputs by name;
// the TensorRT-LLM ensemble's text is text_output. No end marker: the stream's end is the end.
EventReading read_triton(std::string_view data) {
  EventReading reading;
  EventFields fields;
  if (!read_fields(data, fields, reading)) return reading;
  reading.content = fields.text_output;
  return reading;
}

constexpr std::array kApis = {
    ApiRow{"openai-completions", "/v1/completions", true, true, false, "data: [DONE]",
           completions_body, read_completions},
    ApiRow{"openai-chat", "/v1/chat/completions", true, true, false, "data: [DONE]", chat_body,
           read_chat},
    ApiRow{"tgi", "/generate_stream", false, false, false, "an event with generated_text", tgi_body,
           read_tgi},
    ApiRow{"triton", "/v2/models/{model}/generate_stream", true, true, true, "", triton_body,
           read_triton},
};

std::vector<std::string> api_names() {
  std::vector<std::string> names;
  for (const ApiRow& row : kApis) names.emplace_back(row.name);
  return names;
}

[[noreturn]] void bad_url(std::string_view url) {
  throw Error("plumb serve: --url '" + std::string(url) +
              "': expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]");
}

}  // namespace

std::span<const ApiRow> api_table() { return kApis; }

const ApiRow& find_api(std::string_view name) {
  for (const ApiRow& row : kApis) {
    if (row.name == name) return row;
  }
  throw Error(unknown_name("plumb serve", "API", name, api_names()));
}

std::string request_url(const ApiRow& api, std::string_view url, std::string_view model) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) bad_url(url);
  std::string_view name = url.substr(0, scheme);
  if (name != "http" && name != "https") bad_url(url);
  std::string_view rest = url.substr(scheme + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string_view host = rest.substr(0, slash);
  if (host.empty() || host.front() == ':' ||
      host.find_first_of(" \t\r\n@") != std::string_view::npos) {
    bad_url(url);
  }
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  bool has_path = !path.empty() && path != "/";
  bool model_in_path = api.path.find("{model}") != std::string_view::npos;
  if (api.needs_model && model.empty() && !(has_path && model_in_path)) {
    throw Error("plumb serve: --api " + std::string(api.name) +
                " needs --model NAME (the model the server serves)");
  }
  if (has_path) return std::string(url);
  std::string out(url.substr(0, scheme + 3 + host.size()));
  std::string_view tail = api.path;
  size_t hole = tail.find("{model}");
  if (hole == std::string_view::npos) return out.append(tail);
  return out.append(tail.substr(0, hole)).append(model).append(tail.substr(hole + 7));
}

void append_json_string(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

}  // namespace plumb::serve
