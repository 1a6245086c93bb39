// Errors that reach the user. Expected failures (bad input, a failed check) are typed
// exceptions carrying the exit code the CLI returns; assertions are for programmer errors only.
#pragma once

#include <stdexcept>
#include <string>

namespace plumb {

// Exit codes shared by every command (see ARCHITECTURE.md, "Errors carry context").
enum class ExitCode : int {
  kOk = 0,
  kCheckFailed = 1,  // a measurement ran but failed its check (wrong elements, a regression)
  kBadInput = 2,     // bad usage, bad input file, missing library
  kTooNoisy = 3,     // plumb diff: a change beyond the threshold but within the runs' own noise,
                     // and no regression: the gate could not judge (docs/diff.md)
};

// One message for the user, already naming the file/line/field. May hold several lines when a
// whole file was validated in one pass.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::kBadInput)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

}  // namespace plumb
