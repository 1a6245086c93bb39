#include "mem/input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <utility>

#include "common/error.h"
#include "common/input_file.h"
#include "common/prefault.h"

namespace plumb::mem {
namespace {

// Closes a file descriptor on every path out.
struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

[[noreturn]] void cannot_read(const std::string& path) {
  throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
}

// Whether the first block is nothing but NUL bytes: no trace format starts so (/dev/zero).
bool all_nul(std::string_view block) {
  return !block.empty() && block.find_first_not_of('\0') == std::string_view::npos;
}

// Everything read() gives until the end: for pipes, FIFOs and devices, which cannot be mapped
// and cannot be read twice.
std::shared_ptr<std::string> read_to_end(int fd, const std::string& path) {
  auto bytes = std::make_shared<std::string>();
  // Held in memory whole: at most half of this machine's memory (a 10 GB snapshot through a pipe
  // on a 24 GB machine), so that /dev/urandom ends in a message, not the OOM killer.
  const uint64_t limit = input_limit_bytes();
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return bytes;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) cannot_read(path);
    if (bytes->empty() && all_nul(std::string_view(buffer, static_cast<size_t>(n)))) {
      throw Error(fmt::format("{}: starts with NUL bytes: not a snapshot, event lines or "
                              "memory_stats() dumps", path));
    }
    bytes->append(buffer, static_cast<size_t>(n));
    if (bytes->size() > limit) {
      throw Error(fmt::format("{}: more than {} GiB from a pipe or device, half of this machine's "
                              "memory; give the file itself (a file is mapped, not copied)",
                              path, limit >> 30));
    }
  }
}

}  // namespace

InputBytes load_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) cannot_read(path);
  const FileCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) cannot_read(path);
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: is a directory, not a file", path));
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<size_t>(st.st_size);
    // Mapped lazily: a streaming reader takes a window at a time (InputWindow), others call
    // populate().
    void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (at != MAP_FAILED) {
      std::shared_ptr<const void> owner(at, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
      return InputBytes(std::move(owner), std::string_view(static_cast<const char*>(at), size), path, true);
    }
  }
  std::shared_ptr<std::string> bytes = read_to_end(fd, path);
  const std::string_view view(*bytes);
  return InputBytes(std::move(bytes), view, path);
}

namespace {

// Linux 5.14; Debian 12's headers may lack the name.
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

// The pages of the mapping [from, to) for `advice`: the start rounded down to a page, the end too
// for MADV_DONTNEED (a page the reader is still in stays). Empty: nothing to ask.
std::pair<void*, size_t> page_span(const InputBytes& in, size_t from, size_t to, int advice) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(in.bytes().data());
  const uintptr_t first = (base + from) / page * page;
  const uintptr_t last = advice == MADV_DONTNEED ? (base + to) / page * page : base + to;
  return {reinterpret_cast<void*>(first), last > first ? last - first : 0};
}

}  // namespace

void InputBytes::populate() const {
  if (!mapped_ || bytes_.empty()) return;
  const auto [at, bytes] = page_span(*this, 0, bytes_.size(), MADV_POPULATE_READ);
  advise_pages(at, bytes, MADV_POPULATE_READ);
}

InputWindow::InputWindow(const InputBytes& input)
    : input_(input), next_(input.mapped() ? 0 : SIZE_MAX) {
  if (input.mapped() && input.bytes().size() > 2 * kStep) pages_ = std::make_unique<Prefaulter>();
}

InputWindow::~InputWindow() = default;

void InputWindow::move(size_t offset) {
  const size_t size = input_.bytes().size();
  // The window: the step just passed stays (values near the edge), the next two come in.
  const size_t keep_from = offset > kStep ? offset - kStep : 0;
  if (keep_from > released_) {
    advise(released_, keep_from, MADV_DONTNEED);
    released_ = keep_from;
  }
  const size_t ahead = std::min(size, offset + 2 * kStep);
  if (ahead > offset) advise(offset, ahead, MADV_POPULATE_READ);
  next_ = offset + kStep;
}

// [from, to) of the file, on the window's thread where it has one.
void InputWindow::advise(size_t from, size_t to, int advice) {
  const auto [at, bytes] = page_span(input_, from, to, advice);
  if (bytes == 0) return;
  if (pages_) {
    pages_->advise(at, bytes, advice);
  } else {
    advise_pages(at, bytes, advice);
  }
}

InputBytes input_from_string(std::string bytes, std::string name) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  const std::string_view view(*owned);
  return InputBytes(std::move(owned), view, std::move(name));
}

}  // namespace plumb::mem

// Its fallbacks for older kernel headers stay in this file (a unity build joins sources).
#undef MADV_POPULATE_READ
