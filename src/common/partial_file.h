// A file that grows while a long command runs, so that a kill leaves what was done: plumb comm's
// rows as they are measured (docs/outputs.md, "Partial files while a sweep runs"). Unlike
// OutputFile it is not whole-or-nothing: it is created at start and written in place, each piece
// in one write(2) with no buffering in the process, so whatever a SIGKILL, a time limit or a
// closed terminal interrupts, the pieces written before are in the file. It is never the
// finished file's path: plumb comm writes it beside its target (partial_path: "out.json.partial"),
// whose previous content stays until the finished file, from an OutputFile, replaces it whole;
// then the partial file is removed (discard).
//
// Only regular files (and paths not there yet) get a partial form: standard output ("-"), a
// device, a FIFO or a socket is written once, at the end, as before.
//
// A write that fails (a full disk) is reported once on standard error and the partial file is
// given up; the command goes on and its final file is written (or refused) by the OutputFile.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plumb {

// Where the partial form of `target` goes: beside it, "out.json" -> "out.json.partial".
inline constexpr const char* kPartialSuffix = ".partial";
std::string partial_path(const std::string& target);

class PartialFile {
 public:
  // Nothing is opened yet; `option` names the path in messages ("--json").
  PartialFile(std::string option, std::string path);
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  // True when `path` gets a partial form (not "-", not a device, FIFO or socket).
  static bool wanted(const std::string& path);

  // Creates or truncates the file (a partial file a killed run left) and writes `text`.
  void start(std::string_view text);
  // Writes `text` at the end.
  void append(std::string_view text);
  // Writes `text` at byte `offset` (at most the current size): a document whose closing part is
  // rewritten after each piece (a JSON array closed after every element) stays whole.
  void write_at(uint64_t offset, std::string_view text);

  // The finished file is in place: closes and removes this one (nothing when it was not started).
  void discard();

  bool ok() const { return fd_ >= 0; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void fail(int error);

  std::string option_;
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool started_ = false;  // created by start(): what discard() removes
};

}  // namespace plumb
