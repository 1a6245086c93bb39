// Reading trace text (plain, gzip, multi-member gzip, damaged) and the Chrome-trace scanner on
// JSON written inline: exact timestamps from decimal text, members in any order, and the one-line
// errors with file and byte offset.
#include "step/chrome_trace.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <sys/stat.h>

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "step/json_text.h"
#include "step/trace_input.h"
#include "support/subprocess.h"

namespace plumb::step {
namespace {

// `text` as one gzip member (zlib's deflate with the gzip wrapper).
std::string gzip(const std::string& text) {
  z_stream stream{};
  constexpr int kGzipWindowBits = 15 + 16;
  constexpr int kMemLevel = 8;
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits, kMemLevel,
                         Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

struct Scanned {
  ChromeTraceHeader header;
  std::vector<ChromeEvent> events;
  std::vector<std::string> names;  // the views die with the scan
  std::vector<std::string> collectives;
  std::vector<std::string> ts_texts;
};

Scanned scan(const std::string& json, const std::string& source = "t.json") {
  TraceText text = trace_text_from_bytes(json, source);
  Scanned out;
  out.header = scan_chrome_trace(text, [&](const ChromeEvent& event) {
    out.events.push_back(event);
    out.names.emplace_back(event.name);
    out.collectives.emplace_back(event.args.collective_name);
    out.ts_texts.emplace_back(event.ts.text);
  });
  return out;
}

std::string scan_error(const std::string& json, const std::string& source = "t.json") {
  return test::error_message([&] { scan(json, source); });
}

TEST(TraceInput, ReadsPlainAndGzipTheSameAndPadsWithZeros) {
  const std::string dir = test::temp_dir("trace-input");
  const std::string json = R"({"traceEvents": []})";
  test::write_file(dir + "/plain.json", json);
  test::write_file(dir + "/packed.json", gzip(json));  // gzip by its bytes, not its name
  for (const char* name : {"/plain.json", "/packed.json"}) {
    TraceText text = read_trace_text(dir + name);
    EXPECT_EQ(text.view(), json) << name;
    EXPECT_EQ(text.source, dir + name);
    for (size_t i = 0; i < kTracePadding; ++i) ASSERT_EQ(text.data[text.size + i], '\0');
  }
  EXPECT_EQ(read_trace_text(dir + "/packed.json").compressed_size, gzip(json).size());
  EXPECT_EQ(read_trace_text(dir + "/plain.json").compressed_size, json.size());
}

TEST(TraceInput, ReadsEveryMemberOfAMultiMemberGzipAndIgnoresZeroPadding) {
  const std::string dir = test::temp_dir("trace-input-members");
  // Large enough that the trailer's length (the last member's) is far too small a hint.
  std::string first = R"({"traceEvents": [)" + std::string(300000, ' ');
  std::string second = R"({"ph": "X"}]})";
  test::write_file(dir + "/two.json.gz", gzip(first) + gzip(second) + std::string(16, '\0'));
  EXPECT_EQ(read_trace_text(dir + "/two.json.gz").view(), first + second);
}

TEST(TraceInput, ReadsGzipFromAPipe) {
  // Not seekable: the buffer grows instead of inflating twice.
  const std::string dir = test::temp_dir("trace-input-pipe");
  const std::string fifo = dir + "/rank-0.json.gz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = R"({"traceEvents": [)" + std::string(500000, ' ') + "]}";
  std::thread writer([&] { test::write_file(fifo, gzip(text) + gzip("\n")); });
  TraceText read = read_trace_text(fifo);
  writer.join();
  EXPECT_EQ(read.view(), text + "\n");
}

TEST(TraceInput, NamesTheFileAndOffsetOfDamagedInput) {
  const std::string dir = test::temp_dir("trace-input-bad");
  const std::string packed = gzip(R"({"traceEvents": [)" + std::string(200000, ' ') + "]}");
  ASSERT_GT(packed.size(), 100U);
  // Cut right after the 10-byte gzip header: nothing inflated yet.
  test::write_file(dir + "/header.json.gz", packed.substr(0, 10));
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir + "/header.json.gz"); }),
            dir + "/header.json.gz: the gzip stream ends at byte 10 (after 0 bytes of text) "
                  "without its end marker: the file is truncated");
  test::write_file(dir + "/cut.json.gz", packed.substr(0, packed.size() - 5));
  std::string cut = test::error_message([&] { read_trace_text(dir + "/cut.json.gz"); });
  EXPECT_EQ(cut.substr(0, cut.find('(')),
            dir + "/cut.json.gz: the gzip stream ends at byte " +
                std::to_string(packed.size() - 5) + " ");
  EXPECT_TRUE(cut.ends_with("without its end marker: the file is truncated")) << cut;
  // A wrong CRC-32 in the trailer (bytes size-8 .. size-5).
  std::string bad_crc = packed;
  bad_crc[bad_crc.size() - 8] ^= 0x5a;
  test::write_file(dir + "/crc.json.gz", bad_crc);
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir + "/crc.json.gz"); }),
            dir + "/crc.json.gz: byte " + std::to_string(packed.size() - 4) +
                ": corrupt gzip data (not a valid deflate stream or checksum); the file is "
                "damaged");
  // Not gzip after the end of the stream.
  test::write_file(dir + "/tail.json.gz", packed + "junk");
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir + "/tail.json.gz"); }),
            dir + "/tail.json.gz: byte " + std::to_string(packed.size()) +
                ": data after the end of the gzip stream that is not gzip; the file is damaged");
}

TEST(TraceInput, RefusesNulBytesDirectoriesAndMissingFiles) {
  const std::string dir = test::temp_dir("trace-input-nul");
  test::write_file(dir + "/nul.json", std::string("{\"traceEvents\": [\0]}", 20));
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir + "/nul.json"); }),
            dir + "/nul.json: byte 17: a NUL byte; expected JSON text (is this a binary file?)");
  EXPECT_EQ(test::error_message([&] {
              trace_text_from_bytes(gzip(std::string("[\0]", 3)), "z.json.gz");
            }),
            "z.json.gz: byte 1: a NUL byte; expected JSON text (is this a binary file?)");
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir); }),
            dir + ": is a directory; expected a trace file");
  EXPECT_EQ(test::error_message([&] { read_trace_text(dir + "/none.json"); }),
            dir + "/none.json: cannot read: No such file or directory");
}

// The reference: the splitter byte by byte, as plainly as it can be written.
Split reference_split(std::string_view text, size_t begin, size_t want) {
  int depth = 0;
  for (size_t at = begin; at < text.size(); ++at) {
    char c = text[at];
    if (c == '"') {
      for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] == '\\') ++at;
      }
      if (at >= text.size()) return {Stop::kEndInString, text.size()};
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return {c == ']' ? Stop::kArrayEnd : Stop::kMalformed, at};
      if (--depth == 0 && at + 1 - begin >= want) return {Stop::kCut, at + 1};
    }
  }
  return {Stop::kEnd, text.size()};
}

// The 64-byte block splitter against the reference on random texts of the characters that
// matter (quotes, backslashes, brackets), long enough to cross several blocks.
TEST(JsonText, BlockSplitterAgreesWithTheByteByByteOne) {
  // Without backslashes (the block path), with a rare one (blocks of both kinds), with many.
  const std::string alphabets[] = {"{}[]\"ab, ", "{}[]\"abcdefghijklmnopqrstuvwxyz, \\",
                                   "{}[]\"\\\\ab,"};
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(seed >> 33);
  };
  for (int round = 0; round < 20000; ++round) {
    const std::string& alphabet = alphabets[round % 3];
    std::string text(next() % 400, ' ');
    for (char& c : text) c = alphabet[next() % alphabet.size()];
    size_t begin = text.empty() ? 0 : next() % text.size();
    size_t want = next() % 200;
    Split a = split_array(text, begin, want);
    Split b = reference_split(text, begin, want);
    ASSERT_EQ(static_cast<int>(a.stop), static_cast<int>(b.stop)) << text << " from " << begin;
    ASSERT_EQ(a.at, b.at) << text << " from " << begin;
  }
}

TEST(JsonText, FindsTheEventsArrayAndCutsBetweenElements) {
  // Only the top-level member counts, not a nested one or a string that says traceEvents.
  const std::string trace =
      R"({"a": {"traceEvents": [1]}, "b": "traceEvents", "traceEvents" : [{"x": "]}"}, [2]]})";
  size_t open = find_events_array(trace);
  EXPECT_EQ(open, trace.find(" [{") + 1);
  EXPECT_EQ(find_events_array(" [1]"), 1U);
  EXPECT_EQ(find_events_array(R"({"other": []})"), kNotFound);
  EXPECT_EQ(find_events_array(""), kNotFound);
  // Brackets inside strings do not count; a cut comes after a whole element.
  Split cut = split_array(trace, open + 1, 1);
  EXPECT_EQ(cut.stop, Stop::kCut);
  EXPECT_EQ(trace.substr(open + 1, cut.at - open - 1), R"({"x": "]}"})");
  Split end = split_array(trace, open + 1, 1000);
  EXPECT_EQ(end.stop, Stop::kArrayEnd);
  EXPECT_EQ(end.at, trace.size() - 2);
  EXPECT_EQ(split_array(R"([{"a": 1}, )", 1, 1000).stop, Stop::kEnd);
  EXPECT_EQ(split_array(R"([{"a": "1)", 1, 1000).stop, Stop::kEndInString);
  EXPECT_EQ(split_array(R"([{"a": 1}})", 1, 1000).stop, Stop::kMalformed);
  EXPECT_EQ(first_invalid_utf8("ok \xe2\x82\xac \xed\xa0\x80"), 7U);  // a surrogate
  EXPECT_EQ(first_invalid_utf8("\xc0\xaf"), 0U);                        // overlong
  EXPECT_EQ(first_invalid_utf8("\xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(first_control_in_string("\t\"a\\\"\n\""), 5U);
}

TEST(MicrosecondsTextToNs, ConvertsTheDecimalTextExactly) {
  // 19 significant digits: a double would be off by up to ~0.25 µs here.
  EXPECT_EQ(microseconds_text_to_ns("1736408883731508.790"), 1736408883731508790);
  EXPECT_EQ(microseconds_text_to_ns("4458677009853.422"), 4458677009853422);
  EXPECT_EQ(microseconds_text_to_ns("12"), 12000);
  EXPECT_EQ(microseconds_text_to_ns("0.0004"), 0);
  EXPECT_EQ(microseconds_text_to_ns("0.0005"), 1);        // half up
  EXPECT_EQ(microseconds_text_to_ns("1.23456"), 1235);    // past the third fraction digit
  EXPECT_EQ(microseconds_text_to_ns("-2.5"), -2500);
  EXPECT_EQ(microseconds_text_to_ns("1.5e3"), 1500000);
  EXPECT_EQ(microseconds_text_to_ns("25E-4"), 3);         // 0.0025 µs = 2.5 ns
  EXPECT_EQ(microseconds_text_to_ns(" 7.0\t"), 7000);
  EXPECT_EQ(microseconds_text_to_ns(".5"), 500);
  EXPECT_EQ(microseconds_text_to_ns("abc"), std::nullopt);
  EXPECT_EQ(microseconds_text_to_ns(""), std::nullopt);
  EXPECT_EQ(microseconds_text_to_ns("1.2.3"), std::nullopt);
  EXPECT_EQ(microseconds_text_to_ns("99999999999999999999"), std::nullopt);  // overflows int64 ns
}

TEST(ScanChromeTrace, ReadsEventsAndTheHeaderInAnyOrder) {
  // Header members before and after traceEvents; ts as integer, decimal and 19-digit string;
  // pid/tid as numbers and strings; unknown members anywhere are skipped.
  Scanned scanned = scan(R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl",
      "rank": 3, "world_size": 8, "pg_config": [{"pg_name": "0", "ranks": [0, 1, 2, 3]},
      {"pg_name": "dp", "ranks": [3, 7]}]},
    "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7,
       "ts": 1736408883731508, "dur": 12.5, "args": {"device": 0, "stream": 7,
       "correlation": 42, "External id": 9, "Collective name": "allreduce",
       "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2, "dtype": "Float",
       "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "extra": {"x": [1, 2]}}},
      {"ts": "1736408883731508.790", "dur": "0.001", "ph": "X", "pid": "Spans",
       "tid": "12", "name": "a \"quoted\" name", "cat": "cpu_op"},
      {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
      {"name": "step", "ph": "i", "ts": 5, "s": "t", "pid": 1, "tid": 1}
    ],
    "baseTimeNanoseconds": 1711964646000000000, "host_name": "node-1", "deviceProperties": []})");
  EXPECT_EQ(scanned.header.rank, 3);
  EXPECT_EQ(scanned.header.world_size, 8);
  EXPECT_EQ(scanned.header.base_time_ns, 1711964646000000000);
  EXPECT_EQ(scanned.header.host, "node-1");
  ASSERT_EQ(scanned.header.process_groups.size(), 2U);
  EXPECT_EQ(scanned.header.process_groups[1].first, "dp");
  EXPECT_EQ(scanned.header.process_groups[1].second, (std::vector<int>{3, 7}));
  ASSERT_EQ(scanned.events.size(), 4U);
  const ChromeEvent& kernel = scanned.events[0];
  EXPECT_EQ(kernel.ph, 'X');
  EXPECT_EQ(scanned.names[0], "ncclKernel_AllReduce");
  EXPECT_EQ(kernel.tid, 7);
  EXPECT_EQ(kernel.ts_ns, 1736408883731508000);
  EXPECT_EQ(kernel.dur_ns, 12500);
  EXPECT_EQ(kernel.args.stream, 7);
  EXPECT_EQ(kernel.args.correlation, 42);
  EXPECT_EQ(kernel.args.external_id, 9);
  EXPECT_EQ(kernel.args.in_nelems, 6637568);
  EXPECT_EQ(kernel.args.out_nelems, 6637568);
  EXPECT_EQ(kernel.args.group_size, 2);
  EXPECT_EQ(scanned.collectives[0], "allreduce");
  const ChromeEvent& op = scanned.events[1];
  EXPECT_EQ(op.ts_ns, 1736408883731508790);
  EXPECT_EQ(op.dur_ns, 1);
  EXPECT_EQ(op.tid, 12);
  EXPECT_GE(op.pid, 0);  // "Spans": a stable hash
  EXPECT_EQ(op.pid, scan(R"([{"pid": "Spans"}])").events[0].pid);
  EXPECT_EQ(op.args.correlation, -1);
  EXPECT_EQ(scanned.names[1], "a \"quoted\" name");
  EXPECT_EQ(scanned.events[2].ph, 'M');
  EXPECT_EQ(scanned.events[3].dur.form, TimeForm::kMissing);
  EXPECT_EQ(scanned.events[3].dur_ns, 0);
  EXPECT_EQ(scanned.events[3].ts_ns, 5000);
  EXPECT_EQ(kernel.ts.form, TimeForm::kNumber);
  EXPECT_EQ(op.ts.form, TimeForm::kString);
  EXPECT_EQ(op.dur.form, TimeForm::kString);
  for (size_t i = 0; i < scanned.events.size(); ++i) EXPECT_EQ(scanned.events[i].index, i);
}

TEST(ScanChromeTrace, ReadsATopLevelArrayOfEvents) {
  // Ascend's trace_view.json.
  Scanned scanned = scan(R"([{"ph": "X", "name": "HcomAllReduce", "pid": 1, "tid": 2,
      "ts": "1704161511420306.491", "dur": 13.08, "args": {"Stream Id": 5, "Task Type": "AI_CPU",
      "count": "1024", "data_type": "FP32"}}])");
  ASSERT_EQ(scanned.events.size(), 1U);
  EXPECT_EQ(scanned.events[0].ts_ns, 1704161511420306491);
  EXPECT_EQ(scanned.events[0].dur_ns, 13080);
  EXPECT_EQ(scanned.events[0].args.stream, 5);
  EXPECT_EQ(scanned.events[0].args.count, 1024);
  EXPECT_FALSE(scanned.header.rank.has_value());
}

// More than one chunk of events (the scanner hands simdjson a few MiB at a time): every event
// arrives, members after traceEvents are read, and an error in a later chunk has its file offset.
TEST(ScanChromeTrace, ReadsLargeTracesInChunksWithFileOffsets) {
  const std::string event = R"({"ph": "X", "name": "k \"q\" {[", "ts": 1.5, "args": {"a": [1]}})";
  std::string json = R"({"traceEvents": [)";
  constexpr int kEvents = 100000;  // ~7 MB
  for (int i = 0; i < kEvents; ++i) json += (i == 0 ? "\n" : ",\n") + event;
  std::string whole = json + R"(], "distributedInfo": {"rank": 5}})";
  Scanned scanned = scan(whole);
  ASSERT_EQ(scanned.events.size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(scanned.names.back(), "k \"q\" {[");
  EXPECT_EQ(scanned.events.back().ts_ns, 1500);
  EXPECT_EQ(scanned.header.rank, 5);
  std::string bad = json + R"(, {"ts": true}]})";
  Scanned last = scan(bad);  // the scanner takes any "ts"; a reader judges it (require_times)
  EXPECT_EQ(last.events.back().index, static_cast<uint64_t>(kEvents));
  EXPECT_EQ(last.events.back().ts.form, TimeForm::kOther);
  EXPECT_EQ(scan_error(json + R"(, {"ts": 1}, {"ts" 1}]})"),
            "t.json: byte " + std::to_string(json.size() + 19) +
                ": malformed JSON; expected an event member");
  EXPECT_EQ(scan_error(json), "t.json: byte " + std::to_string(json.size()) +
                                  ": the JSON ends inside traceEvents: the file is truncated");
  std::string array = "[" + json.substr(json.find('[') + 1) + "]";
  EXPECT_EQ(scan(array).events.size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(scan_error(array + " x"), "t.json: byte " + std::to_string(array.size() + 1) +
                                          ": more text after the end of the JSON document");
  EXPECT_EQ(scan_error(json + "}"), "t.json: byte " + std::to_string(json.size()) +
                                        ": malformed JSON; expected ',' or ']' in traceEvents");
}

TEST(ScanChromeTrace, NamesTheFileAndByteOffsetOfBadJson) {
  const std::string whole = R"({"traceEvents": [{"ph": "X", "ts": 1}, {"ph": "X", "ts": 2}]})";
  // Truncated after an event, inside an event, inside a string, before traceEvents ends, after.
  EXPECT_EQ(scan_error(whole.substr(0, 38), "rank-3.json"),
            "rank-3.json: byte 38: the JSON ends inside traceEvents: the file is truncated");
  EXPECT_EQ(scan_error(whole.substr(0, 39), "rank-3.json"),
            "rank-3.json: byte 39: the JSON ends inside traceEvents: the file is truncated");
  EXPECT_EQ(scan_error(whole.substr(0, 45), "rank-3.json"),
            "rank-3.json: byte 45: the JSON ends inside traceEvents: the file is truncated");
  EXPECT_EQ(scan_error(whole.substr(0, 48), "rank-3.json"),
            "rank-3.json: byte 48: a string is not closed: the file is truncated");
  EXPECT_EQ(scan_error(whole.substr(0, 59), "rank-3.json"),
            "rank-3.json: byte 59: the JSON ends inside traceEvents: the file is truncated");
  EXPECT_EQ(scan_error(whole.substr(0, 60), "rank-3.json"),
            "rank-3.json: byte 60: the JSON ends inside the top-level object: the file is "
            "truncated");
  EXPECT_EQ(scan_error(""), "t.json: byte 0: the file is empty; expected a Chrome trace (JSON)");
  EXPECT_EQ(scan_error(R"({"traceEvents": {}})"),
            "t.json: byte 16: expected an array of events for \"traceEvents\"");
  EXPECT_EQ(scan_error(R"({"traceEvents": [1]})"),
            "t.json: byte 17: expected an event object in traceEvents");
  EXPECT_EQ(scan_error(R"({"traceEvents": [{"ph" "X"}]})"),
            "t.json: byte 23: malformed JSON; expected an event member");
  EXPECT_EQ(scan_error(R"({"traceEvents": []} {})"),
            "t.json: byte 20: more text after the end of the JSON document");
  EXPECT_EQ(scan_error(R"({"distributedInfo": {"rank": -1}, "traceEvents": []})"),
            "t.json: byte 29: a malformed or out-of-range number; expected an integer for "
            "\"distributedInfo.rank\"");
  EXPECT_EQ(scan_error(R"({"other": []})"),
            "t.json: no \"traceEvents\" member; expected a Chrome trace (PyTorch profiler JSON)");
  EXPECT_EQ(scan_error("\"text\""), "t.json: byte 0: expected a JSON object or array");
  EXPECT_EQ(scan_error("{\"traceEvents\": [{\"name\": \"caf\xc3\"}]}"),
            "t.json: byte 30: the text is not valid UTF-8");
  EXPECT_EQ(scan_error("{\"traceEvents\": [{\"name\": \"a\\\"b\tc\"}]}"),
            "t.json: byte 31: a control character inside a string");
  // "args" that is not an object is passed over like an unknown member.
  EXPECT_EQ(scan(R"({"traceEvents": [{"ph": "X", "args": null}]})").events.size(), 1U);
}

}  // namespace
}  // namespace plumb::step

namespace plumb::step {
namespace {

// --- damaged times: the scanner records how each was written, require_times() judges ---

TEST(ScanChromeTrace, RecordsHowEachTimeWasWritten) {
  struct Case {
    const char* member;
    TimeForm form;
    int64_t ns;
    const char* text;
  };
  const Case cases[] = {
      {R"("ts": 12.5)", TimeForm::kNumber, 12500, "12.5"},
      {R"("ts": -3)", TimeForm::kNumber, -3000, "-3"},
      {R"("ts": "1736408883731508.790")", TimeForm::kString, 1736408883731508790,
       "\"1736408883731508.790\""},
      {R"("ts": null)", TimeForm::kNull, 0, "null"},
      {R"("ts": "soon")", TimeForm::kOther, 0, "\"soon\""},
      {R"("ts": true)", TimeForm::kOther, 0, "true"},
      {R"("ts": {"us": 1})", TimeForm::kOther, 0, "an object"},
      {R"("ts": [1])", TimeForm::kOther, 0, "an array"},
      {R"("ts": 1e300)", TimeForm::kOutOfRange, 0, "1e300"},
      {R"("ts": 99999999999999999)", TimeForm::kOutOfRange, 0, "99999999999999999"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.member);
    std::string json = std::string(R"({"traceEvents": [{"ph": "X", )") + c.member + "}]}";
    Scanned scanned = scan(json);
    ASSERT_EQ(scanned.events.size(), 1U);
    EXPECT_EQ(scanned.events[0].ts.form, c.form);
    EXPECT_EQ(scanned.events[0].ts.ns, c.ns);
    EXPECT_EQ(scanned.events[0].ts_ns, c.ns);
    EXPECT_EQ(scanned.ts_texts[0], c.text);
    EXPECT_EQ(scanned.events[0].dur.form, TimeForm::kMissing);
  }
}

// require_times() on the second event of a trace, inside the scan's callback (where the event's
// views are valid).
std::string times_error(const std::string& members, bool with_dur = true,
                        StringTs strings = StringTs::kRefused) {
  const std::string json =
      R"({"traceEvents": [{"ph": "i"}, {"ph": "X", )"
      R"j("name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", )j" +
      members + "}]}";
  TraceText text = trace_text_from_bytes(json, "t.json");
  return test::error_message([&] {
    scan_chrome_trace(text, [&](const ChromeEvent& event) {
      if (event.index == 1) require_times(event, "rank1.json", with_dur, strings);
    });
  });
}

TEST(RequireTimes, NamesTheFileTheEventAndWhatItFound) {
  const std::string event = "rank1.json: event 1 ('ncclKernel_AllReduce_RING_LL_Sum_float(n...')";
  EXPECT_EQ(times_error(R"("ts": 5, "dur": "12")"),
            event + ": 'dur' is a string (\"12\"), expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": null, "dur": 12)"),
            event + ": 'ts' is null, expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": "soon", "dur": 12)"),
            event + ": 'ts' is \"soon\", expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": 5)"), event + ": 'dur' is missing, expected a number of µs");
  EXPECT_EQ(times_error(R"("dur": 5)"), event + ": 'ts' is missing, expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": 5, "dur": false)"),
            event + ": 'dur' is false, expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": 5, "dur": [12])"),
            event + ": 'dur' is an array, expected a number of µs");
  EXPECT_EQ(times_error(R"("ts": 1e300, "dur": 1)"),
            event + ": 'ts' is 1e300 (out of range), expected a number of µs");
  // torch_npu writes "ts" as a string: taken when the reader says so, "dur" never.
  EXPECT_EQ(times_error(R"("ts": "5.5", "dur": 1)", true, StringTs::kAccepted), "(no error)");
  EXPECT_EQ(times_error(R"("ts": "x5", "dur": 1)", true, StringTs::kAccepted),
            event + ": 'ts' is \"x5\", expected a number of µs (or a string holding one)");
  EXPECT_EQ(times_error(R"("ts": "5", "dur": "1")", true, StringTs::kAccepted),
            event + ": 'dur' is a string (\"1\"), expected a number of µs");
  // Without "dur" wanted, only "ts" is judged.
  EXPECT_EQ(times_error(R"("ts": 5, "dur": null)", false), "(no error)");
  EXPECT_EQ(times_error(R"("ts": 5, "dur": 7)"), "(no error)");
}

TEST(RequireTimes, EventsAreDescribedByPositionAndShortName) {
  ChromeEvent event;
  event.index = 7;
  EXPECT_EQ(describe_event(event), "event 7");
  // A long name is cut at 40 bytes, backing off to a character boundary (é is 2 bytes).
  const std::string name = std::string(39, 'a') + "\xC3\xA9tape";
  event.name = name;
  EXPECT_EQ(describe_event(event), "event 7 ('" + std::string(39, 'a') + "...')");
  event.name = "ProfilerStep#5";
  EXPECT_EQ(test::error_message([&] { fail_event(event, "r.json", "'dur' is negative"); }),
            "r.json: event 7 ('ProfilerStep#5'): 'dur' is negative");
  // A shown value is cut the same way.
  const std::string value = "\"" + std::string(100, 'x') + "\"";
  event.ts = {TimeForm::kString, 0, value};
  EXPECT_EQ(test::error_message([&] { require_times(event, "r.json", false, StringTs::kRefused); }),
            "r.json: event 7 ('ProfilerStep#5'): 'ts' is a string (\"" + std::string(39, 'x') +
                "...), expected a number of µs");
  // The scanner keeps names with escapes unescaped ("\u00e9" is é).
  const std::string json =
      R"({"traceEvents": [{"name": ")" + std::string(39, 'a') + R"(\u00e9tape"}]})";
  std::string described;
  scan_chrome_trace(trace_text_from_bytes(json, "t.json"),
                    [&](const ChromeEvent& e) { described = describe_event(e); });
  EXPECT_EQ(described, "event 0 ('" + std::string(39, 'a') + "...')");
}

TEST(NsAsUs, WritesIntegerNanosecondsAsMicrosecondsExactly) {
  EXPECT_EQ(ns_as_us(0), "0.000");
  EXPECT_EQ(ns_as_us(-3000), "-3.000");
  EXPECT_EQ(ns_as_us(1736408883731508790), "1736408883731508.790");
  EXPECT_EQ(ns_as_us(-1), "-0.001");
  EXPECT_EQ(ns_as_us(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

}  // namespace
}  // namespace plumb::step
