// A hint for large buffers written once: back them with transparent huge pages where the kernel
// allows. On this project's VMs a 4 KiB page fault costs about 17 µs, so faulting in a few
// hundred MB page by page takes a second, against 0.05 s in 2 MiB pages (bench/mem_analyze).
//
// The hint is given only where the kernel needs it to use huge pages at all (THP "madvise").
// Under THP "always" the kernel already backs aligned anonymous memory with huge pages when it
// has them free, without waiting; the hint would add direct compaction (the default defrag
// setting, "madvise", compacts synchronously for hinted regions only), and on a machine whose
// memory is fragmented each 2 MiB fault then stalls: `plumb mem analyze` of the 94 MB snapshot
// took 0.29–0.66 s with the hint against 0.18 s once memory was compacted, and 0.20–0.21 s
// every time without it; a 256 MB buffer took 1.86 s to fault in with the hint, 0.16–0.19 s in
// 4 KiB pages (this project's VM, THP "always", defrag "madvise", 2026-12-06).
#pragma once

#include <cstddef>
#include <string_view>

namespace plumb {

enum class HugePageMode { kAlways, kMadvise, kNever };

// The selected word of /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never" →
// kMadvise); kNever when the text names none.
HugePageMode huge_page_mode_from(std::string_view enabled_text);

// Whether to give the hint under `mode`: only under kMadvise (see above).
bool huge_page_hint_wanted(HugePageMode mode);

// Free page reporting (virtio-balloon, Linux mm/page_reporting.c): a guest hands free blocks of
// 2^order pages back to its host, which drops them, so the next fault on such a block costs a
// fault in the host too. With order 9 (2 MiB) every free huge page is such a block, and a
// process that gets transparent huge pages pays it on each: on this project's VM (order 9, 21 GB
// reported) `plumb mem analyze` of the 94 MB snapshot took 0.18–0.43 s (median 0.27, up to 0.64 s
// of system time clearing pages) with huge pages and 0.20–0.26 s (median 0.205) in 4 KiB pages,
// which come back from the allocator's recently freed, still-backed lists. True when the
// page_reporting module's parameters (its `page_reporting_order`, and `reported_kib` where the
// kernel exports it: > 0) say so; `order_text` empty means no page reporting.
bool huge_pages_given_back(std::string_view order_text, std::string_view reported_kib_text);

// Where this machine gives huge pages back to its host (above), stops this process from getting
// transparent huge pages (prctl PR_SET_THP_DISABLE): for commands that fill a few hundred MB of
// fresh memory once (plumb mem). Returns whether it did. Never an error.
bool prefer_small_pages_where_given_back();

// madvise(MADV_HUGEPAGE) over the whole 2 MiB pages inside [at, at + bytes), where this
// machine's THP mode wants the hint (read once). Nothing happens where THP or madvise is
// missing; never an error.
void advise_huge_pages(const void* at, size_t bytes);

}  // namespace plumb
