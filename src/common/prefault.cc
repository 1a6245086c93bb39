#include "common/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace plumb {
namespace {

// False when the kernel does not know MADV_POPULATE_WRITE: nothing more is asked of it.
bool populate(char* at, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(at) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(at) + bytes) & ~(page - 1);
  if (end <= begin) return true;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
}

}  // namespace

void advise_pages(void* at, size_t bytes, int advice) {
  if (madvise(at, bytes, advice) != 0 && advice == MADV_POPULATE_READ) {
    madvise(at, bytes, MADV_WILLNEED);  // an older kernel: read-ahead at least
  }
}

Prefaulter::Prefaulter() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    stop_ = true;  // no thread to be had: the writer faults its pages itself
  }
}

Prefaulter::~Prefaulter() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Prefaulter::ahead(void* at, size_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    if (stop_) return;
    ranges_.push_back({static_cast<char*>(at), bytes, kWrite});
  }
  wake_.notify_one();
}

void Prefaulter::advise(const void* at, size_t bytes, int advice) {
  {
    const std::lock_guard lock(mutex_);
    if (stop_) {
      advise_pages(const_cast<void*>(at), bytes, advice);  // no thread: here
      return;
    }
    ranges_.push_back({static_cast<char*>(const_cast<void*>(at)), bytes, advice});
  }
  wake_.notify_one();
}

void Prefaulter::run() {
  bool can_populate = true;
  for (;;) {
    Range range{};
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !ranges_.empty(); });
      if (stop_) return;
      range = ranges_.front();
      ranges_.pop_front();
    }
    if (range.advice != kWrite) {
      advise_pages(range.at, range.bytes, range.advice);
    } else if (can_populate && !populate(range.at, range.bytes)) {
      can_populate = false;  // the kernel cannot: the writer faults its pages itself, as without us
    }
  }
}

}  // namespace plumb

// Its fallbacks for older kernel headers stay in this file (a unity build joins sources).
#undef MADV_POPULATE_READ
#undef MADV_POPULATE_WRITE
