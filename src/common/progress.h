// A one-line progress indicator for long runs. It draws only when its stream is a terminal, so
// logs and pipes stay clean.
#pragma once

#include <cstdio>
#include <string>

namespace plumb {

class Progress {
 public:
  // `enabled` false makes every call a no-op (non-zero ranks, --quiet, not a terminal).
  Progress(std::FILE* stream, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws the line: "[done/total] text".
  void update(size_t done, size_t total, const std::string& text);
  // Erases the line so that normal output can follow.
  void clear();

  // True when `stream` is attached to a terminal.
  static bool is_terminal(std::FILE* stream);

 private:
  std::FILE* stream_;
  bool enabled_;
  size_t last_width_ = 0;
};

}  // namespace plumb
