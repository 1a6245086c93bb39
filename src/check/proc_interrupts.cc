#include "check/proc_interrupts.h"

#include "check/probe_text.h"

namespace plumb::check {
namespace {

// IRQ numbers stay below the kernel's NR_IRQS (at most a few hundred thousand with
// CONFIG_SPARSE_IRQ); anything larger is not a vector line.
constexpr long kMaxIrq = 1L << 24;

bool blank_in_line(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The CPU columns of the header line ("CPU0 CPU1 ..."); 0 when it is not one.
size_t cpu_columns(std::string_view header) {
  size_t n = 0;
  for (std::string_view w : words(header)) n += starts_with_nocase(w, "CPU") ? 1 : 0;
  return n;
}

// Reads up to `cpus` counts from the front of `rest` and leaves the description.
double take_counts(std::string_view& rest, size_t cpus) {
  double total = 0;
  for (size_t i = 0; i < cpus; ++i) {
    size_t start = 0;
    while (start < rest.size() && blank_in_line(rest[start])) ++start;
    size_t end = start;
    while (end < rest.size() && !blank_in_line(rest[end])) ++end;
    const std::optional<long> n = to_long(rest.substr(start, end - start));
    if (!n || *n < 0) break;
    total += static_cast<double>(*n);
    rest.remove_prefix(end);
  }
  return total;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && blank_in_line(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank_in_line(text.back())) text.remove_suffix(1);
  return std::string(text);
}

bool read_line(std::string_view line, size_t cpus, InterruptLine& out) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  const std::optional<long> irq = to_long(trimmed(line.substr(0, colon)));
  if (!irq || *irq < 0 || *irq > kMaxIrq) return false;
  std::string_view rest = line.substr(colon + 1);
  out.irq = static_cast<int>(*irq);
  out.count = take_counts(rest, cpus);
  out.description = trimmed(rest);
  return true;
}

bool name_matches(std::string_view word, std::string_view name) {
  if (name.empty() || word.substr(0, name.size()) != name) return false;
  return word.size() == name.size() || word[name.size()] == '-' || word[name.size()] == '@';
}

}  // namespace

std::vector<InterruptLine> parse_interrupts(std::string_view text) {
  std::vector<InterruptLine> out;
  const std::vector<std::string_view> all = lines(text);
  if (all.empty()) return out;
  const size_t cpus = cpu_columns(all.front());
  if (cpus == 0) return out;
  for (size_t i = 1; i < all.size(); ++i) {
    InterruptLine line;
    if (read_line(all[i], cpus, line)) out.push_back(std::move(line));
  }
  return out;
}

bool interrupt_of(const InterruptLine& line, std::string_view bdf,
                  const std::vector<std::string>& names) {
  if (!bdf.empty() && line.description.find(bdf) != std::string::npos) return true;
  for (std::string_view word : words(line.description)) {
    for (const std::string& name : names) {
      if (name_matches(word, name)) return true;
    }
  }
  return false;
}

}  // namespace plumb::check
