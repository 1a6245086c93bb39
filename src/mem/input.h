// The bytes of one input file, read once. A regular file is mapped; a FIFO, a pipe or a
// character device (/dev/stdin, <(cat x)) is read to its end into memory, since it can be read
// only once: the format is then told from these bytes and every reader parses the same bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace plumb::mem {

class InputBytes {
 public:
  InputBytes(std::shared_ptr<const void> owner, std::string_view bytes, std::string name)
      : owner_(std::move(owner)), bytes_(bytes), name_(std::move(name)) {}

  std::string_view bytes() const { return bytes_; }
  const std::string& name() const { return name_; }  // the path, for messages
  // Keeps the bytes alive (the mapping or the buffer): readers that keep views hold it.
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::shared_ptr<const void> owner_;
  std::string_view bytes_;
  std::string name_;
};

// Errors name the path: "x: cannot read: No such file or directory", "x: is a directory, not a
// file".
InputBytes load_input(const std::string& path);

// Bytes already in memory (tests, fuzzers), under `name`.
InputBytes input_from_string(std::string bytes, std::string name);

}  // namespace plumb::mem
