// An incremental reader of server-sent events (WHATWG HTML, "Server-sent events", section
// 9.2.6 "Interpreting an event stream"): bytes go in as they arrive, split anywhere; each
// complete event comes out through a callback. Pure: no I/O, no clock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace plumb::serve {

// One dispatched event: its `data:` lines joined with '\n', its `event:` type ("" when none
// was given; the spec's default is "message") and the last `id:` seen.
struct SseEvent {
  std::string_view type;
  std::string_view data;
  std::string_view id;
};

// An event (or a line) larger than this is a malformed stream: a server that never sends a
// blank line must not make the client grow without bound. 1 MiB is 250x the largest chunk a
// real server sends (a TGI final event with the whole generated_text of 4,096 tokens ~ 20 KB).
inline constexpr size_t kMaxSseEventBytes = size_t{1} << 20;

class SseParser {
 public:
  enum class Status { ok, oversize };

  // Feeds `bytes`; calls `on_event(const SseEvent&)` for each event completed by them; the
  // callback returns false to stop reading (the rest of `bytes` is dropped). Returns oversize
  // (and stays so) once the pending event or line passes kMaxSseEventBytes.
  template <typename OnEvent>
  Status feed(std::string_view bytes, OnEvent&& on_event);

  // Forgets everything fed so far (for the next request on a reused transfer); keeps the
  // buffers' capacity.
  void reset();

  // The stream ended: whatever is pending is discarded (the spec: an event without its blank
  // line is not dispatched). True when nothing was pending (the stream ended on an event).
  bool at_event_boundary() const { return line_.empty() && data_.empty() && !has_data_; }
  Status status() const { return status_; }
  // The spec's reconnection time from the last valid `retry:` field; -1 when none.
  long long retry_ms() const { return retry_ms_; }

 private:
  // One complete line (without its end); true when it dispatched an event whose callback
  // returned false.
  template <typename OnEvent>
  bool line(std::string_view text, OnEvent& on_event);
  void field(std::string_view name, std::string_view value);

  std::string line_;   // the partial line carried from the last feed
  std::string data_;   // the pending event's data
  std::string type_;   // its event type
  std::string id_;     // the last event id
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte fed was '\r': a '\n' next ends no new line
  long long retry_ms_ = -1;
  Status status_ = Status::ok;
};

template <typename OnEvent>
bool SseParser::line(std::string_view text, OnEvent& on_event) {
  if (!text.empty()) {
    if (text.front() == ':') return false;  // a comment
    size_t colon = text.find(':');
    std::string_view name = text.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{}
                                                              : text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    field(name, value);
    if (data_.size() + type_.size() + id_.size() > kMaxSseEventBytes) status_ = Status::oversize;
    return false;
  }
  if (!has_data_) {  // a blank line with no data: the spec resets and dispatches nothing
    type_.clear();
    return false;
  }
  SseEvent event{type_, data_, id_};
  bool go_on = on_event(event);
  data_.clear();
  type_.clear();
  has_data_ = false;
  return !go_on;
}

template <typename OnEvent>
SseParser::Status SseParser::feed(std::string_view bytes, OnEvent&& on_event) {
  size_t pos = 0;
  while (status_ == Status::ok && pos < bytes.size()) {
    if (after_cr_ && bytes[pos] == '\n') ++pos;  // the '\n' of a "\r\n" split across feeds
    after_cr_ = false;
    size_t end = bytes.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(pos));
      if (line_.size() > kMaxSseEventBytes) status_ = Status::oversize;
      break;
    }
    std::string_view text = bytes.substr(pos, end - pos);
    if (!line_.empty()) {
      line_.append(text);
      text = line_;
    }
    pos = end + 1;
    if (bytes[end] == '\r') {
      if (pos < bytes.size()) {
        if (bytes[pos] == '\n') ++pos;
      } else {
        after_cr_ = true;
      }
    }
    bool stopped = line(text, on_event);
    line_.clear();
    if (stopped) break;
  }
  return status_;
}

}  // namespace plumb::serve
