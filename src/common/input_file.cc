#include "common/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace plumb {
namespace {

struct Closer {
  int fd;
  ~Closer() { ::close(fd); }
};

[[noreturn]] void cannot_read(const std::string& path) {
  throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
}

}  // namespace

uint64_t input_limit_bytes() {
  const auto pages = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES));
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return pages * page / 2;
}

std::string read_whole_file(const std::string& path, std::string_view what, uint64_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) cannot_read(path);
  const Closer closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) cannot_read(path);
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: is a directory; expected {}", path, what));
  std::string text;
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) <= limit) {
    text.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return text;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) cannot_read(path);
    const std::string_view block(buffer, static_cast<size_t>(n));
    if (text.empty() && block.find_first_not_of('\0') == std::string_view::npos) {
      throw Error(fmt::format("{}: starts with NUL bytes; expected {}", path, what));
    }
    text.append(block);
    if (text.size() > limit) {
      throw Error(fmt::format("{}: more than {} MiB; expected {}", path, limit >> 20, what));
    }
  }
}

}  // namespace plumb
