// Traces that cannot have happened, refused by the one check every reader goes through
// (mem/validate.h), each with its exact message; and what a real trace legitimately holds
// (ring-buffer frees, free_requested then free_completed, address reuse after a free) accepted.
#include "mem/validate.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "mem/input.h"
#include "mem/jsonl_reader.h"
#include "mem/snapshot_reader.h"
#include "mem/stats_reader.h"
#include "mem/timeline.h"

namespace plumb::mem {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_events_jsonl(text, "run.jsonl");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string snapshot_error(const std::string& events) {
  try {
    snapshot_from_json(nlohmann::json::parse("{\"segments\": [], \"device_traces\": [" + events + "]}"),
                       "snap.json", 0);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string ev(const char* action, uint64_t addr, uint64_t size, const std::string& extra = "") {
  return "{\"action\": \"" + std::string(action) + "\", \"addr\": " + std::to_string(addr) +
         ", \"size\": " + std::to_string(size) + extra + "}\n";
}

// The example: one 1 KiB block freed twice more after its free made a peak of 3 KiB.
TEST(ValidateTrace, AFreedBlockFreedAgainIsRefused) {
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("free_requested", 4096, 1024) +
                     ev("free_completed", 4096, 1024) + ev("free_requested", 4096, 1024) +
                     ev("free_completed", 4096, 1024)),
            "run.jsonl:4: event 3: free_requested of 0x1000 (1024 bytes): event 2 (line 3) freed it "
            "already and nothing allocated it since: a block is freed once per allocation");
  // Without free_completed events the request is the free.
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("free_requested", 4096, 1024) +
                     ev("free_requested", 4096, 1024)),
            "run.jsonl:3: event 2: free_requested of 0x1000 (1024 bytes): event 1 (line 2) freed it "
            "already and nothing allocated it since: a block is freed once per allocation");
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("free_requested", 4096, 1024) +
                     ev("free_completed", 4096, 1024) + ev("free_completed", 4096, 1024)),
            "run.jsonl:4: event 3: free_completed of 0x1000 (1024 bytes): event 2 (line 3) freed it "
            "already and nothing allocated it since: a block is freed once per allocation");
  // A block dropped by the ring buffer may be freed once, not twice.
  EXPECT_EQ(error_of(ev("free_requested", 4096, 1024) + ev("free_requested", 4096, 1024) +
                     ev("free_completed", 4096, 1024)),
            "run.jsonl:2: event 1: free_requested of 0x1000 (1024 bytes): event 0 (line 1) freed it "
            "already and nothing allocated it since: a block is freed once per allocation");
}

TEST(ValidateTrace, SnapshotMessagesNameTheEventIndex) {
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024) + "," + ev("free_requested", 4096, 1024) + "," +
                           ev("free_requested", 4096, 1024) + "]"),
            "snap.json: device_traces[0][2]: free_requested of 0x1000 (1024 bytes): event 1 freed it "
            "already and nothing allocated it since: a block is freed once per allocation");
}

// What a PyTorch trace holds: frees of blocks allocated before its ring buffer began (counted in
// the timeline's initial state), a request then its completion, addresses reused after the free,
// segments allocated and freed, several streams, blocks side by side.
TEST(ValidateTrace, RingBufferFreesAndReuseAreAccepted) {
  const Trace t = parse_events_jsonl(
      ev("free_requested", 8192, 512) + ev("free_completed", 8192, 512) +  // allocated before
      ev("free_completed", 16384, 512) +                                   // requested before
      ev("segment_alloc", 0, 2097152) + ev("alloc", 4096, 1024, ", \"stream\": 7") +
      ev("alloc", 5120, 1024) + ev("free_requested", 4096, 1024) + ev("free_completed", 4096, 1024) +
      ev("alloc", 4096, 512) + ev("alloc", 8192, 512) + ev("alloc", 16384, 512) +
      ev("free_requested", 4096, 512) + ev("free_completed", 4096, 512) + ev("segment_free", 0, 2097152),
      "run.jsonl");
  EXPECT_EQ(t.events.size(), 14u);
  const Timeline tl = build_timeline(t);
  EXPECT_EQ(tl.dropped_frees, 1u);
  EXPECT_EQ(tl.initial.allocated, 512u);
  EXPECT_EQ(tl.initial.active, 1024u);
}

TEST(ValidateTrace, AnAllocationAtALiveAddressIsRefused) {
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("alloc", 4096, 512)),
            "run.jsonl:2: event 1: alloc of 0x1000 (512 bytes): the block allocated there by event 0 "
            "(line 1) is still allocated (not freed)");
  // Freed but not yet completed: the allocator cannot hand it out again.
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("free_requested", 4096, 1024) + ev("alloc", 4096, 1024) +
                     ev("free_completed", 4096, 1024)),
            "run.jsonl:3: event 2: alloc of 0x1000 (1024 bytes): the block freed there by event 1 "
            "(line 2) still waits for its free_completed");
}

TEST(ValidateTrace, OverlappingBlocksAreRefused) {
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("alloc", 4608, 1024)),
            "run.jsonl:2: event 1: alloc of 0x1200 (1024 bytes) overlaps the block [0x1000, 0x1400) "
            "allocated by event 0 (line 1) and not freed");
  // The new block covers one that starts inside it.
  EXPECT_EQ(error_of(ev("alloc", 8192, 100) + ev("alloc", 4096, 8192)),
            "run.jsonl:2: event 1: alloc of 0x1000 (8192 bytes) overlaps the block [0x2000, 0x2064) "
            "allocated by event 0 (line 1) and not freed");
  // Side by side, and in a freed block's place: fine.
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024) + ev("alloc", 5120, 1024) + ev("alloc", 3072, 1024) +
                     ev("free_requested", 4096, 1024) + ev("alloc", 4096, 1024)),
            "no error");
}

// Many live blocks: the chunked ranges split and still find every neighbour.
TEST(ValidateTrace, OverlapFoundAmongThousandsOfLiveBlocks) {
  std::string text;
  for (uint64_t i = 0; i < 3000; ++i) text += ev("alloc", (i * 7919 % 3000) * 4096, 1024);
  EXPECT_EQ(error_of(text), "no error");
  EXPECT_EQ(error_of(text + ev("alloc", 1500 * 4096 + 1000, 100)),
            "run.jsonl:3001: event 3000: alloc of 0x5dc3e8 (100 bytes) overlaps the block "
            "[0x5dc000, 0x5dc400) allocated by event 1500 (line 1501) and not freed");
}

// Against a brute-force check: random allocations and frees over a small address range (so that
// blocks are often adjacent and often overlap), with enough live blocks that the sorted chunks
// split and merge. The first overlap is the event refused.
TEST(ValidateTrace, OverlapAgreesWithABruteForceCheck) {
  std::mt19937_64 rng(7);
  int refused = 0;
  for (int round = 0; round < 40; ++round) {
    Trace t;
    std::vector<std::pair<uint64_t, uint64_t>> live;  // [start, end)
    std::optional<size_t> first_overlap;
    while (t.events.size() < 4000 && !first_overlap) {
      if (!live.empty() && rng() % 3 == 0) {
        const size_t k = rng() % live.size();
        Event e;
        e.action = Action::kFreeRequested;
        e.addr = live[k].first;
        e.size = live[k].second - live[k].first;
        t.events.push_back(e);
        live.erase(live.begin() + static_cast<ptrdiff_t>(k));
        continue;
      }
      Event e;
      e.action = Action::kAlloc;
      e.addr = (rng() % 16384) * 256;
      e.size = 256 * (1 + rng() % (round % 2 == 0 ? 2 : 8));
      const bool overlaps = std::any_of(live.begin(), live.end(), [&](const auto& r) {
        return r.first < e.addr + e.size && e.addr < r.second;
      });
      if (overlaps && rng() % 500 != 0) continue;  // mostly valid traces, long enough to split chunks
      if (overlaps) first_overlap = t.events.size();
      live.emplace_back(e.addr, e.addr + e.size);
      t.events.push_back(e);
    }
    std::string error = "no error";
    try {
      validate_trace(t, "r");
    } catch (const Error& e) {
      error = e.what();
    }
    if (!first_overlap) {
      EXPECT_EQ(error, "no error") << "round " << round;
      continue;
    }
    ++refused;
    const std::string at = "r: device_traces[0][" + std::to_string(*first_overlap) + "]: ";
    EXPECT_EQ(error.substr(0, at.size()), at) << error;
    const bool named = error.find("overlaps the block") != std::string::npos ||
                       error.find("is still allocated") != std::string::npos;
    EXPECT_TRUE(named) << error;
  }
  EXPECT_GT(refused, 5);
  EXPECT_LT(refused, 40);
}

TEST(ValidateTrace, TimeRunningBackwardsIsRefused) {
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024, ", \"time_us\": 10") + ev("alloc", 8192, 1024, ", \"time_us\": 10") +
                     ev("alloc", 12288, 1024, ", \"time_us\": 5")),
            "run.jsonl:3: event 2: 'time_us' 5 is before event 1 (line 2)'s 10: time does not run backwards");
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024, ", \"time_us\": -1")), "run.jsonl:1: event 0: 'time_us' -1 is negative");
}

TEST(ValidateTrace, AbsurdSizesAreRefused) {
  EXPECT_EQ(error_of(ev("alloc", 4096, uint64_t{1} << 60)),
            "run.jsonl:1: event 0: 'size' 1152921504606846976 bytes is beyond any device's memory (at "
            "most 1125899906842624 bytes)");
  EXPECT_EQ(error_of("{\"action\": \"oom\", \"size\": 1024, \"device_free\": 1152921504606846976}\n"),
            "run.jsonl:1: event 0: 'device_free' 1152921504606846976 bytes is beyond any device's memory "
            "(at most 1125899906842624 bytes)");
  EXPECT_EQ(error_of(ev("alloc", UINT64_MAX - 511, 1024)),
            "run.jsonl:1: event 0: alloc of 0xfffffffffffffe00 (1024 bytes) passes the end of the 64-bit "
            "address space");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 0, \"total_size\": 1152921504606846976}}\n"),
            "run.jsonl: segment 0 at 0x0: 'total_size' 1152921504606846976 bytes is beyond any device's "
            "memory (at most 1125899906842624 bytes)");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 4096, \"total_size\": 2048, \"blocks\": [{\"address\": 4096, "
                     "\"size\": 1024}, {\"address\": 5120, \"size\": 1536}]}}\n"),
            "run.jsonl: segment 0 at 0x1000: block 1 (0x1400, 1536 bytes) lies outside the segment's 2048 bytes");
  EXPECT_EQ(error_of(ev("alloc", 4096, 0) + "{\"action\": \"alloc\", \"addr\": 1, \"size\": -5}\n"),
            "run.jsonl:2: 'size' must be a non-negative integer");
}

TEST(ValidateTrace, WronglyTypedFieldsNameTheField) {
  EXPECT_EQ(error_of("{\"action\": \"alloc\", \"addr\": 1, \"size\": \"12\"}\n"),
            "run.jsonl:1: 'size' must be a non-negative integer");
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024, ", \"stream\": \"x\"")), "run.jsonl:1: 'stream' must be an integer");
  EXPECT_EQ(error_of(ev("alloc", 4096, 1024, ", \"time_us\": \"3\"")),
            "run.jsonl:1: 'time_us' must be a number, not string");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 0, \"total_size\": 1, \"segment_type\": 3}}\n"),
            "run.jsonl:1: 'segment_type' must be a string, not number");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 0, \"total_size\": 1, \"is_expandable\": \"yes\"}}\n"),
            "run.jsonl:1: 'is_expandable' must be true or false, not string");
  EXPECT_EQ(error_of("{\"segment\": {\"address\": 0, \"total_size\": 1, \"blocks\": 3}}\n"),
            "run.jsonl:1: 'blocks' must be a list of {address, size, state}");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"stream\": \"x\"") + "]"),
            "snap.json: device_traces[0][0]: 'stream' must be an integer");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"time_us\": \"x\"") + "]"),
            "snap.json: device_traces[0][0]: 'time_us' must be a number");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"frames\": 3") + "]"),
            "snap.json: device_traces[0][0]: 'frames' must be a list of frames");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"frames\": [{\"name\": 3}]") + "]"),
            "snap.json: device_traces[0][0]: 'name' must be a string");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"frames\": [{\"line\": \"7\"}]") + "]"),
            "snap.json: device_traces[0][0]: 'line' must be an integer");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"frames\": [{\"line\": 7000000000}]") + "]"),
            "snap.json: device_traces[0][0]: a frame's 'line' 7000000000 is not a line number");
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"frames\": [\"f.py:3\"]") + "]"),
            "snap.json: device_traces[0][0]: each of 'frames' must be a dict {name, filename, line}");
  // None (null) is absent, as PyTorch writes optional fields.
  EXPECT_EQ(snapshot_error("[" + ev("alloc", 4096, 1024, ", \"time_us\": null, \"stream\": null") + "]"),
            "no error");
}

// Input read once: a pipe is read to its end, then detected and parsed from those bytes.
std::string fixture_bytes(const std::string& name) {
  std::ifstream in(PLUMB_TEST_FIXTURES "/mem/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

InputBytes through_pipe(const std::string& bytes) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    for (size_t at = 0; at < bytes.size();) {
      const ssize_t n = write(fds[1], bytes.data() + at, bytes.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  InputBytes in = load_input("/dev/fd/" + std::to_string(fds[0]));
  writer.join();
  close(fds[0]);
  return in;
}

TEST(InputBytes, EveryFormatThroughAPipe) {
  for (const char* file : {"healthy.pickle", "healthy.json", "leak.pickle"}) {
    SCOPED_TRACE(file);
    const Trace piped = read_trace(through_pipe(fixture_bytes(file)), 0);
    const Trace direct = read_trace(PLUMB_TEST_FIXTURES "/mem/" + std::string(file), 0);
    EXPECT_EQ(piped.events.size(), direct.events.size());
    EXPECT_EQ(piped.segments.size(), direct.segments.size());
  }
  const std::string jsonl = ev("alloc", 4096, 1024) + ev("free_requested", 4096, 1024);
  EXPECT_EQ(read_trace(through_pipe(jsonl), 0).events.size(), 2u);
  const InputBytes stats = through_pipe(fixture_bytes("memory_stats.jsonl"));
  EXPECT_TRUE(is_memory_stats(stats));
  EXPECT_FALSE(is_memory_stats(through_pipe(fixture_bytes("healthy.pickle"))));
  EXPECT_EQ(parse_memory_stats(stats).points.size(),
            read_memory_stats(PLUMB_TEST_FIXTURES "/mem/memory_stats.jsonl").points.size());
}

TEST(InputBytes, ADirectoryIsRefused) {
  try {
    read_trace("/", 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/: is a directory, not a file");
  }
  EXPECT_FALSE(is_memory_stats_file("/"));
}

// An endless device ends in a message at once, not in reading until memory runs out.
TEST(InputBytes, AnEndlessDeviceOfNulBytesIsRefusedAtOnce) {
  try {
    load_input("/dev/zero");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: starts with NUL bytes: not a snapshot, event lines or "
                           "memory_stats() dumps");
  }
}

}  // namespace
}  // namespace plumb::mem
