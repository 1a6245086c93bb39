// The bytes of one input file, read once. A regular file is mapped; a FIFO, a pipe or a
// character device (/dev/stdin, <(cat x)) is read to its end into memory, since it can be read
// only once: the format is then told from these bytes and every reader parses the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace plumb {
class Prefaulter;
}

namespace plumb::mem {

class InputBytes {
 public:
  InputBytes(std::shared_ptr<const void> owner, std::string_view bytes, std::string name, bool mapped = false)
      : owner_(std::move(owner)), bytes_(bytes), name_(std::move(name)), mapped_(mapped) {}

  std::string_view bytes() const { return bytes_; }
  const std::string& name() const { return name_; }  // the path, for messages
  // Keeps the bytes alive (the mapping or the buffer): readers that keep views hold it.
  const std::shared_ptr<const void>& owner() const { return owner_; }
  // A mapped file: its pages come in as they are read. populate() brings them all in at once (one
  // call instead of a fault per few pages), for readers that read everything; a no-op on bytes
  // already in memory.
  bool mapped() const { return mapped_; }
  void populate() const;

 private:
  std::shared_ptr<const void> owner_;
  std::string_view bytes_;
  std::string name_;
  bool mapped_ = false;
};

// Reading a mapped file front to back: the pages ahead are asked for before the reader gets there,
// and those behind are handed back (they stay in the page cache and fault back in if read again),
// so the process holds a window of the file, not all of it. Nothing to do for bytes in memory.
// For a file of more than two steps the madvise calls run on a thread of their own
// (common/prefault.h): on the reader's thread they were 8 MiB of page-table work every 8 MiB
// read, about a tenth of reading a 94 MB snapshot.
class InputWindow {
 public:
  static constexpr size_t kStep = size_t{8} << 20;
  explicit InputWindow(const InputBytes& input);
  ~InputWindow();
  InputWindow(const InputWindow&) = delete;
  InputWindow& operator=(const InputWindow&) = delete;
  // The reader has come to byte `offset`.
  void at(size_t offset) {
    if (offset >= next_) move(offset);
  }

 private:
  void move(size_t offset);
  void advise(size_t from, size_t to, int advice);
  const InputBytes& input_;
  size_t next_;
  size_t released_ = 0;
  std::unique_ptr<Prefaulter> pages_;  // null: the calls run on the reader's thread
};

// Errors name the path: "x: cannot read: No such file or directory", "x: is a directory, not a
// file".
InputBytes load_input(const std::string& path);

// Bytes already in memory (tests, fuzzers), under `name`.
InputBytes input_from_string(std::string bytes, std::string name);

}  // namespace plumb::mem
