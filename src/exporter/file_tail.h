// Reading what was appended to a file since the last look, line by line, the way `tail -F`
// follows a log: a partial last line waits for its newline; a file that shrank (truncated) or was
// replaced (a new inode: log rotation) is read again from its start; a file that does not exist
// yet is waited for quietly.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace plumb::exporter {

struct TailLine {
  int64_t number = 0;  // 1-based, counted from the start of the file as it is now
  std::string text;    // without the newline (nor a '\r' before it)
  bool too_long = false;  // longer than the limit: `text` is empty, the line is to be skipped
};

class FileTail {
 public:
  // Lines longer than `max_line_bytes` are reported as too_long; at most `max_read_bytes` are
  // read per poll() so that one poll of a huge backlog stays short (the rest comes next time).
  explicit FileTail(std::string path, size_t max_line_bytes = 1 << 20,
                    size_t max_read_bytes = 16 << 20);

  // The complete lines appended since the last poll. Throws plumb::Error when the file exists
  // but cannot be read.
  std::vector<TailLine> poll();
  // True when the last poll found the file started over (truncation or a new file).
  bool restarted() const { return restarted_; }
  const std::string& path() const { return path_; }

 private:
  void restart(dev_t dev, ino_t ino);
  void split(const char* data, size_t size, std::vector<TailLine>& lines);

  std::string path_;
  size_t max_line_bytes_;
  size_t max_read_bytes_;
  bool open_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t offset_ = 0;
  int64_t line_number_ = 0;
  std::string partial_;
  bool skipping_ = false;  // inside a line already found too long
  bool restarted_ = false;
};

}  // namespace plumb::exporter
