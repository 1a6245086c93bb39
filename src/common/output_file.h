// One way to write every output file (--json, --csv, -o, --timeline, reports): into a temporary
// file in the target's own folder, every write checked, flushed and fsynced, then renamed over the
// target. Until commit() the target is untouched, so a full disk, a crash or a kill never leaves a
// truncated or half-written file where a good one was; a failure is an Error naming the option,
// the path and the reason. "-" is standard output (checked on commit as well).
//
// The same rule as git's lock files and SQLite's journal: the new content becomes visible in one
// rename(2), which POSIX makes atomic within a file system.
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>

namespace plumb {

class OutputFile {
 public:
  // Creates the temporary file now, so that a path that cannot be written fails before any work.
  // `option` names where the path came from ("--json", "-o") for messages.
  OutputFile(std::string option, std::string path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  // Flushes, fsyncs and renames over the target; any failure is an Error and the target keeps
  // its previous content.
  void commit();

  const std::string& path() const { return path_; }
  bool is_stdout() const { return path_ == "-"; }

 private:
  class FdBuffer;
  std::string option_;
  std::string path_;
  std::string temp_;
  std::unique_ptr<FdBuffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  int slot_ = -1;  // in the list the signal handler cleans
  bool committed_ = false;
};

// Writes `text` to `path` through an OutputFile ("-": standard output).
void write_output(const std::string& option, const std::string& path, std::string_view text);

// Flushes standard output and turns a failed write (a full disk, a closed pipe) into an Error,
// so that `plumb export 1 > /dev/full` does not exit 0.
void check_stdout();

// A path a command reads or writes, with the option that named it.
struct NamedPath {
  std::string option;  // "--json", "-o", "the store (--db)", "FILE"
  std::string path;
};

// Refuses, before any work, an output that is the same file as an input (the store, a trace, a
// record) or as another output of the same command. Empty paths and "-" are skipped. Files are
// compared by device and inode when they exist, else by their normalised absolute path.
void refuse_overlapping_paths(std::span<const NamedPath> outputs, std::span<const NamedPath> inputs);

// Removes every temporary output file still pending (async-signal-safe): called from a handler of
// SIGINT, SIGTERM and SIGHUP before the process dies of the signal.
void remove_pending_outputs() noexcept;

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove pending outputs and then die of the
// same signal (so the exit status still says which one).
void clean_outputs_on_signals();

}  // namespace plumb
