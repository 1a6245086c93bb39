// The serving APIs plumb serve speaks, as a table: one row per API saying where a request goes,
// what body it carries and how one server-sent event of its stream reads (docs/serve.md).
// The formats are those of the servers' own code and docs (tests/fixtures/serve/SOURCES.md).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "serve/request.h"

namespace plumb::serve {

// What one SSE event's data says.
struct EventReading {
  bool content = false;      // it carried generated text: a content chunk
  int tokens = 1;            // the tokens it carried
  bool end = false;          // the API's end marker ([DONE], TGI's generated_text)
  bool has_usage = false;    // the server's token counts (OpenAI usage, TGI details)
  int prompt_tokens = -1;    // -1: not given
  int completion_tokens = -1;
  ErrorKind error = ErrorKind::none;  // server (an error object) or malformed (not JSON)
  std::string error_detail;
};

struct ApiRow {
  std::string_view name;         // --api
  std::string_view path;         // appended to a base URL; "{model}" is the model's name
  bool needs_model = false;      // the body or the path names the model
  bool sends_ignore_eos = false; // the API has a way to ask for exactly max_output_tokens
  bool ends_with_stream = false; // no end marker: the stream's clean end is the end (Triton)
  std::string_view end_marker;   // what a stream cut short lacked, for the error line
  // The request's JSON body (appended to `out`, which is cleared first).
  void (*body)(const RequestSpec& request, std::string_view model, bool ignore_eos,
               std::string& out) = nullptr;
  // One event's data.
  EventReading (*read)(std::string_view data) = nullptr;
};

std::span<const ApiRow> api_table();

// The row named `name`, or a plumb::Error (exit 2):
// "plumb serve: unknown API 'tgii' (did you mean 'tgi'?); expected one of openai-completions,
// openai-chat, tgi, triton".
const ApiRow& find_api(std::string_view name);

// The URL requests go to: `url` as given when it has a path beyond "/", else the base URL with
// the row's path. Throws plumb::Error (exit 2) for a URL that is not http(s)://HOST[:PORT][/PATH]
// or a row that needs a model when none is given.
std::string request_url(const ApiRow& api, std::string_view url, std::string_view model);

// `text` as a JSON string with its quotes, appended to `out` (RFC 8259 section 7).
void append_json_string(std::string_view text, std::string& out);

}  // namespace plumb::serve
