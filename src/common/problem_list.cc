#include "common/problem_list.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/strings.h"

namespace plumb {

void ProblemList::attempt(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    add(e.what());
  }
}

void ProblemList::add(std::string message) {
  ++count_;
  if (messages_.size() < kMaxListed) messages_.push_back(std::move(message));
}

void ProblemList::throw_if_any() const {
  if (count_ == 0) return;
  std::string text = join(messages_, "\n");
  if (count_ > messages_.size()) {
    text += fmt::format("\n(and {} more problems)", count_ - messages_.size());
  }
  throw Error(text);
}

}  // namespace plumb
