// Prefaulter (common/prefault.h): pages faulted in ahead of a writer, and other madvise calls run
// on its thread in the order they were asked.
#include "common/prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace plumb {
namespace {

// Polls `done` for up to 10 s (the thread runs when the scheduler lets it).
template <class F>
bool eventually(F&& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

struct Mapping {
  explicit Mapping(size_t n) : bytes(n) {
    at = static_cast<char*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Mapping() { munmap(at, bytes); }
  // Whether every page is resident (mincore).
  bool resident() const {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    if (mincore(at, bytes, in.data()) != 0) return false;
    for (unsigned char c : in) {
      if ((c & 1) == 0) return false;
    }
    return true;
  }
  char* at = nullptr;
  size_t bytes;
};

TEST(Prefaulter, AheadFaultsThePagesIn) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Mapping m(64 * page);
  ASSERT_NE(m.at, MAP_FAILED);
  EXPECT_FALSE(m.resident());  // untouched anonymous memory
  Prefaulter p;
  p.ahead(m.at, m.bytes);
  EXPECT_TRUE(eventually([&] { return m.resident(); }));
  EXPECT_EQ(m.at[5 * page], 0);  // faulted in, not written: still zero
}

// MADV_DONTNEED of private anonymous memory gives zero-filled pages back: it ran, after the
// populate asked first.
TEST(Prefaulter, AdviseRunsInOrderOnTheThread) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Mapping m(16 * page);
  ASSERT_NE(m.at, MAP_FAILED);
  Prefaulter p;
  p.ahead(m.at, m.bytes);
  ASSERT_TRUE(eventually([&] { return m.resident(); }));
  std::memset(m.at, 0xab, m.bytes);
  p.advise(m.at + 4 * page, 4 * page, MADV_DONTNEED);
  EXPECT_TRUE(eventually([&] { return m.at[4 * page] == 0; }));
  EXPECT_EQ(m.at[7 * page + 100], 0);
  EXPECT_EQ(static_cast<unsigned char>(m.at[3 * page]), 0xab);  // outside the range: kept
  EXPECT_EQ(static_cast<unsigned char>(m.at[8 * page]), 0xab);
}

}  // namespace
}  // namespace plumb
