#include "common/huge_pages.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <charconv>

namespace plumb {
namespace {

constexpr const char* kThpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled";

constexpr const char* kReportingOrder = "/sys/module/page_reporting/parameters/page_reporting_order";
constexpr const char* kReportedKib = "/sys/module/page_reporting/parameters/reported_kib";
constexpr int kHugePageOrder = 9;  // 2 MiB in 4 KiB pages

std::string file_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

HugePageMode this_machines_mode() { return huge_page_mode_from(file_text(kThpEnabled)); }

// The leading decimal number of a sysfs value ("9\n"), or -1.
long long leading_number(std::string_view text) {
  long long n = -1;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

}  // namespace

HugePageMode huge_page_mode_from(std::string_view enabled_text) {
  if (enabled_text.find("[always]") != std::string_view::npos) return HugePageMode::kAlways;
  if (enabled_text.find("[madvise]") != std::string_view::npos) return HugePageMode::kMadvise;
  return HugePageMode::kNever;
}

bool huge_page_hint_wanted(HugePageMode mode) { return mode == HugePageMode::kMadvise; }

bool huge_pages_given_back(std::string_view order_text, std::string_view reported_kib_text) {
  const long long order = leading_number(order_text);
  if (order < 0 || order > kHugePageOrder) return false;
  return reported_kib_text.empty() || leading_number(reported_kib_text) != 0;
}

bool prefer_small_pages_where_given_back() {
  if (!huge_pages_given_back(file_text(kReportingOrder), file_text(kReportedKib))) return false;
  return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
}

void advise_huge_pages(const void* at, size_t bytes) {
#ifdef MADV_HUGEPAGE
  static const bool wanted = huge_page_hint_wanted(this_machines_mode());
  if (!wanted) return;
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
