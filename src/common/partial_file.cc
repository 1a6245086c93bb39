#include "common/partial_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

namespace plumb {

PartialFile::PartialFile(std::string option, std::string path)
    : option_(std::move(option)), path_(std::move(path)) {}

PartialFile::~PartialFile() {
  if (fd_ >= 0) close(fd_);
}

std::string partial_path(const std::string& target) { return target + kPartialSuffix; }

bool PartialFile::wanted(const std::string& path) {
  if (path.empty() || path == "-") return false;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

void PartialFile::start(std::string_view text) {
  fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    fail(errno);
    return;
  }
  size_ = 0;
  started_ = true;
  append(text);
}

void PartialFile::discard() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (started_) unlink(path_.c_str());
  started_ = false;
}

void PartialFile::append(std::string_view text) { write_at(size_, text); }

void PartialFile::write_at(uint64_t offset, std::string_view text) {
  if (fd_ < 0) return;
  offset = std::min(offset, size_);
  while (!text.empty()) {
    const ssize_t n = pwrite(fd_, text.data(), text.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail(n < 0 ? errno : ENOSPC);
      return;
    }
    offset += static_cast<uint64_t>(n);
    text.remove_prefix(static_cast<size_t>(n));
  }
  size_ = std::max(size_, offset);
}

void PartialFile::fail(int error) {
  fmt::print(std::cerr,
             "plumb: warning: {} {}: the partial file cannot be written ({}): no more rows go to "
             "it until the end, when the whole file is written\n",
             option_, path_, std::strerror(error));
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace plumb
