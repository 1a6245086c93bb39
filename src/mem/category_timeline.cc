#include "mem/category_timeline.h"

#include <algorithm>
#include <unordered_map>

#include "mem/address_map.h"

namespace plumb::mem {
namespace {

// Category names to rows of CategoryTimeline::bytes, added as they are first asked for.
class Rows {
 public:
  explicit Rows(CategoryTimeline& out) : out_(out) {
    row(kBeforeTheTrace);
    for (const char* c : kCategories) row(c);
  }
  size_t row(const std::string& category) {
    const auto [it, added] = index_.emplace(category, out_.categories.size());
    if (added) {
      out_.categories.push_back(category);
      out_.bytes.emplace_back();
    }
    return it->second;
  }

 private:
  CategoryTimeline& out_;
  std::unordered_map<std::string, size_t> index_;
};

struct LiveRow {
  uint64_t size = 0;
  size_t row = 0;
};

}  // namespace

uint64_t CategoryTimeline::total(size_t event) const {
  uint64_t sum = 0;
  for (const std::vector<uint64_t>& row : bytes) sum += event < row.size() ? row[event] : 0;
  return sum;
}

CategoryTimeline category_timeline(const Trace& t, const Timeline& tl, const Categorizer& c) {
  CategoryTimeline out;
  Rows rows(out);
  const size_t before = rows.row(kBeforeTheTrace);
  const AddressSet workspace = workspace_blocks(t);
  std::vector<uint64_t> now(out.categories.size(), 0);
  now[before] = tl.initial.allocated;
  AddressMap<LiveRow> live;  // addr → block allocated in the trace, still held
  for (size_t i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (e.action == Action::kAlloc && !workspace.contains(e.addr)) {
      const size_t row = rows.row(c.category(e.stack));
      if (row >= now.size()) now.resize(row + 1, 0);
      live[e.addr] = {e.size, row};
      now[row] += e.size;
    } else if (e.action == Action::kFreeRequested && !workspace.contains(e.addr)) {
      const LiveRow* l = live.find(e.addr);
      if (l == nullptr) {
        now[before] = minus(now[before], e.size);  // allocated before the trace began
      } else {
        now[l->row] = minus(now[l->row], e.size);
        live.erase(e.addr);
      }
    }
    for (size_t r = 0; r < now.size(); ++r) {
      // A category first seen at event i has no value before it: 0.
      if (out.bytes[r].size() < i) out.bytes[r].resize(i, 0);
      out.bytes[r].push_back(now[r]);
    }
  }
  return out;
}

}  // namespace plumb::mem
