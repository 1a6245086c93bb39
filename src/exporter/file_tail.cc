#include "exporter/file_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace plumb::exporter {
namespace {

// Closes the descriptor whatever happens between open and the end of a poll.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

FileTail::FileTail(std::string path, size_t max_line_bytes, size_t max_read_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes), max_read_bytes_(max_read_bytes) {}

void FileTail::restart(dev_t dev, ino_t ino) {
  open_ = true;
  dev_ = dev;
  ino_ = ino;
  offset_ = 0;
  line_number_ = 0;
  partial_.clear();
  skipping_ = false;
  restarted_ = true;
}

std::vector<TailLine> FileTail::poll() {
  restarted_ = false;
  Fd file{open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    if (errno == ENOENT) return {};  // not written yet, or between a rotation's two steps
    throw Error(fmt::format("events {}: cannot open: {}", path_, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw Error(fmt::format("events {}: not a regular file", path_));
  }
  if (!open_ || st.st_dev != dev_ || st.st_ino != ino_ ||
      static_cast<uint64_t>(st.st_size) < offset_) {
    restart(st.st_dev, st.st_ino);
  }
  std::vector<TailLine> lines;
  std::string buffer(std::min<uint64_t>(max_read_bytes_, st.st_size - offset_), '\0');
  size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = pread(file.fd, buffer.data() + got, buffer.size() - got,
                            static_cast<off_t>(offset_ + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("events {}: cannot read: {}", path_, std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  offset_ += got;
  split(buffer.data(), got, lines);
  return lines;
}

void FileTail::split(const char* data, size_t size, std::vector<TailLine>& lines) {
  size_t start = 0;
  while (start < size) {
    const char* newline = static_cast<const char*>(std::memchr(data + start, '\n', size - start));
    const size_t end = newline ? static_cast<size_t>(newline - data) : size;
    if (!skipping_) partial_.append(data + start, end - start);
    if (partial_.size() > max_line_bytes_) {
      partial_.clear();
      skipping_ = true;
    }
    if (!newline) return;  // the rest of this line comes later
    ++line_number_;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    lines.push_back({line_number_, skipping_ ? std::string() : std::move(partial_), skipping_});
    partial_.clear();
    skipping_ = false;
    start = end + 1;
  }
}

}  // namespace plumb::exporter
