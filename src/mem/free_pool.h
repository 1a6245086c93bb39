// The free blocks of an allocator model's pool, in the order PyTorch's BlockComparatorSize keeps
// them: stream, size, address (and the model's block id, which makes every key distinct).
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace plumb::mem {

struct FreeKey {
  int64_t stream = 0;
  uint64_t size = 0;
  uint64_t addr = 0;
  uint32_t id = 0;
  auto operator<=>(const FreeKey&) const = default;  // member by member, in this order
};

// An ordered set of FreeKey as sorted runs of at most kRun keys, the runs in order. A replay
// inserts and erases a key per allocation and free; std::set allocated a node for each and
// chased pointers down a tree, the most of a replay's time (perf on a 1.6-million-event
// snapshot). Here an insertion or erasure moves at most kRun keys inside one run and finds the
// run by binary search over the runs' last keys.
class FreePool {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = FreeKey;
    using difference_type = std::ptrdiff_t;
    using pointer = const FreeKey*;
    using reference = const FreeKey&;

    Iterator() = default;
    const FreeKey& operator*() const { return pool_->runs_[run_][index_]; }
    const FreeKey* operator->() const { return &**this; }
    Iterator& operator++() {
      if (++index_ == pool_->runs_[run_].size()) {
        ++run_;
        index_ = 0;
      }
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const Iterator& o) const { return run_ == o.run_ && index_ == o.index_; }

   private:
    friend class FreePool;
    Iterator(const FreePool* pool, size_t run, size_t index) : pool_(pool), run_(run), index_(index) {}
    const FreePool* pool_ = nullptr;
    size_t run_ = 0, index_ = 0;
  };

  Iterator begin() const { return {this, 0, 0}; }
  Iterator end() const { return {this, runs_.size(), 0}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The first key not less than `k`.
  Iterator lower_bound(const FreeKey& k) const {
    const size_t run = run_for(k);
    if (run == runs_.size()) return end();
    const auto& r = runs_[run];
    return {this, run, static_cast<size_t>(std::lower_bound(r.begin(), r.end(), k) - r.begin())};
  }

  void insert(const FreeKey& k) {
    ++size_;
    if (runs_.empty()) {
      runs_.emplace_back().push_back(k);
      return;
    }
    // Past every key: onto the last run.
    const size_t run = std::min(run_for(k), runs_.size() - 1);
    auto& r = runs_[run];
    const auto at = static_cast<size_t>(std::lower_bound(r.begin(), r.end(), k) - r.begin());
    // Not r.insert(at, k): GCC copies the key through 16-byte loads of what the caller has just
    // stored 8 bytes at a time, a store-forwarding stall per insertion (a third of its time).
    r.emplace_back();
    std::move_backward(r.begin() + static_cast<std::ptrdiff_t>(at), r.end() - 1, r.end());
    FreeKey& slot = r[at];
    slot.stream = k.stream;
    slot.size = k.size;
    slot.addr = k.addr;
    slot.id = k.id;
    if (r.size() > kRun) split(run);
  }

  // Erases `k` when present.
  void erase(const FreeKey& k) {
    const Iterator it = lower_bound(k);
    if (it != end() && *it == k) erase(it);
  }

  void erase(Iterator it) {
    auto& r = runs_[it.run_];
    r.erase(r.begin() + static_cast<std::ptrdiff_t>(it.index_));
    --size_;
    if (r.empty()) runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(it.run_));
  }

 private:
  static constexpr size_t kRun = 16;  // a run splits in halves past this many keys (16: the fastest of 8-64)

  // The first run whose last key is not less than `k` (runs_.size(): none).
  size_t run_for(const FreeKey& k) const {
    const auto it = std::lower_bound(runs_.begin(), runs_.end(), k,
                                     [](const std::vector<FreeKey>& r, const FreeKey& key) {
                                       return r.back() < key;
                                     });
    return static_cast<size_t>(it - runs_.begin());
  }

  void split(size_t run) {
    auto& r = runs_[run];
    std::vector<FreeKey> upper(r.begin() + kRun / 2, r.end());
    r.resize(kRun / 2);
    runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(run) + 1, std::move(upper));
  }

  std::vector<std::vector<FreeKey>> runs_;  // none empty
  size_t size_ = 0;
};

}  // namespace plumb::mem
