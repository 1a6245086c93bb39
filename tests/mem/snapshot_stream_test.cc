// The streaming snapshot readers (pickle.h "Streaming", snapshot_reader.h) against the readers
// that build the whole document first: the same Trace, field by field, or the same message — on
// every fixture, on pickles written here the way Python's pickler writes a snapshot, and on the
// layouts that make the streaming reader fall back to the whole tree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "common/error.h"
#include "mem/input.h"
#include "mem/pickle.h"
#include "mem/snapshot_reader.h"

namespace plumb::mem {
namespace {

const std::string kDir = PLUMB_TEST_FIXTURES "/mem/";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool same_time(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.has_time, b.has_time);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    const Event& x = a.events[i];
    const Event& y = b.events[i];
    ASSERT_TRUE(x.addr == y.addr && x.size == y.size && same_time(x.time_us, y.time_us) && x.stack == y.stack &&
                x.action == y.action && a.stream_of(x) == b.stream_of(y))
        << "event " << i;
  }
  EXPECT_EQ(a.streams, b.streams);
  ASSERT_EQ(a.device_free.size(), b.device_free.size());
  for (size_t i = 0; i < a.device_free.size(); ++i) {
    EXPECT_EQ(a.device_free[i].event, b.device_free[i].event);
    EXPECT_EQ(a.device_free[i].bytes, b.device_free[i].bytes);
  }
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    const Segment& x = a.segments[i];
    const Segment& y = b.segments[i];
    EXPECT_TRUE(x.addr == y.addr && x.total_size == y.total_size && x.stream == y.stream && x.large == y.large &&
                x.expandable == y.expandable && x.blocks.size() == y.blocks.size())
        << "segment " << i;
    for (size_t k = 0; k < x.blocks.size() && k < y.blocks.size(); ++k) {
      EXPECT_TRUE(x.blocks[k].addr == y.blocks[k].addr && x.blocks[k].size == y.blocks[k].size &&
                  x.blocks[k].requested_size == y.blocks[k].requested_size && x.blocks[k].state == y.blocks[k].state)
          << "segment " << i << " block " << k;
    }
  }
  ASSERT_EQ(a.frames.size(), b.frames.size());
  for (size_t i = 0; i < a.frames.size(); ++i) {
    EXPECT_EQ(a.frames[i].name, b.frames[i].name);
    EXPECT_EQ(a.frames[i].filename, b.frames[i].filename);
    EXPECT_EQ(a.frames[i].line, b.frames[i].line);
  }
  EXPECT_EQ(a.stacks, b.stacks);
  EXPECT_EQ(a.allocator_settings, b.allocator_settings);
  EXPECT_EQ(a.step_marks, b.step_marks);
}

// What each reader says of the same bytes: the trace, or the message.
struct Outcome {
  std::optional<Trace> trace;
  std::string error;
};

template <class F>
Outcome outcome(F&& read) {
  try {
    return {read(), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

// The streaming reader with and without its helper threads (prefaulting, validating on a thread
// of its own: they start from snapshot_reader.h's kSnapshotHelpersFrom, 0 here) against the tree.
void expect_same_pickle(const std::string& bytes, const std::string& name = "snap.pickle") {
  const InputBytes input = input_from_string(bytes, name);
  const Outcome tree = outcome([&] { return snapshot_from_pickle_tree(input, 0); });
  for (const size_t helpers_from : {kSnapshotHelpersFrom, size_t{0}}) {
    SCOPED_TRACE(helpers_from);
    const Outcome streamed = outcome([&] { return snapshot_from_pickle(input, 0, helpers_from); });
    EXPECT_EQ(streamed.error, tree.error);
    ASSERT_EQ(streamed.trace.has_value(), tree.trace.has_value()) << streamed.error << tree.error;
    if (streamed.trace) expect_same(*streamed.trace, *tree.trace);
  }
}

// Writes a snapshot as Python's pickler (protocol 4) does: every str, list and dict memoized on
// first sight and fetched from the memo after; lists and dicts of more than one item in batches
// of 1000 between MARK and APPENDS/SETITEMS, a batch of one as APPEND/SETITEM.
class SnapshotWriter {
 public:
  SnapshotWriter() { out_ = "\x80\x04"; }

  void str(const std::string& s) {
    if (const auto it = strs_.find(s); it != strs_.end()) return get(it->second);
    out_ += '\x8c';
    out_ += static_cast<char>(s.size());
    out_ += s;
    strs_[s] = memoize();
  }
  void integer(uint64_t v) {
    out_ += '\x8a';  // LONG1, 9 bytes: any uint64 stays positive
    out_ += '\x09';
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
    out_ += '\0';
  }
  // As Python's pickler writes an int: BININT1, BININT2, BININT, else LONG1 of the fewest bytes
  // (two's complement, little-endian).
  void pyint(int64_t v) {
    if (v >= 0 && v <= 0xff) {
      out_ += 'K';
      out_ += static_cast<char>(v);
    } else if (v >= 0 && v <= 0xffff) {
      out_ += 'M';
      for (int i = 0; i < 2; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
    } else if (v >= -0x80000000LL && v <= 0x7fffffff) {
      out_ += 'J';
      for (int i = 0; i < 4; ++i) out_ += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
    } else {
      std::string bytes;
      for (int i = 0; i < 8; ++i) bytes += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
      const char fill = v < 0 ? '\xff' : '\0';
      while (bytes.size() > 1 && bytes.back() == fill && ((bytes[bytes.size() - 2] ^ fill) & 0x80) == 0) bytes.pop_back();
      out_ += '\x8a';
      out_ += static_cast<char>(bytes.size());
      out_ += bytes;
    }
  }
  void pyfloat(double d) {
    uint64_t bits = 0;
    std::memcpy(&bits, &d, 8);
    out_ += 'G';
    for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  // LONG_BINPUT: the top of the stack into memo entry `key` (which may be taken already).
  void put(int key) {
    out_ += 'r';
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((key >> (8 * i)) & 0xff);
  }
  int key_of(const std::string& s) const { return strs_.at(s); }
  void get(int key) {
    out_ += 'j';  // LONG_BINGET
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((key >> (8 * i)) & 0xff);
  }
  int memoize() {
    out_ += '\x94';
    return memo_++;
  }
  int empty_dict() {
    out_ += '}';
    return memoize();
  }
  int empty_list() {
    out_ += ']';
    return memoize();
  }
  void raw(const std::string& ops) { out_ += ops; }
  // Protocol 4's FRAME (an 8-byte length) wherever an opcode ends: every FRAME(0) after an
  // event's 'addr' key when set.
  void frame_after_addr(bool on) { frame_after_addr_ = on; }
  // A list of `n` items, each written by item(i), batched as the pickler does.
  template <class F>
  void items(size_t n, F&& item) {
    for (size_t first = 0; first < n; first += 1000) {
      const size_t count = std::min<size_t>(1000, n - first);
      if (count > 1) out_ += '(';
      for (size_t i = first; i < first + count; ++i) item(i);
      out_ += count > 1 ? 'e' : 'a';
    }
  }
  // One frames list per call site, shared by its events as PyTorch's snapshot shares it.
  void frames(int site) {
    if (const auto it = frames_.find(site); it != frames_.end()) return get(it->second);
    frames_[site] = empty_list();
    empty_dict();
    out_ += '(';
    str("filename");
    str("site" + std::to_string(site) + ".py");
    str("line");
    integer(static_cast<uint64_t>(site));
    str("name");
    str("f" + std::to_string(site));
    out_ += 'u';
    out_ += 'a';
  }
  void event(const std::string& action, uint64_t addr, uint64_t size, uint64_t time, int site) {
    last_event_ = empty_dict();
    out_ += '(';
    str("action");
    str(action);
    str("addr");
    if (frame_after_addr_) out_ += std::string("\x95\0\0\0\0\0\0\0\0", 9);
    integer(addr);
    str("size");
    integer(size);
    str("stream");
    integer(0);
    str("time_us");
    integer(time);
    str("frames");
    frames(site);
    out_ += 'u';
  }
  int last_event() const { return last_event_; }
  std::string finish() { return out_ + '.'; }

 private:
  std::string out_;
  int memo_ = 0;
  int last_event_ = -1;
  bool frame_after_addr_ = false;
  std::map<std::string, int> strs_;
  std::map<int, int> frames_;
};

// A training-like trace: a segment, then alloc / free_requested / free_completed of one block,
// the call site changing every `sites_every` events (new frames lists in later batches).
void write_events(SnapshotWriter& w, size_t n, size_t sites_every) {
  w.items(n, [&](size_t i) {
    if (i == 0) return w.event("segment_alloc", 0, 2 << 20, 1000, 0);
    const char* actions[] = {"alloc", "free_requested", "free_completed"};
    w.event(actions[(i - 1) % 3], 4096, 512, 1000 + i, static_cast<int>(i / sites_every));
  });
}

// {"segments": [], "device_traces": [[events]], "allocator_settings": {...}} written whole;
// `between` goes after the device_traces value, inside the root's MARK.
std::string snapshot(size_t n, size_t sites_every, const std::function<void(SnapshotWriter&)>& between = {}) {
  SnapshotWriter w;
  w.empty_dict();
  w.raw("(");
  w.str("segments");
  w.empty_list();
  w.str("device_traces");
  w.empty_list();
  w.empty_list();
  write_events(w, n, sites_every);
  w.raw("a");
  if (between) between(w);
  w.str("allocator_settings");
  w.empty_dict();
  w.str("expandable_segments");
  w.raw("\x89s");  // False, SETITEM
  w.raw("u");
  return w.finish();
}

class CountingSink : public ListSink {
 public:
  bool wants(std::string_view key, size_t index) const override { return key == "device_traces" && index == 0; }
  void item(Value v, size_t index) override {
    EXPECT_EQ(index, items);
    ++items;
    if (v.is(PickleKind::kDict) && v.get("action")) ++dicts;
  }
  void forget_nodes_from(NodeId) override { ++forgets; }
  size_t items = 0, dicts = 0, forgets = 0;
};

// Why the streaming reader gave up on `bytes` ("" when it did not).
std::string fallback_reason(const std::string& bytes) {
  CountingSink sink;
  StreamedList list;
  try {
    parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
  } catch (const PickleStreamFallback& f) {
    return f.why;
  }
  return "";
}

TEST(SnapshotStream, EveryFixtureGivesTheTreeReadersTrace) {
  for (const char* f : {"healthy.pickle", "healthy_p2.pickle", "healthy_p5.pickle", "leak.pickle", "npu.pickle",
                        "ringbuffer.pickle", "spike_oom.pickle", "true_peak_oom.pickle", "fragmented_oom.pickle"}) {
    SCOPED_TRACE(f);
    const std::string bytes = file_bytes(kDir + f);
    const InputBytes input = input_from_string(bytes, f);
    expect_same(snapshot_from_pickle(input, 0), snapshot_from_pickle_tree(input, 0));
    expect_same(snapshot_from_pickle(input, 0, 0), snapshot_from_pickle_tree(input, 0));
    expect_same(read_trace(kDir + f, 0), snapshot_from_pickle_tree(load_input(kDir + f), 0));
  }
  const InputBytes json = load_input(kDir + "healthy.json");
  expect_same(read_trace(json, 0), *snapshot_from_json_tree(json, 0));
}

// The point of streaming: the document keeps the keys, strings and call stacks, not the events.
TEST(SnapshotStream, TheDocumentKeepsNoEvents) {
  for (const size_t n : {size_t{5000}, size_t{4001}, size_t{50000}}) {
    const std::string bytes = snapshot(n, 100000);
    CountingSink sink;
    StreamedList list;
    const PickleDoc doc = parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
    EXPECT_EQ(sink.items, n);
    EXPECT_EQ(sink.dicts, n);
    EXPECT_TRUE(list.chosen());
    EXPECT_EQ(list.items, n);
    EXPECT_LT(doc.node_count(), 100u) << n;  // a whole tree: about 15 per event
    EXPECT_EQ(doc.root().get("device_traces")->items().begin().operator*().id(), list.list);
  }
  const std::string bytes = snapshot(5000, 100000);
  EXPECT_GT(parse_pickle(bytes, "x").node_count(), 5000u * 4);  // the tree: 5 per event here
}

TEST(SnapshotStream, NewCallStacksInLaterBatchesSurviveTheirBatch) {
  // A new frames list every 700 events: first seen in one batch, fetched from the memo in the next.
  expect_same_pickle(snapshot(6000, 700));
  const std::string bytes = snapshot(6000, 700);
  const Trace t = snapshot_from_pickle(input_from_string(bytes, "x"), 0);
  EXPECT_EQ(t.stacks.size(), 9u);
  EXPECT_EQ(t.frames[t.stacks[t.events[5999].stack][0]].filename, "site8.py");
}

TEST(SnapshotStream, SingleEventListsAndSmallBatches) {
  for (const size_t n : {size_t{1}, size_t{2}, size_t{1000}, size_t{1001}, size_t{2002}}) {
    SCOPED_TRACE(n);
    expect_same_pickle(snapshot(n, 3));
  }
}

// An item fetched from the memo after its batch: its nodes are gone, so the reader falls back,
// and the result is the tree's.
TEST(SnapshotStream, AMemoGetOfAStreamedItemFallsBack) {
  // Memo keys: the root 0, 'segments' 1, its list 2, 'device_traces' 3, the outer list 4, the
  // events list 5, the first event 6.
  const std::string bytes = snapshot(3000, 100000, [&](SnapshotWriter& w) {
    w.str("again");
    w.get(6);
  });
  EXPECT_EQ(fallback_reason(bytes), "a memo get of a streamed item");
  expect_same_pickle(bytes);
}

TEST(SnapshotStream, AMemoGetOfTheStreamedListFallsBack) {
  const std::string bytes = snapshot(3000, 100000, [](SnapshotWriter& w) {
    w.str("copy");
    w.get(5);  // the events list (memo keys as above)
  });
  EXPECT_EQ(fallback_reason(bytes), "a memo get of the streamed list");
  expect_same_pickle(bytes);
}

// "device_traces" twice: Python keeps the last, so the streamed list is not the document's.
TEST(SnapshotStream, ARepeatedKeyKeepsTheLastList) {
  const std::string bytes = snapshot(3000, 100000, [](SnapshotWriter& w) {
    w.str("device_traces");
    w.empty_list();
    w.empty_list();
    write_events(w, 5, 2);
    w.raw("a");
  });
  expect_same_pickle(bytes);
  const Trace t = snapshot_from_pickle(input_from_string(bytes, "x"), 0);
  EXPECT_EQ(t.events.size(), 5u);
}

TEST(SnapshotStream, TheFirstBadEventIsTheTreesMessage) {
  SnapshotWriter w;
  w.empty_dict();
  w.raw("(");
  w.str("segments");
  w.empty_list();
  w.str("device_traces");
  w.empty_list();
  w.empty_list();
  w.items(2500, [&](size_t i) {
    if (i == 1700 || i == 2100) return w.event("allocate", 4096, 512, 1000 + i, 1);
    w.event(i == 0 ? "segment_alloc" : "alloc", i == 0 ? 0 : 4096 + 512 * i, 512, 1000 + i, 1);
  });
  w.raw("au");
  const std::string bytes = w.finish();
  const InputBytes input = input_from_string(bytes, "bad.pickle");
  try {
    snapshot_from_pickle(input, 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bad.pickle: device_traces[0][1700]: unknown action 'allocate'");
  }
  expect_same_pickle(bytes, "bad.pickle");
  // A pickle that breaks after the bad event: the pickle's own message first, as the tree reader.
  const std::string cut = bytes.substr(0, bytes.size() - 3);
  expect_same_pickle(cut, "cut.pickle");
  EXPECT_EQ(outcome([&] { return snapshot_from_pickle(input_from_string(cut, "cut.pickle"), 0); }).error,
            "cut.pickle: truncated at byte " + std::to_string(cut.size()) + ": the data ends before the STOP opcode");
}

class FastCountingSink : public CountingSink {
 public:
  void item(Value, size_t index) override {
    EXPECT_EQ(index, items + flat);
    ++items;
  }
  std::vector<std::string_view> fast_keys() const override { return {"action", "addr", "size", "time_us"}; }
  void flat_item(const PickleArena*, const FlatValue*, size_t index) override {
    EXPECT_EQ(index, items + flat);
    ++flat;
  }
  size_t flat = 0;
};

// {"segments": [], "device_traces": [[n events, each written by event(w, i)]]}.
std::string trace_of(size_t n, const std::function<void(SnapshotWriter&, size_t)>& event,
                     const std::function<void(SnapshotWriter&)>& before = {}) {
  SnapshotWriter w;
  if (before) before(w);
  w.empty_dict();
  w.raw("(");
  w.str("segments");
  w.empty_list();
  w.str("device_traces");
  w.empty_list();
  w.empty_list();
  w.items(n, [&](size_t i) { event(w, i); });
  w.raw("au");
  return w.finish();
}

// Protocol 4 cuts the stream into frames wherever an opcode ends, inside events too (one event
// in about 1,100 of bench/make_big_snapshot.py's; it used to send the rest of its batch of 1,000
// the slow way): the fast lane steps over them.
TEST(SnapshotStream, AFrameInsideAnEventKeepsTheFastLane) {
  const std::string bytes = trace_of(
      5000, [](SnapshotWriter& w, size_t i) { w.event(i % 2 == 0 ? "alloc" : "free_completed", 4096, 512, i, 0); },
      [](SnapshotWriter& w) { w.frame_after_addr(true); });
  FastCountingSink sink;
  StreamedList list;
  parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
  EXPECT_EQ(sink.items + sink.flat, 5000u);
  // All but the first batch: its first events bring the keys, the actions and the frames, and
  // the lane does not take an item ahead of one waiting for its APPENDS.
  EXPECT_EQ(sink.flat, 4000u);
  expect_same_pickle(bytes);
}

// An event as Python writes it: ints of the fewest bytes, the time a float.
void py_event(SnapshotWriter& w, const char* action, int64_t addr, int64_t size, double time, int site,
              bool int_time = false) {
  w.empty_dict();
  w.raw("(");
  w.str("action");
  w.str(action);
  w.str("addr");
  w.pyint(addr);
  w.str("size");
  w.pyint(size);
  w.str("stream");
  w.pyint(0);
  w.str("time_us");
  if (int_time) {
    w.pyint(static_cast<int64_t>(time));
  } else {
    w.pyfloat(time);
  }
  w.str("frames");
  w.frames(site);
  w.raw("u");
}

// Blocks of every size class of the pickler's ints (BININT1 to a 6-byte LONG1), one at a time,
// at an address of an 8-byte LONG1.
const int64_t kSizes[] = {0, 255, 256, 65535, 65536, 0x7fffffff, 0x80000000LL, 1LL << 40};
constexpr int64_t kBase = 0x7fff000000000000;

void py_events(SnapshotWriter& w, size_t i) {
  if (i == 0) return py_event(w, "segment_alloc", kBase, 1LL << 41, 1000, 0);
  const char* actions[] = {"alloc", "free_requested", "free_completed"};
  const int64_t size = kSizes[((i - 1) / 3) % std::size(kSizes)];
  py_event(w, actions[(i - 1) % 3], kBase, size, 1000.5 + static_cast<double>(i), 1);
}

size_t events_read(const std::string& bytes) {
  return snapshot_from_pickle(input_from_string(bytes, "snap.pickle"), 0, 0).events.size();
}

// The fast lane's shape (pickle.h): after the first item of a batch, the events with the keys of
// the one before are read by their key bytes, and the trace is the tree reader's.
TEST(SnapshotStream, EventsOfTheSameKeysAreReadByTheirShape) {
  const std::string bytes = trace_of(5000, py_events);
  FastCountingSink sink;
  StreamedList list;
  parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
  EXPECT_EQ(sink.items + sink.flat, 5000u);
  // The first batch waits for its APPENDS; after each dropped region one item takes the general
  // way (the shape is forgotten with the region's node ids); the last items are too near the end.
  EXPECT_GT(list.shaped, 3900u);
  EXPECT_LT(list.shaped, 4000u);
  EXPECT_EQ(events_read(bytes), 5000u);
  expect_same_pickle(bytes);
}

// Items of another shape among them: keys in another order, an extra key, a FRAME inside, a LONG1
// of 9 bytes, a big int, a nested value. Each reads as the tree reader reads it.
TEST(SnapshotStream, ItemsOfAnotherShapeAmongThemReadTheSame) {
  const std::string bytes = trace_of(5000, [](SnapshotWriter& w, size_t i) {
    if (i == 0 || i % 7 != 0) return py_events(w, i);
    w.empty_dict();  // then py_events' item: two items in this place of the list
    w.raw("(");
    if (i % 5 == 0) {
      w.str("frames");
      w.frames(2);
    }
    w.str("action");
    w.str("alloc");
    w.str("size");
    if (i % 11 == 0) w.raw(std::string("\x95\0\0\0\0\0\0\0\0", 9));
    if (i % 13 == 0) {
      w.integer(512);  // 9 bytes
    } else {
      w.pyint(512);
    }
    w.str("addr");
    w.pyint(kBase + (1LL << 40) + (static_cast<int64_t>(i) << 12));
    if (i % 3 == 0) {
      w.str("device_free");
      w.pyint(1 << 30);
    }
    w.str("time_us");
    w.pyint(1000 + static_cast<int64_t>(i));
    w.raw("u");
    py_events(w, i);
  });
  StreamedList list;
  FastCountingSink sink;
  parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
  EXPECT_EQ(sink.items + sink.flat, 5714u);
  EXPECT_GT(list.shaped, 2000u);
  EXPECT_EQ(events_read(bytes), 5714u);
  expect_same_pickle(bytes);
}

// A memo entry a key came from is stored over (a str put into the entry of "time_us" and popped,
// between two items): from then on the same key bytes fetch "size", so the shape recorded before
// must not stand. Later events have two size keys (the last stands) and no time.
TEST(SnapshotStream, AKeysMemoEntryStoredOverForgetsTheShape) {
  const std::string bytes = trace_of(3000, [](SnapshotWriter& w, size_t i) {
    if (i < 1500) return py_events(w, i);
    if (i == 1500) {
      w.raw(std::string("\x8c\x04size", 6));  // SHORT_BINUNICODE 'size', a str of its own
      w.put(w.key_of("time_us"));
      w.raw("0");  // POP
    }
    py_event(w, "alloc", kBase + (1LL << 40) + static_cast<int64_t>(i << 16), 512, 7000.0 + static_cast<double>(i), 1, true);
  });
  const Trace t = snapshot_from_pickle(input_from_string(bytes, "snap.pickle"), 0, 0);
  ASSERT_EQ(t.events.size(), 3000u);
  EXPECT_EQ(t.events[1499].size, kSizes[(1498 / 3) % std::size(kSizes)]);
  EXPECT_EQ(t.events[1500].size, 8500u);  // the time, under the second "size"
  EXPECT_EQ(t.events[2999].size, 9999u);
  StreamedList list;
  FastCountingSink sink;
  parse_pickle_streaming(input_from_string(bytes, "x"), sink, list);
  EXPECT_EQ(sink.flat, 2000u);
  EXPECT_GT(list.shaped, 1950u);
  expect_same_pickle(bytes);
}

// A mapped file of more than two InputWindow steps (16 MiB): the window's page calls run on a
// thread of their own (mem/input.h) while the reader goes; the trace is that of the same bytes
// read from memory.
TEST(SnapshotStream, AMappedFileOfManyStepsReadsAsTheBytesInMemory) {
  const std::string bytes = trace_of(330000, py_events);
  ASSERT_GT(bytes.size(), 2 * InputWindow::kStep + InputWindow::kStep / 2);
  const std::string path = ::testing::TempDir() + "/plumb-many-steps.pickle";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const InputBytes mapped = load_input(path);
  ASSERT_TRUE(mapped.mapped());
  const Trace from_file = snapshot_from_pickle(mapped, 0);
  const Trace from_memory = snapshot_from_pickle_tree(input_from_string(bytes, path), 0);
  ASSERT_EQ(from_file.events.size(), 330000u);
  expect_same(from_file, from_memory);
  std::remove(path.c_str());
}

std::string training_trace(size_t n, const std::function<bool(SnapshotWriter&, size_t)>& instead = {}) {
  return trace_of(n, [&](SnapshotWriter& w, size_t i) {
    if (instead && instead(w, i)) return;
    if (i == 0) return w.event("segment_alloc", 0, 2 << 20, 1000, 0);
    const char* actions[] = {"alloc", "free_requested", "free_completed"};
    w.event(actions[(i - 1) % 3], 4096, 512, 1000 + i, 1);
  });
}

std::string streamed_error(const std::string& bytes) {
  return outcome([&] { return snapshot_from_pickle(input_from_string(bytes, "snap.pickle"), 0, 0); }).error;
}

// StreamValidator (validate.h): the checks on a thread of their own while the events come, with
// the plain pass's messages, also where its speculation (the trace has free_completed events)
// does not hold and where the events outgrow what the reader reserved.
TEST(SnapshotStream, ValidationOnItsOwnThreadSaysWhatThePlainPassSays) {
  expect_same_pickle(training_trace(40000));
  const std::string overlap = training_trace(40000, [](SnapshotWriter& w, size_t i) {
    if (i != 35003) return false;
    w.event("alloc", 4096 + 256, 512, 1000 + i, 1);
    return true;
  });
  expect_same_pickle(overlap);
  EXPECT_EQ(streamed_error(overlap),
            "snap.pickle: device_traces[0][35003]: alloc of 0x1100 (512 bytes) overlaps the block "
            "[0x1000, 0x1200) allocated by event 35002 and not freed");
  const std::string backwards = training_trace(40000, [](SnapshotWriter& w, size_t i) {
    if (i != 20000) return false;
    w.event("segment_alloc", 1 << 30, 2 << 20, 5, 1);
    return true;
  });
  expect_same_pickle(backwards);
  EXPECT_EQ(streamed_error(backwards),
            "snap.pickle: device_traces[0][20000]: 'time_us' 5 is before event 19999's 20999: time does not "
            "run backwards");
  // No free_completed: a free_requested is the free. The thread, speculating, would refuse the
  // second alloc ("still waits for its free_completed"); the trace is valid.
  const auto no_completions = [](size_t bad) {
    return trace_of(30000, [bad](SnapshotWriter& w, size_t i) {
      w.event(i % 2 == 0 || i == bad ? "alloc" : "free_requested", 4096, 512, 1000 + i, 1);
    });
  };
  expect_same_pickle(no_completions(0));
  EXPECT_EQ(streamed_error(no_completions(0)), "");
  expect_same_pickle(no_completions(25001));
  EXPECT_EQ(streamed_error(no_completions(25001)),
            "snap.pickle: device_traces[0][25001]: alloc of 0x1000 (512 bytes): the block allocated there "
            "by event 25000 is still allocated (not freed)");
  // Events of 29 bytes, fewer than the reader reserves for: it abandons the thread before the
  // events move, and the plain pass runs.
  const auto small = [](bool twice) {
    return trace_of(20000, [twice](SnapshotWriter& w, size_t i) {
      w.empty_dict();
      w.raw("(");
      w.str("action");
      w.str("free_completed");
      w.str("addr");
      const size_t addr = twice && i == 19999 ? 512 : 512 * (i + 1) % 65536 + (i / 128);
      w.raw(std::string("M") + static_cast<char>(addr & 0xff) + static_cast<char>(addr >> 8));
      w.str("size");
      w.raw("K\x01u");
    });
  };
  expect_same_pickle(small(false));
  EXPECT_GT(static_cast<double>(snapshot_from_pickle(input_from_string(small(false), "s"), 0, 0).events.size()),
            static_cast<double>(small(false).size()) / 32 + 1024);
  expect_same_pickle(small(true));
  EXPECT_NE(streamed_error(small(true)).find("freed it already"), std::string::npos) << streamed_error(small(true));
}

std::string json_snapshot(const std::string& events, const std::string& more = "") {
  return "{\"segments\": [], \"device_traces\": [" + events + "]" + more + "}";
}

Outcome json_outcome(const std::string& text, bool streamed) {
  const InputBytes input = input_from_string(text, "snap.json");
  if (streamed) return outcome([&] { return read_trace(input, 0); });
  return outcome([&]() -> Trace {
    auto t = snapshot_from_json_tree(input, 0);
    if (!t) throw Error("not JSON");
    return *t;
  });
}

void expect_same_json(const std::string& text) {
  const Outcome s = json_outcome(text, true);
  const Outcome t = json_outcome(text, false);
  EXPECT_EQ(s.error, t.error);
  ASSERT_EQ(s.trace.has_value(), t.trace.has_value());
  if (s.trace) expect_same(*s.trace, *t.trace);
}

TEST(SnapshotStream, JsonEventsStreamToTheSameTrace) {
  const std::string seg = R"({"action": "segment_alloc", "addr": 0, "size": 2097152, "time_us": 1})";
  const std::string alloc = R"({"action": "alloc", "addr": 0, "size": 512, "stream": 7, "time_us": 2,
      "frames": [{"name": "f", "filename": "a.py", "line": 3}, {"name": "g", "filename": "b.py", "line": 4}]})";
  const std::string oom = R"({"action": "oom", "size": 4194304, "device_free": 1024, "time_us": 3})";
  expect_same_json(json_snapshot("[" + seg + ", " + alloc + ", " + oom + "]"));
  expect_same_json(json_snapshot("[], [" + seg + ", " + alloc + "]"));             // device 1's list too
  expect_same_json(json_snapshot("[" + seg + ", 7, " + alloc + "]"));              // an item not a dict
  expect_same_json(json_snapshot("[" + seg + ", {\"action\": \"x\"}]"));          // a bad event
  expect_same_json(json_snapshot("[" + seg + "]", ", \"device_traces\": [[" + alloc + "]]"));  // twice
  expect_same_json(json_snapshot("[" + seg + ", " + alloc + "]", ", \"allocator_settings\": {\"b\": 1, \"a\": [2]}"));
  EXPECT_EQ(json_outcome(json_snapshot("[" + seg + ", " + alloc) + "]", true).error,
            "snap.json: not a memory trace: neither a pickle, JSON, nor plumb.mem-events/1 lines");
  const Outcome s = json_outcome(json_snapshot("[" + seg + ", " + alloc + ", " + oom + "]"), true);
  ASSERT_TRUE(s.trace);
  EXPECT_EQ(s.trace->stream_of(s.trace->events[1]), 7);
  EXPECT_EQ(s.trace->device_free_of(2), 1024u);
}

}  // namespace
}  // namespace plumb::mem
