#include "supervise/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/error.h"

namespace plumb::supervise {
namespace {

// Writes all of `text` at the file's offset; errno of the failure, 0 when written whole.
int write_whole(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return n < 0 ? errno : ENOSPC;  // a write of 0 bytes: no room
    }
  }
  return 0;
}

}  // namespace

EventLog::EventLog(std::string option, std::string path)
    : option_(std::move(option)), path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(fmt::format("{}: cannot be written: {}", name(), std::strerror(errno)));
  }
}

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool EventLog::write(const nlohmann::json& event) {
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  const int error = write_whole(fd_, line);
  if (error == 0) {
    size_ += static_cast<int64_t>(line.size());
    ++written_;
    return true;
  }
  // A part of the line may be in the file: cut back to the last whole line (a regular file; a
  // device such as /dev/full has no length to cut).
  if (::ftruncate(fd_, size_) == 0) ::lseek(fd_, size_, SEEK_SET);
  ++lost_;
  if (first_error_ == 0) first_error_ = error;
  return false;
}

}  // namespace plumb::supervise
