// The events file of `plumb run --events FILE` (plumb.run-events/1): one JSON object a line, each
// line one write(2) straight to the file, unbuffered, so that `tail -f` and log shippers see an
// event when it happens (docs/run.md, "Events"). A write that fails (a full disk, /dev/full, a
// file size limit) loses that event: the file is cut back to its last whole line, so that what it
// holds stays valid JSONL, and the loss is counted; the caller decides what to say.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace plumb::supervise {

class EventLog {
 public:
  // Creates or truncates `path`; a plumb::Error (exit 2) naming `option` and the path when it
  // cannot be opened for writing: "--events /x/run.jsonl: cannot be written: No such file or
  // directory".
  EventLog(std::string option, std::string path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // `event` as one line; a string that is not UTF-8 (a job's line) has U+FFFD for its bad
  // bytes. False when it could not be written whole.
  bool write(const nlohmann::json& event);

  int64_t written() const { return written_; }
  int64_t lost() const { return lost_; }
  int first_error() const { return first_error_; }  // errno of the first failed write; 0: none
  // "--events /x/run.jsonl"
  std::string name() const { return option_ + " " + path_; }

 private:
  std::string option_;
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;  // bytes of whole lines written
  int64_t written_ = 0;
  int64_t lost_ = 0;
  int first_error_ = 0;
};

}  // namespace plumb::supervise
