#include "mem/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <cmath>
#include <optional>
#include <vector>

#include "common/error.h"
#include "mem/address_map.h"
#include "mem/timeline.h"

namespace plumb::mem {
namespace {

// What the trace has said of a block address so far (absent: nothing: a free of it frees a block
// allocated before the trace began).
enum class Held : uint8_t { kAllocated, kPending, kFreed };

struct BlockAt {
  Held held = Held::kFreed;
  size_t event = 0;  // the event that put it in this state
};

struct Range {
  uint64_t start = 0;
  uint64_t end = 0;  // one past the last byte
  size_t event = 0;  // its allocation
};

// The live blocks' ranges in address order, in chunks of 8 to 64: finding the place of an
// address is a binary search over the chunks' first starts (one flat array) and one inside a
// chunk; inserting or erasing moves at most one chunk (1.5 KiB).
class LiveRanges {
 public:
  // Inserts `r` unless a range overlaps it: then that range, and nothing inserted. The live
  // ranges are disjoint, so only the neighbours of r's place can overlap it.
  const Range* insert(const Range& r) {
    if (chunks_.empty()) {
      chunks_.push_back({r});
      firsts_.push_back(r.start);
      return nullptr;
    }
    size_t c = chunk_before(r.start + 1);  // the chunk of the last start <= r.start
    if (c == kNone) c = 0;
    std::vector<Range>& ranges = chunks_[c];
    const auto at = lower(ranges, r.start);
    if (at != ranges.begin() && (at - 1)->end > r.start) return &*(at - 1);
    if (at != ranges.end() && at->start < r.end) return &*at;
    if (at == ranges.end() && c + 1 < chunks_.size() && firsts_[c + 1] < r.end) return &chunks_[c + 1].front();
    ranges.insert(at, r);
    firsts_[c] = ranges.front().start;
    if (ranges.size() > kMax) split(c);
    return nullptr;
  }
  void erase(uint64_t start) {
    const size_t c = chunk_before(start + 1);
    if (c == kNone) return;
    std::vector<Range>& ranges = chunks_[c];
    const auto it = lower(ranges, start);
    if (it == ranges.end() || it->start != start) return;
    ranges.erase(it);
    if (!ranges.empty()) firsts_[c] = ranges.front().start;
    if (ranges.size() < kMin) merge(c);
  }

 private:
  static constexpr size_t kMin = 8, kMax = 64;
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // The first range of `ranges` starting at `x` or above. Branch-free: the searches are most of
  // the pass's time, and their branches cannot be predicted.
  static std::vector<Range>::const_iterator lower(const std::vector<Range>& ranges, uint64_t x) {
    return ranges.begin() + static_cast<ptrdiff_t>(lower_index(ranges.data(), ranges.size(), x,
                                                                [](const Range& r) { return r.start; }));
  }
  template <class T, class Key>
  static size_t lower_index(const T* a, size_t n, uint64_t x, Key key) {
    if (n == 0) return 0;
    const T* base = a;
    while (n > 1) {
      const size_t half = n / 2;
      base = key(base[half]) < x ? base + half : base;
      n -= half;
    }
    return static_cast<size_t>(base - a) + (key(*base) < x ? 1 : 0);
  }
  // The last chunk whose first range starts below `x`, or kNone.
  size_t chunk_before(uint64_t x) const {
    const size_t i = lower_index(firsts_.data(), firsts_.size(), x, [](uint64_t v) { return v; });
    return i == 0 ? kNone : i - 1;
  }
  void split(size_t c) {
    std::vector<Range> upper(chunks_[c].begin() + kMax / 2, chunks_[c].end());
    chunks_[c].resize(kMax / 2);
    firsts_.insert(firsts_.begin() + static_cast<ptrdiff_t>(c) + 1, upper.front().start);
    chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1, std::move(upper));
  }
  // A small chunk joins the next one (or the previous one, for the last); an empty one goes.
  void merge(size_t c) {
    if (chunks_[c].empty() || chunks_.size() == 1) {
      if (chunks_[c].empty()) remove(c);
      return;
    }
    const size_t into = c + 1 < chunks_.size() ? c : c - 1;
    std::vector<Range>& low = chunks_[into];
    const std::vector<Range>& high = chunks_[into + 1];
    if (low.size() + high.size() > kMax) return;
    low.insert(low.end(), high.begin(), high.end());
    remove(into + 1);
  }
  void remove(size_t c) {
    chunks_.erase(chunks_.begin() + static_cast<ptrdiff_t>(c));
    firsts_.erase(firsts_.begin() + static_cast<ptrdiff_t>(c));
  }

  std::vector<std::vector<Range>> chunks_;
  std::vector<uint64_t> firsts_;  // chunks_[i].front().start
};

class Validator {
 public:
  // `completions`: whether the trace has free_completed events (a free_requested then leaves the
  // block in use until its completion). `device` names the trace in messages.
  Validator(const Trace& t, const std::string& name, int device, bool completions)
      : t_(t), name_(name), device_(device), completions_(completions) {}

  // Events [from, to) of `events`, after those before `from`; `device_free` holds the trace's
  // entries for them at least (in event order, as Trace::device_free).
  void run_events(const Event* events, size_t from, size_t to, const std::vector<DeviceFree>& device_free) {
    device_free_ = &device_free;
    for (i_ = from; i_ < to; ++i_) {
      const Event& e = events[i_];
      check_sizes(e);
      check_time(e);
      switch (e.action) {
        case Action::kAlloc: alloc(e); break;
        case Action::kFreeRequested: free_requested(e); break;
        case Action::kFreeCompleted:
          saw_completions_ = true;
          free_completed(e);
          break;
        default: break;
      }
    }
  }
  void run_segments() const {
    for (size_t k = 0; k < t_.segments.size(); ++k) check_segment(t_.segments[k], k);
  }
  bool saw_completions() const { return saw_completions_; }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    if (!t_.event_lines.empty()) {
      throw Error(fmt::format("{}:{}: event {}: {}", name_, t_.event_lines[i_], i_, what));
    }
    throw Error(fmt::format("{}: device_traces[{}][{}]: {}", name_, device_, i_, what));
  }
  // Another event, as the user finds it: its line in JSONL, its index in a snapshot.
  std::string ref(size_t j) const {
    if (!t_.event_lines.empty()) return fmt::format("event {} (line {})", j, t_.event_lines[j]);
    return fmt::format("event {}", j);
  }
  std::string what(const Event& e) const {
    return fmt::format("{} of 0x{:x} ({} bytes)", action_name(e.action), e.addr, e.size);
  }

  void check_sizes(const Event& e) {
    uint64_t device_free = 0;
    const std::vector<DeviceFree>& frees = *device_free_;
    if (free_at_ < frees.size() && frees[free_at_].event == i_) device_free = frees[free_at_++].bytes;
    for (const auto& [key, bytes] : {std::pair{"size", e.size}, std::pair{"device_free", device_free}}) {
      if (bytes > kMaxBytes) {
        fail(fmt::format("'{}' {} bytes is beyond any device's memory (at most {} bytes)", key, bytes, kMaxBytes));
      }
    }
    if (e.addr > UINT64_MAX - e.size) {
      fail(fmt::format("{} passes the end of the 64-bit address space", what(e)));
    }
  }

  void check_time(const Event& e) {
    if (std::isnan(e.time_us)) return;  // the event has no time
    if (!std::isfinite(e.time_us)) fail(fmt::format("'time_us' {} is not a finite number", e.time_us));
    if (e.time_us < 0) fail(fmt::format("'time_us' {} is negative", e.time_us));
    if (last_time_ && e.time_us < *last_time_) {
      fail(fmt::format("'time_us' {} is before {}'s {}: time does not run backwards", e.time_us,
                       ref(last_time_event_), *last_time_));
    }
    last_time_ = e.time_us;
    last_time_event_ = i_;
  }

  void alloc(const Event& e) {
    const auto [at, added] = blocks_.insert(e.addr);
    if (!added && at->held == Held::kAllocated) {
      fail(fmt::format("{}: the block allocated there by {} is still allocated (not freed)", what(e),
                       ref(at->event)));
    }
    if (!added && at->held == Held::kPending) {
      fail(fmt::format("{}: the block freed there by {} still waits for its free_completed", what(e),
                       ref(at->event)));
    }
    if (e.size > 0) {
      if (const Range* r = live_.insert(Range{e.addr, e.addr + e.size, i_})) {
        fail(fmt::format("{} overlaps the block [0x{:x}, 0x{:x}) allocated by {} and not freed", what(e),
                         r->start, r->end, ref(r->event)));
      }
    }
    *at = BlockAt{Held::kAllocated, i_};
  }

  void free_requested(const Event& e) {
    const auto [at, added] = blocks_.insert(e.addr);
    if (!added && at->held != Held::kAllocated) freed_twice(e, *at);
    // Without free_completed events, the request is the free; with them the block stays in use.
    if (!completions_) live_.erase(e.addr);
    *at = BlockAt{completions_ ? Held::kPending : Held::kFreed, i_};
  }

  // A completion of a block never requested (its request before the ring buffer began, or a
  // trace without requests) is the free.
  void free_completed(const Event& e) {
    const auto [at, added] = blocks_.insert(e.addr);
    if (!added && at->held == Held::kFreed) freed_twice(e, *at);
    live_.erase(e.addr);
    *at = BlockAt{Held::kFreed, i_};
  }

  [[noreturn]] void freed_twice(const Event& e, const BlockAt& at) const {
    fail(fmt::format("{}: {} freed it already and nothing allocated it since: a block is freed once "
                     "per allocation", what(e), ref(at.event)));
  }

  void check_segment(const Segment& s, size_t k) const {
    if (s.total_size > kMaxBytes || s.addr > UINT64_MAX - s.total_size) {
      throw Error(fmt::format("{}: segment {} at 0x{:x}: 'total_size' {} bytes is beyond any device's "
                              "memory (at most {} bytes)", name_, k, s.addr, s.total_size, kMaxBytes));
    }
    for (size_t j = 0; j < s.blocks.size(); ++j) {
      const Block& b = s.blocks[j];
      if (b.addr < s.addr || b.size > s.total_size || b.addr - s.addr > s.total_size - b.size) {
        throw Error(fmt::format("{}: segment {} at 0x{:x}: block {} (0x{:x}, {} bytes) lies outside the "
                                "segment's {} bytes", name_, k, s.addr, j, b.addr, b.size, s.total_size));
      }
    }
  }

  const Trace& t_;
  const std::string& name_;
  int device_;
  bool completions_;
  bool saw_completions_ = false;
  const std::vector<DeviceFree>* device_free_ = nullptr;
  size_t i_ = 0;
  size_t free_at_ = 0;  // the next entry of Trace::device_free
  std::optional<double> last_time_;
  size_t last_time_event_ = 0;
  AddressMap<BlockAt> blocks_;
  LiveRanges live_;
};

}  // namespace

void validate_trace(const Trace& trace, const std::string& name) {
  Validator v(trace, name, trace.device, has_completions(trace));
  v.run_events(trace.events.data(), 0, trace.events.size(), trace.device_free);
  v.run_segments();
}

// ---- StreamValidator: the same pass on a thread of its own while a reader appends the events

struct StreamValidator::Shared {
  std::mutex mutex;
  std::condition_variable wake;
  const Event* events = nullptr;        // the trace's events, as of the last publish()
  size_t published = 0;                 // events [0, published) are there to read
  std::vector<DeviceFree> device_free;  // their entries, handed over since the thread last took them
  bool done = false;                    // nothing more comes (the thread finishes what it has)
  bool stop = false;                    // stop now
};

StreamValidator::StreamValidator(const Trace& trace, const std::string& name, int device)
    : trace_(trace), name_(name), device_(device), shared_(std::make_unique<Shared>()) {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
    abandoned_ = true;  // no thread: finish() validates the whole trace
  }
}

StreamValidator::~StreamValidator() { stop(); }

void StreamValidator::stop() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->wake.notify_one();
  thread_.join();
}

void StreamValidator::publish() {
  if (abandoned_) return;
  const size_t n = trace_.events.size();
  {
    const std::lock_guard lock(shared_->mutex);
    for (; handed_free_ < trace_.device_free.size(); ++handed_free_) {
      shared_->device_free.push_back(trace_.device_free[handed_free_]);
    }
    shared_->events = trace_.events.data();
    shared_->published = n;
  }
  shared_->wake.notify_one();
}

void StreamValidator::abandon() {
  abandoned_ = true;
  stop();
}

void StreamValidator::run() {
  // Speculates that the trace has free_completed events, as PyTorch's do: finish() checks it and
  // validates again in the rare trace without them.
  Validator v(trace_, name_, device_, true);
  const Event* events = nullptr;  // the reader abandons us before it reallocates
  std::vector<DeviceFree> device_free;
  size_t done = 0;
  for (;;) {
    size_t upto = 0;
    bool last = false;
    {
      std::unique_lock lock(shared_->mutex);
      shared_->wake.wait(lock, [&] { return shared_->stop || shared_->done || shared_->published > done; });
      if (shared_->stop) return;
      events = shared_->events;
      upto = shared_->published;
      last = shared_->done;
      device_free.insert(device_free.end(), shared_->device_free.begin(), shared_->device_free.end());
      shared_->device_free.clear();
    }
    try {
      v.run_events(events, done, upto, device_free);
    } catch (const Error& e) {
      error_ = e.what();
      return;
    } catch (const std::exception&) {
      failed_ = true;  // out of memory, say: finish() runs the plain pass, which says so
      return;
    }
    done = upto;
    if (last && done == upto) {
      saw_completions_ = v.saw_completions();
      return;
    }
  }
}

void StreamValidator::finish() {
  if (!abandoned_) {
    publish();
    {
      const std::lock_guard lock(shared_->mutex);
      shared_->done = true;
    }
    shared_->wake.notify_one();
    thread_.join();
  }
  // The speculation held when the trace has free_completed events after all.
  const bool held = !abandoned_ && !failed_ && (error_ ? has_completions(trace_) : saw_completions_);
  if (!held) {
    validate_trace(trace_, name_);
    return;
  }
  if (error_) throw Error(*error_);
  Validator(trace_, name_, device_, true).run_segments();
}

}  // namespace plumb::mem
