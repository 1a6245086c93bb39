#include "common/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

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
    ranges_.emplace_back(static_cast<char*>(at), bytes);
  }
  wake_.notify_one();
}

void Prefaulter::run() {
  for (;;) {
    std::pair<char*, size_t> range;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !ranges_.empty(); });
      if (stop_) return;
      range = ranges_.front();
      ranges_.pop_front();
    }
    if (!populate(range.first, range.second)) {
      const std::lock_guard lock(mutex_);
      stop_ = true;  // the kernel cannot: the writer faults its pages itself, as without us
      return;
    }
  }
}

}  // namespace plumb
