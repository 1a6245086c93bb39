// Addresses to values in one open-addressing table, for the passes over a trace that insert and
// erase once per event (the timeline, the replays' initial state, the validation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace plumb::mem {

// Addresses to V in one open-addressing table (linear probing, Fibonacci hashing, deletion by
// backward shift, at most half full). The replays below insert and erase once per event; with
// std::unordered_set every insertion allocated a node, which made them the slowest part of
// `plumb mem analyze` on 10 million events (bench/mem_analyze).
template <class V>
class AddressMap {
 public:
  AddressMap() : keys_(kInitialSlots, kEmpty), values_(kInitialSlots) {}

  size_t size() const { return size_ + (has_empty_key_ ? 1 : 0); }
  bool empty() const { return size() == 0; }
  bool contains(uint64_t key) const { return find(key) != nullptr; }
  const V* find(uint64_t key) const {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    if (size_ == 0) return nullptr;  // no hashing and probing for a set that stays empty
    for (size_t i = home(key);; i = (i + 1) & mask()) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  // The value under `key`, V{} inserted when absent.
  V& operator[](uint64_t key) { return *insert(key).first; }
  // The value under `key` and whether it was inserted now.
  std::pair<V*, bool> insert(uint64_t key) {
    if (key == kEmpty) {
      const bool added = !has_empty_key_;
      if (added) empty_key_value_ = V{};
      has_empty_key_ = true;
      return {&empty_key_value_, added};
    }
    if (2 * (size_ + 1) > keys_.size()) grow();
    size_t i = home(key);
    for (; keys_[i] != kEmpty; i = (i + 1) & mask()) {
      if (keys_[i] == key) return {&values_[i], false};
    }
    keys_[i] = key;
    values_[i] = V{};
    ++size_;
    return {&values_[i], true};
  }
  // Whether `key` was there.
  bool erase(uint64_t key) {
    V ignored;
    return take(key, ignored);
  }
  // The value under `key`, removed (one probe where find and erase would take two).
  std::optional<V> extract(uint64_t key) {
    V value;
    if (!take(key, value)) return std::nullopt;
    return value;
  }
  // extract() into `out`, and whether `key` was there: for the hot loops (GCC returns a small
  // std::optional through stores and a wider load, a store-forwarding stall per call that was a
  // fifth of a replay's own time).
  bool take(uint64_t key, V& out) {
    if (key == kEmpty) {
      if (!std::exchange(has_empty_key_, false)) return false;
      out = empty_key_value_;
      return true;
    }
    size_t i = home(key);
    for (; keys_[i] != key; i = (i + 1) & mask()) {
      if (keys_[i] == kEmpty) return false;
    }
    out = std::move(values_[i]);
    // Moves back every later entry of the run that may sit at i, so lookups never meet a gap.
    for (size_t j = (i + 1) & mask(); keys_[j] != kEmpty; j = (j + 1) & mask()) {
      const size_t h = home(keys_[j]);
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      keys_[i] = keys_[j];
      values_[i] = values_[j];
      i = j;
    }
    keys_[i] = kEmpty;
    --size_;
    return true;
  }
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (keys_[i] != kEmpty) f(keys_[i], values_[i]);
    }
    if (has_empty_key_) f(kEmpty, empty_key_value_);
  }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  static constexpr size_t kInitialSlots = 64;
  static constexpr uint64_t kFibonacci = 0x9E3779B97F4A7C15ULL;  // 2^64 / golden ratio

  size_t mask() const { return keys_.size() - 1; }
  size_t home(uint64_t key) const { return static_cast<size_t>((key * kFibonacci) >> shift_); }
  void grow() {
    std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<V> values(keys.size());
    keys.swap(keys_);
    values.swap(values_);
    --shift_;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == kEmpty) continue;
      size_t j = home(keys[i]);
      while (keys_[j] != kEmpty) j = (j + 1) & mask();
      keys_[j] = keys[i];
      values_[j] = values[i];
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<V> values_;
  size_t size_ = 0;
  int shift_ = 64 - 6;  // log2(kInitialSlots) bits of the hash
  bool has_empty_key_ = false;
  V empty_key_value_{};
};

struct Present {};  // the value of a set
using AddressSet = AddressMap<Present>;

}  // namespace plumb::mem
