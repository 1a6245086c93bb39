// The problems of independent items (the rows of a file, the fields of a document), gathered so
// that one pass reports them all (STYLE.md #8).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace plumb {

class ProblemList {
 public:
  // The most messages one Error lists; the rest are counted.
  static constexpr size_t kMaxListed = 20;
  // Runs fn; a plumb::Error it throws is kept instead of stopping the caller.
  void attempt(const std::function<void()>& fn);
  void add(std::string message);
  bool empty() const { return count_ == 0; }
  // One Error holding every kept message, a line each (after kMaxListed: "(and N more problems)").
  void throw_if_any() const;

 private:
  std::vector<std::string> messages_;
  size_t count_ = 0;
};

}  // namespace plumb
