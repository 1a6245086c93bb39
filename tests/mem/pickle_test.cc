// The pickle reader on pickles CPython wrote (tests/fixtures/pickle/, see its README) and on
// hand-built byte strings for the edge cases: every value checked exactly, every refusal's exact
// message.
#include "mem/pickle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"

namespace plumb::mem {
namespace {

using namespace std::string_literals;

std::string fixture_bytes(const std::string& name) {
  std::ifstream in(std::string(PLUMB_TEST_FIXTURES) + "/pickle/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

PickleDoc fixture(const std::string& name) { return parse_pickle(fixture_bytes(name), name); }

std::string error_of(const std::string& bytes, const std::string& name = "t.pickle") {
  try {
    parse_pickle(bytes, name);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string fixture_error(const std::string& name) { return error_of(fixture_bytes(name), name); }

std::vector<std::string> keys_of(Value dict) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : dict.entries()) keys.emplace_back(key.as_str());
  return keys;
}

void check_ints(Value ints) {
  const std::vector<int64_t> exact = {
      0, 1, -1, 255, 256, 65535, 65536, -2147483648, 2147483647, 2147483648, INT64_MAX, INT64_MIN};
  ASSERT_EQ(ints.size(), exact.size() + 2);
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(ints[i].kind(), PickleKind::kInt) << i;
    EXPECT_EQ(ints[i].as_int(), exact[i]) << i;
  }
  // 2**64 and -2**64 - 1: beyond int64, kept as the nearest double.
  EXPECT_TRUE(ints[12].is_big_int());
  EXPECT_EQ(ints[12].kind(), PickleKind::kFloat);
  EXPECT_EQ(ints[12].as_double(), 18446744073709551616.0);
  EXPECT_EQ(ints[13].as_double(), -18446744073709551616.0);
  EXPECT_FALSE(ints[11].is_big_int());
}

void check_floats(Value floats) {
  ASSERT_EQ(floats.size(), 8u);
  EXPECT_EQ(floats[0].as_double(), 0.0);
  EXPECT_FALSE(std::signbit(floats[0].as_double()));
  EXPECT_TRUE(std::signbit(floats[1].as_double()));
  EXPECT_EQ(floats[2].as_double(), 1.5);
  EXPECT_EQ(floats[3].as_double(), -2.25);
  EXPECT_EQ(floats[4].as_double(), 1e300);
  EXPECT_EQ(floats[5].as_double(), INFINITY);
  EXPECT_EQ(floats[6].as_double(), -INFINITY);
  EXPECT_TRUE(std::isnan(floats[7].as_double()));
  for (const Value f : floats.items()) EXPECT_EQ(f.kind(), PickleKind::kFloat);
}

void check_strs(Value strs) {
  const std::vector<std::string> exact = {"",
                                          "ascii",
                                          "h\xc3\xa9llo",
                                          "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                          "\xf0\x9f\x98\x80",
                                          "line\nbreak",
                                          "back\\slash \\u0041"};
  ASSERT_EQ(strs.size(), exact.size());
  for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(strs[i].as_str(), exact[i]) << i;
}

// {"list": [1, [2, [3, []]]], "tuple": (1, (2, 3), (), (4, 5, 6, 7)), "dict": {"a": {}}}
void check_nested(Value nested) {
  EXPECT_EQ(keys_of(nested), (std::vector<std::string>{"list", "tuple", "dict"}));
  const Value list = *nested.get("list");
  ASSERT_EQ(list.kind(), PickleKind::kList);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].as_int(), 1);
  EXPECT_EQ(list[1][0].as_int(), 2);
  EXPECT_EQ(list[1][1][0].as_int(), 3);
  EXPECT_EQ(list[1][1][1].kind(), PickleKind::kList);
  EXPECT_EQ(list[1][1][1].size(), 0u);
  const Value tuple = *nested.get("tuple");
  ASSERT_EQ(tuple.kind(), PickleKind::kTuple);
  ASSERT_EQ(tuple.size(), 4u);
  EXPECT_EQ(tuple[0].as_int(), 1);
  EXPECT_EQ(tuple[1].kind(), PickleKind::kTuple);
  EXPECT_EQ(tuple[1][1].as_int(), 3);
  EXPECT_EQ(tuple[2].kind(), PickleKind::kTuple);
  EXPECT_EQ(tuple[2].size(), 0u);
  std::vector<int64_t> four;
  for (const Value v : tuple[3].items()) four.push_back(v.as_int());
  EXPECT_EQ(four, (std::vector<int64_t>{4, 5, 6, 7}));
  const Value a = *nested.get("dict")->get("a");
  EXPECT_EQ(a.kind(), PickleKind::kDict);
  EXPECT_EQ(a.size(), 0u);
}

void check_plain(const PickleDoc& doc, int protocol) {
  const Value root = doc.root();
  ASSERT_EQ(root.kind(), PickleKind::kDict);
  std::vector<std::string> keys = {"ints",   "floats", "strs", "nested",
                                   "shared", "none",   "true", "false"};
  if (protocol >= 3) keys.push_back("bytes");
  if (protocol >= 5) keys.push_back("bytearray");
  EXPECT_EQ(keys_of(root), keys);
  check_ints(*root.get("ints"));
  check_floats(*root.get("floats"));
  check_strs(*root.get("strs"));
  check_nested(*root.get("nested"));

  // The same list twice: one node.
  const Value shared = *root.get("shared");
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_EQ(shared[0].id(), shared[1].id());
  EXPECT_EQ(shared[0].size(), 3u);
  EXPECT_EQ(shared[1][2].as_int(), 3);

  EXPECT_TRUE(root.get("none")->is_none());
  EXPECT_TRUE(root.get("true")->as_bool());
  EXPECT_FALSE(root.get("false")->as_bool());
  EXPECT_EQ(root.get("true")->kind(), PickleKind::kBool);
  if (protocol >= 3) {
    EXPECT_EQ(root.get("bytes")->as_bytes(),
              "\x00\xff"
              "ab"s);
  }
  if (protocol >= 5) {
    EXPECT_EQ(root.get("bytearray")->as_bytes(), "xyz");
  }
  EXPECT_FALSE(root.get("missing").has_value());
}

TEST(Pickle, Protocol0) { check_plain(fixture("plain_p0.pickle"), 0); }
TEST(Pickle, Protocol2) { check_plain(fixture("plain_p2.pickle"), 2); }
TEST(Pickle, Protocol3) { check_plain(fixture("plain_p3.pickle"), 3); }
TEST(Pickle, Protocol4) { check_plain(fixture("plain_p4.pickle"), 4); }
TEST(Pickle, Protocol5) { check_plain(fixture("plain_p5.pickle"), 5); }

TEST(Pickle, ReadsAFileByPath) {
  const PickleDoc doc =
      read_pickle_file(std::string(PLUMB_TEST_FIXTURES) + "/pickle/plain_p4.pickle");
  check_plain(doc, 4);
  EXPECT_EQ(doc.name(), std::string(PLUMB_TEST_FIXTURES) + "/pickle/plain_p4.pickle");
}

// A pipe cannot be mapped: it is read instead.
TEST(Pickle, ReadsAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string bytes = fixture_bytes("plain_p2.pickle");
  ASSERT_EQ(write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fds[1]);
  const PickleDoc doc = read_pickle_file("/dev/fd/" + std::to_string(fds[0]));
  close(fds[0]);
  check_plain(doc, 2);
}

std::string file_error(const std::string& path) {
  try {
    read_pickle_file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Pickle, UnreadableFileIsNamed) {
  EXPECT_EQ(file_error("/nonexistent/snapshot.pickle"),
            "/nonexistent/snapshot.pickle: cannot read: No such file or directory");
  EXPECT_EQ(file_error("/"), "/: is a directory, not a file");
  EXPECT_EQ(file_error("/dev/null"), "/dev/null: empty, not a pickle");
}

// [{"addr": i * 512, "size": 512, "state": "active_allocated" or "inactive", "name": "block<i>"}
//  for i in range(5000)]: 165 KiB in three FRAMEs.
TEST(Pickle, FramedProtocol4) {
  const PickleDoc doc = fixture("framed_p4.pickle");
  const Value blocks = doc.root();
  ASSERT_EQ(blocks.size(), 5000u);
  int64_t i = 0;
  for (const Value block : blocks.items()) {
    ASSERT_EQ(keys_of(block), (std::vector<std::string>{"addr", "size", "state", "name"}));
    EXPECT_EQ(block.get("addr")->as_int(), i * 512);
    EXPECT_EQ(block.get("size")->as_int(), 512);
    EXPECT_EQ(block.get("state")->as_str(), i % 2 ? "active_allocated" : "inactive");
    EXPECT_EQ(block.get("name")->as_str(), "block" + std::to_string(i));
    ++i;
  }
  // Keys and the two states are memo references: one node each.
  EXPECT_EQ(blocks[0].get("state")->id(), blocks[2].get("state")->id());
}

TEST(Pickle, RefusesPythonObjects) {
  EXPECT_EQ(fixture_error("ordered_dict_p2.pickle"),
            "ordered_dict_p2.pickle: byte 2: opcode GLOBAL (0x63) builds a Python object; plumb "
            "reads plain data only (dicts, lists, numbers, strings)");
  EXPECT_EQ(fixture_error("class_instance_p4.pickle"),
            "class_instance_p4.pickle: byte 30: opcode STACK_GLOBAL (0x93) builds a Python "
            "object; plumb reads plain data only (dicts, lists, numbers, strings)");
  EXPECT_EQ(fixture_error("set_p4.pickle"),
            "set_p4.pickle: byte 22: opcode EMPTY_SET (0x8f) builds a Python set; plumb reads "
            "plain data only (dicts, lists, numbers, strings)");
}

TEST(Pickle, RefusesCycles) {
  EXPECT_EQ(fixture_error("cycle_p4.pickle"),
            "cycle_p4.pickle: byte 21: APPEND makes a list contain itself (a reference cycle); "
            "plumb reads plain data without cycles");
  // a = []; b = [a]; a.append(b): the second APPEND closes the cycle.
  EXPECT_EQ(error_of("\x80\x02]q\x00]h\x00"
                     "aa."s),
            "t.pickle: byte 9: APPEND makes a list contain itself (a reference cycle); plumb "
            "reads plain data without cycles");
  EXPECT_EQ(error_of("\x80\x02]2a."s),
            "t.pickle: byte 4: APPEND makes a list contain itself (a reference cycle); plumb "
            "reads plain data without cycles");
  // d = {}; d[1] = d
  EXPECT_EQ(error_of("\x80\x02}q\x00(K\x01h\x00u."s),
            "t.pickle: byte 10: SETITEMS makes a dict contain itself (a reference cycle); plumb "
            "reads plain data without cycles");
}

TEST(Pickle, RefusesTruncatedAndGarbage) {
  EXPECT_EQ(fixture_error("truncated_p3.pickle"),
            "truncated_p3.pickle: truncated at byte 162 inside BINUNICODE");
  EXPECT_EQ(fixture_error("garbage.pickle"),
            "garbage.pickle: byte 0: unknown opcode 0x7b (not a pickle of protocol 2 or later: "
            "those start with PROTO, 0x80)");
  EXPECT_EQ(error_of(""), "t.pickle: empty, not a pickle");
  EXPECT_EQ(error_of("\x80\x02N"),
            "t.pickle: truncated at byte 3: the data ends before the STOP opcode");
  EXPECT_EQ(error_of("\x80\x02J\x01\x02"), "t.pickle: truncated at byte 5 inside BININT");
  EXPECT_EQ(error_of("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00N."s),
            "t.pickle: truncated at byte 13 inside FRAME");
  EXPECT_EQ(error_of("I12"), "t.pickle: truncated at byte 3 inside INT");
}

TEST(Pickle, StackAndMarkMisuse) {
  EXPECT_EQ(error_of("\x80\x02"
                     "a"),
            "t.pickle: byte 2: APPEND finds no value on the stack");
  EXPECT_EQ(error_of("\x80\x02](a"),
            "t.pickle: byte 4: APPEND finds no value on the stack above the last MARK");
  EXPECT_EQ(error_of("\x80\x02]e."),
            "t.pickle: byte 3: APPENDS needs a MARK before it, and there is none");
  EXPECT_EQ(error_of("\x80\x02(e."), "t.pickle: byte 3: APPENDS finds no list below its MARK");
  EXPECT_EQ(error_of("\x80\x02}(K\x01u."),
            "t.pickle: byte 6: SETITEMS has an odd number of values after its MARK (1); keys and "
            "values come in pairs");
  EXPECT_EQ(error_of("\x80\x02}K\x01"
                     "a."),
            "t.pickle: byte 5: APPEND adds to a dict, not a list");
  EXPECT_EQ(error_of("\x80\x02h\x05."),
            "t.pickle: byte 2: BINGET asks for memo entry 5, which was never stored");
  EXPECT_EQ(error_of("\x80\x02(."),
            "t.pickle: byte 3: STOP finds no value on the stack above the last MARK");
  EXPECT_EQ(error_of("\x80\x02\xff"), "t.pickle: byte 2: unknown opcode 0xff");
  EXPECT_EQ(error_of("\x80\x06N."),
            "t.pickle: byte 0: unsupported pickle protocol 6; plumb reads protocols 0 to 5");
  EXPECT_EQ(error_of("\x80\x02X\x01\x00\x00\x00\xff."s),
            "t.pickle: byte 2: BINUNICODE holds invalid UTF-8 at byte 7");
  EXPECT_EQ(error_of("\x80\x02\x8b\xff\xff\xff\xff."),
            "t.pickle: byte 2: LONG4 has a negative length, -1");
  EXPECT_EQ(error_of("\x80\x02U\x01\xe9."),
            "t.pickle: byte 2: SHORT_BINSTRING is a Python 2 str with a non-ASCII byte at byte 4; "
            "Python 3 reads such strs as ASCII and refuses it too");
  EXPECT_EQ(error_of("S'abc'\n."),
            "t.pickle: byte 0: opcode STRING (0x53) holds a quoted Python 2 str, which Python 3 "
            "never writes; plumb reads plain data only (dicts, lists, numbers, strings) (not a "
            "pickle of protocol 2 or later: those start with PROTO, 0x80)");
}

// MARK, POP_MARK, POP (of a value and of a MARK), DUP and memo gets share nodes.
TEST(Pickle, HandBuiltStackOperations) {
  // L = [1, 2] (memo 0); get L; DUP; TUPLE2 -> (L, L); MARK None None POP_MARK; None POP; STOP.
  const PickleDoc doc = parse_pickle(
      "\x80\x02]q\x00(K\x01K\x02"
      "eh\x00"
      "2\x86(NN1N0."s,
      "t");
  const Value t = doc.root();
  ASSERT_EQ(t.kind(), PickleKind::kTuple);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].id(), t[1].id());
  EXPECT_EQ(t[0].size(), 2u);
  EXPECT_EQ(t[1][1].as_int(), 2);

  // POP right after MARK drops the MARK (as CPython does): [] MARK POP MARK 1 APPENDS -> [1].
  const PickleDoc popped = parse_pickle(
      "\x80\x02](0(K\x01"
      "e."s,
      "t");
  ASSERT_EQ(popped.root().size(), 1u);
  EXPECT_EQ(popped.root()[0].as_int(), 1);

  // A shared list appended into another shared list, without a cycle: B = [A].
  const PickleDoc dag = parse_pickle(
      "\x80\x02]q\x00]q\x01h\x01h\x00"
      "a0."s,
      "t");
  EXPECT_EQ(dag.root().size(), 1u);
  EXPECT_EQ(dag.root()[0].size(), 0u);

  // SETITEM on a dict reached through the memo; get() returns the last value of a repeated key.
  const PickleDoc dict =
      parse_pickle("\x80\x02}q\x07h\x07X\x01\x00\x00\x00kK\x01sX\x01\x00\x00\x00kK\x02s0."s, "t");
  EXPECT_EQ(dict.root().size(), 2u);
  EXPECT_EQ(dict.root().get("k")->as_int(), 2);
}

TEST(Pickle, HandBuiltScalars) {
  // LONG1 with redundant sign bytes still fits int64; an empty LONG1 is 0.
  const PickleDoc doc = parse_pickle(
      "\x80\x02(\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff\x8a\x02\xff\x00\x8a\x00"
      "\x8b\x01\x00\x00\x00\x80K\x07K\x07U\x03"
      "abcC\x02xyl."s,
      "t");
  const Value v = doc.root();
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0].as_int(), -1);
  EXPECT_EQ(v[1].as_int(), 255);
  EXPECT_EQ(v[2].as_int(), 0);
  EXPECT_EQ(v[3].as_int(), -128);
  EXPECT_EQ(v[4].id(), v[5].id());  // small ints share a node
  EXPECT_EQ(v[6].as_str(), "abc");
  EXPECT_EQ(v[7].as_bytes(), "xy");

  // Protocol 0 text: raw-unicode-escape (an even run of backslashes is literal), INT bools,
  // LONG with its L, FLOAT, PUT and GET.
  const PickleDoc text =
      parse_pickle("(V\\u00e9\\\\u0041\\U0001f600\xe9\np0\nI01\nI00\nL-12L\nF-0.5\ng0\nl."s, "t");
  const Value t = text.root();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].as_str(), "\xc3\xa9\\\\u0041\xf0\x9f\x98\x80\xc3\xa9");
  EXPECT_TRUE(t[1].as_bool());
  EXPECT_FALSE(t[2].as_bool());
  EXPECT_EQ(t[3].as_int(), -12);
  EXPECT_EQ(t[4].as_double(), -0.5);
  EXPECT_EQ(t[5].id(), t[0].id());
}

TEST(Pickle, AccessorsReportTheWrongKind) {
  const PickleDoc doc = fixture("plain_p4.pickle");
  const Value root = doc.root();
  auto error = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error([&] { root.as_int(); }), "plain_p4.pickle: expected an int, found a dict");
  EXPECT_EQ(error([&] { root.get("ints")->get("x"); }),
            "plain_p4.pickle: expected a dict, found a list");
  EXPECT_EQ(error([&] { (*root.get("ints"))[14]; }),
            "plain_p4.pickle: index 14 is past the end of a list of 14 items");
  EXPECT_EQ(error([&] { (*root.get("ints"))[12].as_int(); }),
            "plain_p4.pickle: expected an int, found an int beyond 64 bits (about 1.84467e+19)");
  EXPECT_EQ(error([&] { root.get("none")->size(); }),
            "plain_p4.pickle: expected a list, tuple, dict, str or bytes, found None");
  EXPECT_EQ(error([&] { root.get("true")->as_int(); }),
            "plain_p4.pickle: expected an int, found a bool");
  EXPECT_EQ((*root.get("ints"))[1].as_double(), 1.0);
}

// Values stay valid when the document moves.
TEST(Pickle, ValuesSurviveAMove) {
  PickleDoc doc = fixture("plain_p4.pickle");
  const Value strs = *doc.root().get("strs");
  const PickleDoc moved = std::move(doc);
  EXPECT_EQ(strs[1].as_str(), "ascii");
  EXPECT_EQ(moved.root().get("strs")->id(), strs.id());
}

// A million-item list in batches of 1000 (as the pickler writes it), one million BININT values.
TEST(Pickle, MillionItemList) {
  constexpr int kItems = 1'000'000;
  constexpr int kBatch = 1000;
  std::string bytes = "\x80\x04]";
  for (int i = 0; i < kItems; i += kBatch) {
    bytes += '(';
    for (int j = i; j < i + kBatch; ++j) {
      bytes += 'J';
      for (int b = 0; b < 4; ++b) bytes += static_cast<char>((j >> (8 * b)) & 0xff);
    }
    bytes += 'e';
  }
  bytes += '.';
  const PickleDoc doc = parse_pickle(bytes, "big");
  const Value list = doc.root();
  ASSERT_EQ(list.size(), static_cast<size_t>(kItems));
  EXPECT_EQ(list[0].as_int(), 0);
  EXPECT_EQ(list[123456].as_int(), 123456);
  EXPECT_EQ(list[kItems - 1].as_int(), kItems - 1);
  int64_t sum = 0;
  for (const Value v : list.items()) sum += v.as_int();
  EXPECT_EQ(sum, int64_t{kItems} * (kItems - 1) / 2);
}

}  // namespace
}  // namespace plumb::mem
