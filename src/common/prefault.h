// Faults in the pages of a buffer that is written front to back, on a thread of its own, ahead
// of the writer (and runs other madvise calls there: a mapped input's window, mem/input.h). On this project's VMs the first touch of fresh memory is dear (the kernel zeroes
// each 2 MiB page while the writer waits): for `plumb mem analyze` of a 94 MB snapshot it was 11%
// of the run, time the second core can take instead (docs/performance.md).
//
// Only faults in (MADV_POPULATE_WRITE, Linux 5.14): the contents stay what they were, zero for
// fresh memory, so a range that is no longer the buffer's (it was reallocated) costs memory,
// never a value. Where the kernel lacks it, nothing happens.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace plumb {

// madvise(at, bytes, advice) here and now; a MADV_POPULATE_READ the kernel does not know (before
// Linux 5.14) becomes MADV_WILLNEED, read-ahead at least. `at` page-aligned.
void advise_pages(void* at, size_t bytes, int advice);

class Prefaulter {
 public:
  Prefaulter();
  ~Prefaulter();  // stops: ranges not yet faulted in are dropped
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;

  // The whole pages inside [at, at + bytes), after those asked for before.
  void ahead(void* at, size_t bytes);
  // advise_pages(at, bytes, advice) on the thread, in order with the rest.
  void advise(const void* at, size_t bytes, int advice);

 private:
  struct Range {
    char* at;
    size_t bytes;
    int advice;  // kWrite: ahead()'s populate
  };
  static constexpr int kWrite = -1;
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Range> ranges_;
  bool stop_ = false;
  std::thread thread_;
};

// A vector filled by push_back within its reserved capacity: keeps the pages from its end to
// kLead..kLead + kChunk bytes past it faulted in, asking kChunk bytes at a time.
template <class Vector>
class PrefaultAhead {
 public:
  static constexpr size_t kChunk = size_t{2} << 20;
  static constexpr size_t kLead = 2 * kChunk;

  explicit PrefaultAhead(Vector& v) : v_(v) { next(); }
  // After each push_back: cheap until the end passes the point asked for.
  void pushed() {
    if (v_.size() * sizeof(typename Vector::value_type) >= asked_ - kLead) next();
  }

 private:
  void next() {
    constexpr size_t kItem = sizeof(typename Vector::value_type);
    const size_t capacity = v_.capacity() * kItem;
    const size_t from = std::max(asked_, v_.size() * kItem);
    const size_t to = std::min(capacity, v_.size() * kItem + kLead + kChunk);
    if (to > from) pages_.ahead(reinterpret_cast<char*>(v_.data()) + from, to - from);
    asked_ = std::max(to, kLead + 1);  // past the capacity: never again
    if (to >= capacity) asked_ = SIZE_MAX;
  }

  Vector& v_;
  size_t asked_ = 0;
  Prefaulter pages_;
};

}  // namespace plumb
