#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace plumb {

void advise_huge_pages(const void* at, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;  // x86-64 and arm64 with 4 KiB pages
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(at) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(at) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)at;
  (void)bytes;
#endif
}

}  // namespace plumb
