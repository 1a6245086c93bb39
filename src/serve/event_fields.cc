#include "serve/event_fields.h"

#include <array>
#include <initializer_list>
#include <limits>

#include "common/json.h"

namespace plumb::serve {
namespace {

using nlohmann::json;

// A step of a value's path: a key the table reads (> 0), any other key (0), or an array index
// i (-(i + 1)).
enum Key : int {
  kOther = 0,
  kChoices,
  kText,
  kDelta,
  kContent,
  kReasoningContent,
  kUsage,
  kPromptTokens,
  kCompletionTokens,
  kToken,
  kGeneratedText,
  kDetails,
  kGeneratedTokens,
  kTextOutput,
  kError,
  kMessage,
  kObject,
};
constexpr int kFirst = -1;  // array index 0

constexpr std::array<std::string_view, 17> kKeyNames = {"",
                                                        "choices",
                                                        "text",
                                                        "delta",
                                                        "content",
                                                        "reasoning_content",
                                                        "usage",
                                                        "prompt_tokens",
                                                        "completion_tokens",
                                                        "token",
                                                        "generated_text",
                                                        "details",
                                                        "generated_tokens",
                                                        "text_output",
                                                        "error",
                                                        "message",
                                                        "object"};

int key_of(std::string_view name) {
  for (size_t k = 1; k < kKeyNames.size(); ++k) {
    if (kKeyNames[k] == name) return static_cast<int>(k);
  }
  return kOther;
}

// The paths the table reads are at most 4 steps deep: choices[0].delta.content.
constexpr int kTracked = 4;

class Sax : public nlohmann::json_sax<json> {
 public:
  explicit Sax(EventFields& out) : out_(out) {}

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t n) override { return integer(n); }
  bool number_unsigned(number_unsigned_t n) override {
    return integer(n > static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())
                       ? -1
                       : static_cast<std::int64_t>(n));
  }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool string(string_t& text) override;
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    pending_ = key_of(name);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    failed_ = true;
    return false;
  }
  bool failed() const { return failed_; }

 private:
  // The step the next value takes in its container; an array counts its elements.
  int step() {
    if (depth_ == 0 || depth_ > kTracked + 1) return kOther;
    if (!array_[depth_ - 1]) return pending_;
    return -(++count_[depth_ - 1]);
  }
  // The value's path is path_[0..depth_-1) and `last`; true when it is exactly `expected`.
  bool at(int last, std::initializer_list<int> expected) const {
    if (depth_ != static_cast<int>(expected.size())) return false;
    const int* step = expected.begin();
    for (int i = 1; i < depth_; ++i, ++step) {
      if (path_[i] != *step) return false;
    }
    return last == *step;
  }
  bool value() {
    step();
    return true;
  }
  bool integer(std::int64_t n);
  bool open(bool array);
  bool close() {
    --depth_;
    return true;
  }

  EventFields& out_;
  int depth_ = 0;                         // containers open; 1 inside the event's object
  std::array<int, kTracked + 2> path_{};  // the step each open container took in its parent
  std::array<bool, kTracked + 2> array_{};
  std::array<int, kTracked + 2> count_{};  // an array's elements so far
  int pending_ = kOther;                   // the key just read
  bool failed_ = false;
};

bool Sax::open(bool array) {
  int s = step();
  if (depth_ == 0 && !array) out_.valid = true;  // the event is an object
  if (at(s, {kToken})) out_.token = true;
  if (at(s, {kError})) out_.error = true;  // {"error": {...}}
  if (depth_ < kTracked + 1) {
    path_[depth_] = s;
    array_[depth_] = array;
    count_[depth_] = 0;
  }
  ++depth_;
  return true;
}

bool Sax::string(string_t& text) {
  int s = step();
  bool nonempty = !text.empty();
  if (at(s, {kChoices, kFirst, kText})) out_.choice_text = nonempty;
  if (at(s, {kChoices, kFirst, kDelta, kContent}) ||
      at(s, {kChoices, kFirst, kDelta, kReasoningContent})) {
    out_.delta_text = out_.delta_text || nonempty;
  }
  if (at(s, {kGeneratedText})) out_.generated_text = true;
  if (at(s, {kTextOutput})) out_.text_output = nonempty;
  if (at(s, {kError})) {
    out_.error = true;
    out_.error_message = text;
  }
  if (at(s, {kError, kMessage})) out_.error_message = text;
  if (at(s, {kObject}) && text == "error") out_.error = true;
  if (at(s, {kMessage}) && out_.error_message.empty()) out_.error_message = text;
  return true;
}

bool Sax::integer(std::int64_t n) {
  int s = step();
  if (at(s, {kUsage, kPromptTokens})) out_.prompt_tokens = n;
  if (at(s, {kUsage, kCompletionTokens})) out_.completion_tokens = n;
  if (at(s, {kDetails, kGeneratedTokens})) out_.generated_tokens = n;
  return true;
}

}  // namespace

EventFields read_event_fields(std::string_view data) {
  EventFields out;
  Sax sax(out);
  bool parsed = !json_too_deep(data) &&
                json::sax_parse(data.begin(), data.end(), &sax, json::input_format_t::json, true) &&
                !sax.failed();
  if (parsed && out.valid) {
    // A top-level "message" counts only with "object": "error" (vLLM before 0.9).
    return out;
  }
  EventFields bad;
  if (!parsed) {
    parse_json_or_discarded(data, bad.problem);  // the slow path, for its words
    if (bad.problem.empty()) bad.problem = "not valid JSON";
  } else {
    bad.problem = "expected an object";
  }
  return bad;
}

}  // namespace plumb::serve
