#include "common/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace plumb {

Progress::Progress(std::FILE* stream, bool enabled) : stream_(stream), enabled_(enabled) {}

Progress::~Progress() { clear(); }

bool Progress::is_terminal(std::FILE* stream) { return isatty(fileno(stream)) == 1; }

void Progress::update(size_t done, size_t total, const std::string& text) {
  if (!enabled_) return;
  std::string line = fmt::format("[{}/{}] {}", done, total, text);
  const size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  fmt::print(stream_, "\r{}", line);
  std::fflush(stream_);
  last_width_ = width;
}

void Progress::clear() {
  if (!enabled_ || last_width_ == 0) return;
  fmt::print(stream_, "\r{}\r", std::string(last_width_, ' '));
  std::fflush(stream_);
  last_width_ = 0;
}

}  // namespace plumb
