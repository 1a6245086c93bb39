// bench/write_snapshot: writes an allocator snapshot pickle of any size without holding it, for
// memory checks beyond what bench/make_big_snapshot.py can make (Python holds the whole object
// graph: 11.9 GB of memory for a 2 GB file, so no 10 GB file on a 24 GB machine).
//
// The pickle is what Python's pickler (protocol 4) writes for
//   {"segments": [], "device_traces": [[events]], "allocator_settings": {}}
// each str, list and dict memoized on first sight, lists in batches of 1000 between MARK and
// APPENDS. The trace: one 1 GiB segment_alloc, then steps of 100 allocations (64 KiB to 448 KiB, one
// per 4 MiB slot, two call sites) and their free_requested + free_completed pairs; times rise by
// 1 µs per event. A valid trace (plumb's check passes), simpler than make_big_snapshot.py's: the
// per-event memory of the analysis is the same (32 B per event, 16 B of timeline).
//
//   build-release/bench/write_snapshot OUT.pickle --gb 10
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

class Writer {
 public:
  explicit Writer(FILE* f) : f_(f) { out_ = "\x80\x04"; }
  ~Writer() { flush(); }

  void op(char c) { out_ += c; }
  void memoize() {
    out_ += '\x94';
    ++memo_;
  }
  void str(const std::string& s) {
    if (const auto it = strs_.find(s); it != strs_.end()) return get(it->second);
    out_ += '\x8c';
    out_ += static_cast<char>(s.size());
    out_ += s;
    strs_[s] = memo_;
    memoize();
  }
  void get(uint32_t key) {
    out_ += 'j';  // LONG_BINGET
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((key >> (8 * i)) & 0xff);
  }
  void integer(uint64_t v) {
    if (v < 256) {
      out_ += 'K';
      out_ += static_cast<char>(v);
      return;
    }
    char bytes[9];
    int n = 0;
    while (v != 0) {
      bytes[n++] = static_cast<char>(v & 0xff);
      v >>= 8;
    }
    if ((bytes[n - 1] & 0x80) != 0) bytes[n++] = 0;  // stays positive
    out_ += '\x8a';
    out_ += static_cast<char>(n);
    out_.append(bytes, static_cast<size_t>(n));
  }
  void frames(int site) {
    if (const auto it = frames_.find(site); it != frames_.end()) return get(it->second);
    frames_[site] = memo_;
    op(']');
    memoize();
    op('}');
    memoize();
    op('(');
    str("filename");
    str("train" + std::to_string(site) + ".py");
    str("line");
    integer(static_cast<uint64_t>(10 + site));
    str("name");
    str("step" + std::to_string(site));
    op('u');
    op('a');
  }
  void event(const char* action, uint64_t addr, uint64_t size, uint64_t time, int site) {
    op('}');
    memoize();
    op('(');
    str("action");
    str(action);
    str("addr");
    integer(addr);
    str("size");
    integer(size);
    str("stream");
    integer(0);
    str("time_us");
    integer(time);
    str("frames");
    frames(site);
    op('u');
    if (out_.size() > (size_t{1} << 20)) flush();
  }
  uint64_t written() const { return written_ + out_.size(); }
  void flush() {
    if (std::fwrite(out_.data(), 1, out_.size(), f_) != out_.size()) {
      std::perror("write_snapshot");
      std::exit(1);
    }
    written_ += out_.size();
    out_.clear();
  }

 private:
  FILE* f_;
  std::string out_;
  uint32_t memo_ = 0;
  uint64_t written_ = 0;
  std::map<std::string, uint32_t> strs_;
  std::map<int, uint32_t> frames_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[2], "--gb") != 0) {
    std::fprintf(stderr, "usage: write_snapshot OUT.pickle --gb N\n");
    return 2;
  }
  const double gb = std::atof(argv[3]);
  if (!(gb > 0)) {
    std::fprintf(stderr, "write_snapshot: --gb %s: expected a positive number\n", argv[3]);
    return 2;
  }
  FILE* f = std::fopen(argv[1], "wb");
  if (f == nullptr) {
    std::perror(argv[1]);
    return 2;
  }
  const auto target = static_cast<uint64_t>(gb * 1e9);
  const uint64_t base = 0x7f0000000000;
  uint64_t events = 0, time = 1717171717000000;
  {
    Writer w(f);
    w.op('}');
    w.memoize();
    w.op('(');
    w.str("segments");
    w.op(']');
    w.memoize();
    w.str("device_traces");
    w.op(']');
    w.memoize();
    w.op(']');
    w.memoize();
    size_t in_batch = 0;
    const auto item = [&](const char* action, uint64_t addr, uint64_t size, int site) {
      if (in_batch == 0) w.op('(');
      w.event(action, addr, size, time++, site);
      ++events;
      if (++in_batch == 1000) {
        w.op('e');
        in_batch = 0;
      }
    };
    item("segment_alloc", base, uint64_t{1} << 30, 0);
    while (w.written() < target) {
      for (uint64_t i = 0; i < 100; ++i) item("alloc", base + i * (4 << 20), (i % 7 + 1) << 16, 1 + static_cast<int>(i % 2));
      for (uint64_t i = 0; i < 100; ++i) {
        item("free_requested", base + i * (4 << 20), (i % 7 + 1) << 16, 1 + static_cast<int>(i % 2));
        item("free_completed", base + i * (4 << 20), (i % 7 + 1) << 16, 1 + static_cast<int>(i % 2));
      }
    }
    if (in_batch > 0) w.op(in_batch == 1 ? 'a' : 'e');
    w.op('a');  // the events list into device_traces
    w.str("allocator_settings");
    w.op('}');
    w.memoize();
    w.op('u');
    w.op('.');
  }
  if (std::fclose(f) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  std::printf("%s: %llu events\n", argv[1], static_cast<unsigned long long>(events));
  return 0;
}
