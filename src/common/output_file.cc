#include "common/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "common/error.h"

namespace plumb {
namespace {

namespace fs = std::filesystem;

// The temporary files not yet committed, for the signal handler. The one piece of process-wide
// state in plumb: a signal handler can reach nothing else. Fixed slots, no allocation, so that the
// handler only reads and unlinks.
constexpr size_t kSlots = 16;
constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  std::array<char, kPathMax> path{};
};
std::array<Slot, kSlots> g_pending;

int register_pending(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (size_t i = 0; i < kSlots; ++i) {
    if (g_pending[i].used.load()) continue;
    std::memcpy(g_pending[i].path.data(), path.c_str(), path.size() + 1);
    g_pending[i].used.store(true);
    return static_cast<int>(i);
  }
  return -1;  // more than kSlots outputs at once: a kill leaves that temporary behind
}

void unregister_pending(int slot) {
  if (slot >= 0) g_pending[static_cast<size_t>(slot)].used.store(false);
}

std::string reason(int error) { return std::strerror(error); }

// The folder a path's temporary file goes in: its own, so that rename(2) stays on one file system.
fs::path folder_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// What a failure to create the temporary file means, in the user's words (a directory as the
// target is refused before).
std::string open_failure(const std::string& path, int error) {
  std::error_code ec;
  if (!fs::is_directory(folder_of(path), ec)) {
    return fmt::format("folder {} does not exist", folder_of(path).string());
  }
  return reason(error);
}

// The permissions a new file would get (0666 less the umask), or the target's when it exists.
mode_t mode_for(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

// A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written in place: it has no content
// to keep, and a rename would replace the node itself.
bool is_special(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

// A stream buffer over a file descriptor that remembers the first failed write.
class OutputFile::FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  ~FdBuffer() override {
    if (fd_ >= 0) ::close(fd_);
  }

  int fd() const { return fd_; }
  int error() const { return error_; }

  // Writes what is buffered; false (with error()) on failure.
  bool drain() {
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (error_ == 0) error_ = n < 0 ? errno : EIO;
        setp(buffer_.data(), buffer_.data() + buffer_.size());
        return false;
      }
      p += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return true;
  }

  int close_fd() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  static constexpr size_t kBufferBytes = 1 << 16;
  int fd_;
  int error_ = 0;
  std::array<char, kBufferBytes> buffer_{};
};

OutputFile::OutputFile(std::string option, std::string path)
    : option_(std::move(option)), path_(std::move(path)) {
  if (is_stdout()) return;
  if (path_.empty()) throw Error(fmt::format("{}: the path is empty", option_));
  if (is_special(path_)) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("{} {}: cannot write: {}", option_, path_, reason(errno)));
    buffer_ = std::make_unique<FdBuffer>(fd);
    stream_ = std::make_unique<std::ostream>(buffer_.get());
    return;
  }
  std::string pattern = (folder_of(path_) / fmt::format(".{}.plumb-XXXXXX",
                                                        fs::path(path_).filename().string()))
                            .string();
  const mode_t mode = mode_for(path_);
  std::error_code ec;
  if (fs::is_directory(path_, ec)) {
    throw Error(fmt::format("{} {}: cannot write: is a directory", option_, path_));
  }
  const int fd = mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) {
    throw Error(fmt::format("{} {}: cannot write: {}", option_, path_, open_failure(path_, errno)));
  }
  fchmod(fd, mode);
  temp_ = pattern;
  slot_ = register_pending(temp_);
  buffer_ = std::make_unique<FdBuffer>(fd);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  if (is_stdout() || committed_) return;
  stream_.reset();
  buffer_.reset();
  if (temp_.empty()) return;  // written in place
  ::unlink(temp_.c_str());
  unregister_pending(slot_);
}

std::ostream& OutputFile::stream() { return is_stdout() ? std::cout : *stream_; }

void OutputFile::commit() {
  if (is_stdout()) {
    check_stdout();
    return;
  }
  const auto fail = [&](int error) {
    throw Error(fmt::format("{} {}: writing failed: {}; the previous file, if any, is unchanged",
                            option_, path_, reason(error)));
  };
  stream_->flush();
  if (!buffer_->drain() || buffer_->error() != 0) fail(buffer_->error() ? buffer_->error() : EIO);
  if (!*stream_) fail(EIO);
  if (temp_.empty()) {  // a device or a pipe: written in place, nothing to sync or rename
    if (buffer_->close_fd() != 0) fail(errno);
    committed_ = true;
    return;
  }
  if (::fsync(buffer_->fd()) != 0) fail(errno);
  if (buffer_->close_fd() != 0) fail(errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(errno);
  committed_ = true;
  unregister_pending(slot_);
  // The rename itself reaches the disk with the folder's entry.
  const int dir = ::open(folder_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_output(const std::string& option, const std::string& path, std::string_view text) {
  OutputFile file(option, path);
  file.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  file.commit();
}

void check_stdout() {
  errno = 0;
  std::cout.flush();  // through stdio: the last buffered block is written here
  int error = errno;
  if (std::fflush(stdout) != 0 && errno != 0) error = errno;
  if (std::cout && !std::ferror(stdout)) return;
  std::clearerr(stdout);
  std::cout.clear();
  throw Error(fmt::format("standard output: writing failed: {}", reason(error != 0 ? error : EIO)));
}

namespace {

struct Identity {
  std::optional<std::pair<dev_t, ino_t>> inode;
  std::string normal;  // absolute, lexically normalised, symlinks of existing parts resolved
};

Identity identity_of(const std::string& path) {
  Identity id;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) id.inode = std::pair{st.st_dev, st.st_ino};
  std::error_code ec;
  fs::path normal = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.normal = (ec ? fs::path(path).lexically_normal() : normal).string();
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  if (a.inode && b.inode) return *a.inode == *b.inode;
  return a.normal == b.normal;
}

// Standard streams, devices and pipes hold nothing a write could destroy (and a terminal is both
// /dev/stdin and /dev/stdout).
bool skipped(const NamedPath& p) { return p.path.empty() || p.path == "-" || is_special(p.path); }

}  // namespace

void refuse_overlapping_paths(std::span<const NamedPath> outputs, std::span<const NamedPath> inputs) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (skipped(out)) continue;
    const Identity id = identity_of(out.path);
    for (const NamedPath& in : inputs) {
      if (skipped(in) || !same_file(id, identity_of(in.path))) continue;
      problems.push_back(fmt::format("{} {}: is also {} ({}); writing it would destroy what is "
                                     "read: choose another file",
                                     out.option, out.path, in.option, in.path));
    }
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      if (skipped(outputs[j]) || !same_file(id, identity_of(outputs[j].path))) continue;
      problems.push_back(fmt::format("{} {} and {} {}: the same file for two outputs; give each "
                                     "its own",
                                     out.option, out.path, outputs[j].option, outputs[j].path));
    }
  }
  if (problems.empty()) return;
  std::string message = problems.front();
  for (size_t i = 1; i < problems.size(); ++i) message += "\n" + problems[i];
  throw Error(message);
}

void remove_pending_outputs() noexcept {
  for (Slot& slot : g_pending) {
    if (slot.used.load()) ::unlink(slot.path.data());
  }
}

namespace {

void die_cleanly(int signal) {
  remove_pending_outputs();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void clean_outputs_on_signals() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = die_cleanly;
    sigemptyset(&action.sa_mask);
    sigaction(s, &action, nullptr);
  }
}

}  // namespace plumb
