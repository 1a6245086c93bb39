#include "serve/sse.h"

#include <charconv>

namespace plumb::serve {

void SseParser::reset() {
  line_.clear();
  data_.clear();
  type_.clear();
  id_.clear();
  has_data_ = false;
  after_cr_ = false;
  retry_ms_ = -1;
  status_ = Status::ok;
}

// The spec's field table: data appends a line, event sets the type, id the last id (unless it
// holds a NUL), retry the reconnection time (digits only); any other name is ignored.
void SseParser::field(std::string_view name, std::string_view value) {
  if (name == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (name == "event") {
    type_.assign(value);
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) id_.assign(value);
  } else if (name == "retry") {
    long long ms = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    bool digits = !value.empty() && value.front() != '-' && value.front() != '+';
    if (ec == std::errc{} && end == value.data() + value.size() && digits) retry_ms_ = ms;
  }
}

}  // namespace plumb::serve
