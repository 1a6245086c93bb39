// The few fields of one streamed event that plumb serve's API table reads (serve/api.h), picked
// out of the JSON as it is parsed (nlohmann's SAX interface): no JSON tree, no allocation but the
// parser's own token buffer, however many events a run reads. A stream of 5,000 requests of 500
// tokens is 2.5 million events.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb::serve {

struct EventFields {
  bool valid = false;        // a JSON object, nested within the depth limit
  std::string problem;       // why not, in parse_json_or_discarded's words, when !valid

  bool choice_text = false;      // choices[0].text is a non-empty string (OpenAI completions)
  bool delta_text = false;       // choices[0].delta.content or .reasoning_content non-empty
  std::int64_t prompt_tokens = -1;      // usage.prompt_tokens (an object `usage`)
  std::int64_t completion_tokens = -1;  // usage.completion_tokens
  bool token = false;            // `token` is an object (TGI)
  bool generated_text = false;   // `generated_text` is a string (TGI's last event)
  std::int64_t generated_tokens = -1;   // details.generated_tokens (TGI)
  bool text_output = false;      // `text_output` is a non-empty string (Triton)

  // An error inside the stream: {"error": "text"}, {"error": {"message": "text"}} or
  // {"object": "error", "message": "text"}.
  bool error = false;
  std::string error_message;  // "" when the error object has no message
};

EventFields read_event_fields(std::string_view data);

}  // namespace plumb::serve
