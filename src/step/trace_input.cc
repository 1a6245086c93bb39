// Reading a trace whole, plain or gzip, into one padded buffer. A plain file is read with one
// read() loop straight into its final buffer; gzip is inflated by zlib into a buffer sized from
// the gzip trailer's length field (exact for one member under 4 GiB) and grown only when the text
// turns out longer (several members, > 4 GiB), so the peak memory is about the text's size.
#include "step/trace_input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"

namespace plumb::step {
namespace {

constexpr unsigned char kGzipMagic0 = 0x1f;
constexpr unsigned char kGzipMagic1 = 0x8b;
constexpr size_t kReadChunk = size_t{1} << 20;  // compressed bytes read per call
constexpr size_t kMinCapacity = size_t{1} << 16;
// Deflate's largest compression ratio (zlib's technical details: 1032:1): a trailer claiming
// more is not trusted as a size hint.
constexpr size_t kMaxDeflateRatio = 1032;
// zlib's windowBits for "gzip only" (15 bits of window + 16: expect a gzip wrapper).
constexpr int kGzipWindowBits = 15 + 16;

bool is_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == kGzipMagic0 &&
         static_cast<unsigned char>(head[1]) == kGzipMagic1;
}

constexpr size_t kScratchBytes = size_t{1} << 16;  // where overflowing output is counted

// The output: `size` bytes of text in a buffer of `capacity` + kTracePadding bytes. When the
// text outgrows the capacity (the size hint was short), the buffer either grows by 1.5× (a
// copy) or, with `recount`, stays as it is while the rest is only counted, so that the caller
// can inflate again into a buffer of the exact size: no copy and no 2.5× peak.
class TextBuffer {
 public:
  TextBuffer(size_t capacity, bool recount) : recount_(recount) {
    reserve(std::max(capacity, kMinCapacity));
  }

  char* end() { return counting_ ? scratch_.get() : data_.get() + size_; }
  size_t room() const { return counting_ ? kScratchBytes : capacity_ - size_; }
  void grow_by(size_t n) { (counting_ ? overflow_ : size_) += n; }
  size_t size() const { return size_ + overflow_; }
  size_t overflow() const { return overflow_; }

  void make_room() {
    if (room() > 0) return;
    if (recount_) {
      counting_ = true;
      scratch_ = std::make_unique_for_overwrite<char[]>(kScratchBytes);
      return;
    }
    reserve(capacity_ + capacity_ / 2);
  }

  TraceText finish(std::string source, size_t compressed_size) {
    std::memset(data_.get() + size_, 0, kTracePadding);
    TraceText text;
    text.source = std::move(source);
    text.data = std::move(data_);
    text.size = size_;
    text.compressed_size = compressed_size;
    return text;
  }

 private:
  void reserve(size_t capacity) {
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity + kTracePadding);
    if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool recount_ = false;
  bool counting_ = false;
  std::unique_ptr<char[]> scratch_;
  size_t overflow_ = 0;
};

// Compressed input, a chunk at a time: returns an empty span at the end.
using ChunkSource = std::function<std::span<const char>()>;
// Makes a source that starts from the first byte (again); null when the input cannot be read
// twice (a pipe).
using SourceFactory = std::function<ChunkSource()>;

// The uncompressed length a gzip file's trailer states (ISIZE: modulo 2^32, last member only):
// a capacity hint, never trusted as the size.
size_t gzip_size_hint(std::string_view last_bytes, size_t compressed_size) {
  size_t hint = compressed_size * 4;
  if (last_bytes.size() >= 4) {
    uint32_t isize = 0;
    for (int i = 3; i >= 0; --i) {
      isize = (isize << 8) | static_cast<unsigned char>(last_bytes[last_bytes.size() - 4 + i]);
    }
    if (isize >= compressed_size && isize / kMaxDeflateRatio <= compressed_size) hint = isize;
  }
  return hint;
}

bool all_zero(std::span<const char> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

// Inflates every gzip member of `next_chunk` into one text. `compressed_size` is for messages.
class GzipInflater {
 public:
  explicit GzipInflater(const std::string& source) : source_(source) {
    if (inflateInit2(&stream_, kGzipWindowBits) != Z_OK) {
      throw Error(fmt::format("{}: cannot start gzip decompression (out of memory)", source_));
    }
  }
  ~GzipInflater() { inflateEnd(&stream_); }
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  uint64_t consumed() const { return consumed_; }

  void run(const ChunkSource& next_chunk, TextBuffer& out) {
    bool member_open = true;  // inside a member (the first starts at byte 0)
    for (std::span<const char> chunk = next_chunk(); !chunk.empty(); chunk = next_chunk()) {
      stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(chunk.data()));
      stream_.avail_in = static_cast<uInt>(chunk.size());
      while (stream_.avail_in > 0) {
        if (!member_open) {
          if (!starts_next_member()) return;
          member_open = true;
        }
        member_open = inflate_some(out);
      }
    }
    if (member_open) {
      throw Error(fmt::format("{}: the gzip stream ends at byte {} (after {} bytes of text) "
                              "without its end marker: the file is truncated",
                              source_, consumed_, out.size()));
    }
  }

 private:
  // Inflates from the current input; false once the member's end was reached.
  bool inflate_some(TextBuffer& out) {
    out.make_room();
    size_t room = std::min<size_t>(out.room(), std::numeric_limits<uInt>::max());
    stream_.next_out = reinterpret_cast<Bytef*>(out.end());
    stream_.avail_out = static_cast<uInt>(room);
    int status = inflate(&stream_, Z_NO_FLUSH);
    out.grow_by(room - stream_.avail_out);
    consumed_ = stream_.total_in + consumed_before_member_;
    if (status == Z_STREAM_END) return false;
    if (status == Z_OK || status == Z_BUF_ERROR) return true;
    if (status == Z_MEM_ERROR) {
      throw Error(fmt::format("{}: out of memory while decompressing", source_));
    }
    throw Error(fmt::format("{}: byte {}: corrupt gzip data (not a valid deflate stream or "
                            "checksum); the file is damaged",
                            source_, consumed_));
  }

  // After a member ends: the rest is another member (gzip allows several), zero padding (ends
  // the stream), or something else (an error). False when the text is complete.
  bool starts_next_member() {
    std::span<const char> rest(reinterpret_cast<const char*>(stream_.next_in), stream_.avail_in);
    if (all_zero(rest)) {
      trailing_zeros_ = true;
      stream_.avail_in = 0;
      return false;
    }
    if (trailing_zeros_ || static_cast<unsigned char>(rest[0]) != kGzipMagic0) {
      throw Error(fmt::format("{}: byte {}: data after the end of the gzip stream that is not "
                              "gzip; the file is damaged",
                              source_, consumed_));
    }
    consumed_before_member_ = consumed_;
    inflateReset(&stream_);
    return true;
  }

  const std::string& source_;
  z_stream stream_{};
  uint64_t consumed_ = 0;
  uint64_t consumed_before_member_ = 0;
  bool trailing_zeros_ = false;
};

void check_text(const TraceText& text) {
  const void* nul = std::memchr(text.data.get(), 0, text.size);
  if (nul != nullptr) {
    size_t offset = static_cast<const char*>(nul) - text.data.get();
    throw Error(fmt::format("{}: byte {}: a NUL byte; expected JSON text (is this a binary "
                            "file?)",
                            text.source, offset));
  }
}

// Inflates `first` into a buffer of `size_hint`; when the text is longer and `again` can read
// the input once more, inflates it a second time into a buffer of the exact size.
TraceText inflate_all(const ChunkSource& first, const SourceFactory& again, std::string source,
                      size_t compressed_size, size_t size_hint) {
  size_t exact = 0;
  {
    // One byte more than the hint: inflate then finds room to see the end marker.
    TextBuffer out(size_hint + 1, again != nullptr);
    GzipInflater inflater(source);
    inflater.run(first, out);
    compressed_size = std::max<size_t>(compressed_size, inflater.consumed());
    if (out.overflow() == 0) {
      TraceText text = out.finish(std::move(source), compressed_size);
      check_text(text);
      return text;
    }
    exact = out.size();
  }  // the short buffer is freed before the exact one is made
  TextBuffer out(exact + 1, false);
  GzipInflater inflater(source);
  inflater.run(again(), out);
  TraceText text = out.finish(std::move(source), compressed_size);
  check_text(text);
  return text;
}

// An open file descriptor, closed on scope exit.
class File {
 public:
  explicit File(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_RDONLY)) {
    if (fd_ < 0) fail_read();
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Reads up to `n` bytes, retrying on EINTR; 0 at the end.
  size_t read_some(char* into, size_t n) {
    for (;;) {
      ssize_t got = ::read(fd_, into, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) fail_read();
    }
  }
  // Fills `into` completely unless the file ends first; returns the bytes read.
  size_t read_full(char* into, size_t n) {
    size_t total = 0;
    while (total < n) {
      size_t got = read_some(into + total, n - total);
      if (got == 0) break;
      total += got;
    }
    return total;
  }
  std::string pread_tail(uint64_t file_size, size_t n) {
    std::string tail(std::min<uint64_t>(n, file_size), '\0');
    ssize_t got = ::pread(fd_, tail.data(), tail.size(),
                          static_cast<off_t>(file_size - tail.size()));
    if (got != static_cast<ssize_t>(tail.size())) tail.clear();
    return tail;
  }
  void rewind() {
    if (::lseek(fd_, 0, SEEK_SET) != 0) fail_read();
  }
  int fd() const { return fd_; }
  [[noreturn]] void fail_read() const {
    throw Error(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
  }

 private:
  std::string path_;
  int fd_;
};

TraceText read_plain(File& file, std::string source, std::string_view head, size_t file_size) {
  TextBuffer out(file_size + 1, false);  // + 1: the read that sees the end needs room
  std::memcpy(out.end(), head.data(), head.size());
  out.grow_by(head.size());
  for (;;) {
    out.make_room();
    size_t got = file.read_some(out.end(), out.room());
    if (got == 0) break;
    out.grow_by(got);
  }
  TraceText text = out.finish(std::move(source), out.size());
  check_text(text);
  return text;
}

TraceText read_gzip(File& file, std::string source, std::string_view head, size_t file_size,
                    bool seekable) {
  size_t hint = gzip_size_hint(file.pread_tail(file_size, 4), file_size);
  auto buffer = std::make_unique_for_overwrite<char[]>(kReadChunk);
  bool head_given = false;
  ChunkSource first = [&]() -> std::span<const char> {
    if (!head_given) {
      head_given = true;
      return {head.data(), head.size()};
    }
    return {buffer.get(), file.read_some(buffer.get(), kReadChunk)};
  };
  SourceFactory again;
  if (seekable) {
    again = [&]() -> ChunkSource {
      file.rewind();
      return [&]() -> std::span<const char> {
        return {buffer.get(), file.read_some(buffer.get(), kReadChunk)};
      };
    };
  }
  return inflate_all(first, again, std::move(source), file_size, hint);
}

}  // namespace

TraceText read_trace_text(const std::string& path) {
  File file(path);
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) file.fail_read();
  if (S_ISDIR(info.st_mode)) {
    throw Error(fmt::format("{}: is a directory; expected a trace file", path));
  }
  size_t file_size = S_ISREG(info.st_mode) ? static_cast<size_t>(info.st_size) : 0;
  char head_bytes[2];
  size_t head_size = file.read_full(head_bytes, sizeof head_bytes);
  std::string_view head(head_bytes, head_size);
  if (is_gzip(head)) return read_gzip(file, path, head, file_size, S_ISREG(info.st_mode));
  return read_plain(file, path, head, file_size);
}

TraceText trace_text_from_bytes(std::string_view bytes, std::string source) {
  if (is_gzip(bytes)) {
    SourceFactory whole = [bytes]() -> ChunkSource {
      return [bytes, given = false]() mutable -> std::span<const char> {
        if (given) return {};
        given = true;
        return {bytes.data(), bytes.size()};
      };
    };
    return inflate_all(whole(), whole, std::move(source), bytes.size(),
                       gzip_size_hint(bytes, bytes.size()));
  }
  TextBuffer out(bytes.size(), false);
  std::memcpy(out.end(), bytes.data(), bytes.size());
  out.grow_by(bytes.size());
  TraceText text = out.finish(std::move(source), bytes.size());
  check_text(text);
  return text;
}

}  // namespace plumb::step
