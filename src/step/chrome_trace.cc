// One pass of simdjson On-Demand over a Chrome trace: the top-level members in any order, each
// event's fields read once by a switch on the key, every other field skipped without decoding.
// The events array is handed to simdjson in chunks of a few MiB (cut between elements by
// json_text's split_array and copied between brackets), so simdjson's index (4 bytes per
// structural character) stays small whatever the file's size; the members around the array are
// parsed as a small document of their own. Errors name the file and the byte offset of the
// token where reading stopped; a document that ends early is reported as truncated with what it
// ended inside of. No simdjson text reaches the user.
#include "step/chrome_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "step/trace.h"
#include "step/json_text.h"

namespace plumb::step {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

constexpr int kNsDigits = 3;  // decimal digits between µs and ns

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// A decimal integer ("12", "-3"); nullopt otherwise.
std::optional<int64_t> parse_integer(std::string_view text) {
  text = trim(text);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// FNV-1a: a stable id for a non-numeric pid/tid string ("Spans", "Traces").
int64_t stable_hash(std::string_view text) {
  constexpr uint64_t kOffset = 14695981039346656037ULL;
  constexpr uint64_t kPrime = 1099511628211ULL;
  uint64_t hash = kOffset;
  for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * kPrime;
  return static_cast<int64_t>(hash >> 1);  // non-negative, apart from real pids only by chance
}

// The `args` members plumb reads (chrome_trace.h, ChromeArgs).
enum class ArgField : uint8_t {
  kCorrelation, kExternalId, kDevice, kStream, kCollectiveName, kInNelems, kOutNelems,
  kGroupSize, kDtype, kPgName, kPgRanks, kCount, kTaskType, kName, kSeq,
};

constexpr std::array<std::pair<std::string_view, ArgField>, 19> kArgFields{{
    {"correlation", ArgField::kCorrelation},
    {"correlation_id", ArgField::kCorrelation},  // Ascend
    {"External id", ArgField::kExternalId},
    {"device", ArgField::kDevice},
    {"stream", ArgField::kStream},
    {"Stream Id", ArgField::kStream},         // Ascend trace_view.json
    {"Physic Stream Id", ArgField::kStream},  // Ascend, newer CANN
    {"stream id", ArgField::kStream},
    {"Collective name", ArgField::kCollectiveName},
    {"In msg nelems", ArgField::kInNelems},
    {"Out msg nelems", ArgField::kOutNelems},
    {"Group size", ArgField::kGroupSize},
    {"dtype", ArgField::kDtype},
    {"data_type", ArgField::kDtype},  // Ascend HCCL op
    {"Process Group Name", ArgField::kPgName},
    {"Process Group Ranks", ArgField::kPgRanks},
    {"Seq", ArgField::kSeq},
    {"count", ArgField::kCount},
    {"Task Type", ArgField::kTaskType},
}};

std::optional<ArgField> arg_field(std::string_view key) {
  if (key == "name") return ArgField::kName;
  for (const auto& [name, field] : kArgFields) {
    if (key == name) return field;
  }
  return std::nullopt;
}

// Events per simdjson document: big enough that a chunk's fixed cost vanishes, small enough
// that its index (4 bytes per structural character) stays a few MiB.
constexpr size_t kChunkBytes = size_t{2} << 20;

// A document simdjson parses: the text itself, a chunk of its events copied between brackets,
// or its header with the events cut out; and how the document's offsets map to the file's.
struct Window {
  const char* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;              // size + padding
  size_t split = SIZE_MAX;          // offsets from here on are shifted by `after`
  int64_t before = 0;
  int64_t after = 0;
  size_t to_file(size_t local) const {
    return static_cast<size_t>(static_cast<int64_t>(local) + (local < split ? before : after));
  }
};

class Scanner {
 public:
  Scanner(const TraceText& text, const std::function<void(const ChromeEvent&)>& on_event)
      : text_(text), on_event_(on_event) {}

  ChromeTraceHeader run() {
    std::string_view text = text_.view();
    size_t open = find_events_array(text);
    if (open == kNotFound) {
      parse(Window{text_.data.get(), text_.size, text_.size + kTracePadding}, false);
      return std::move(header_);
    }
    size_t close = scan_event_chunks(open);
    if (skip_space(text, 0) == open) {  // a top-level array
      header_.bare_array = true;
      size_t rest = skip_space(text, close + 1);
      if (rest < text.size()) {
        throw Error(fmt::format("{}: byte {}: {}", text_.source, rest,
                                describe(simdjson::TRAILING_CONTENT, "", false)));
      }
      return std::move(header_);
    }
    // The header: the text with the events cut out ("traceEvents": []), usually a few KiB.
    where_ = "the top-level object";
    std::string header;
    header.reserve(text.size() - (close - open - 1) + kTracePadding);
    header.append(text.substr(0, open + 1)).append(text.substr(close));
    size_t size = header.size();
    header.append(kTracePadding, '\0');
    Window window{header.data(), size, header.size(), open + 1, 0,
                  static_cast<int64_t>(close - open - 1)};
    parse(window, false);
    return std::move(header_);
  }

 private:
  // Parses the events array opening at `open` chunk by chunk; returns the index of its ']'.
  size_t scan_event_chunks(size_t open) {
    std::string_view text = text_.view();
    where_ = "traceEvents";
    size_t begin = open + 1;
    for (bool first = true;; first = false) {
      Split split = split_array(text, begin, kChunkBytes);
      if (split.stop == Stop::kEnd || split.stop == Stop::kEndInString) {
        throw Error(fmt::format("{}: byte {}: {}", text_.source, text_.size,
                                describe(split.stop == Stop::kEnd ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT
                                                                  : simdjson::UNCLOSED_STRING,
                                         "", true)));
      }
      if (split.stop == Stop::kMalformed) {
        throw Error(fmt::format("{}: byte {}: malformed JSON; expected ',' or ']' in traceEvents",
                                text_.source, split.at));
      }
      size_t from = skip_space(text, begin);
      if (!first && from < split.at && text[from] == ',') from = skip_space(text, from + 1);
      parse_chunk(from, split.at);
      if (split.stop == Stop::kArrayEnd) return split.at;
      begin = split.at;
    }
  }

  // Copies text[from, to) between brackets into the chunk buffer and scans its events.
  void parse_chunk(size_t from, size_t to) {
    size_t size = to - from + 2;
    if (chunk_.size() < size + kTracePadding) chunk_.resize(size + kTracePadding);
    chunk_[0] = '[';
    std::memcpy(chunk_.data() + 1, text_.data.get() + from, to - from);
    chunk_[size - 1] = ']';
    std::memset(chunk_.data() + size, 0, kTracePadding);
    // chunk offset k + 1 is file offset from + k; the closing ']' maps to `to`.
    auto shift = static_cast<int64_t>(from) - 1;
    parse(Window{chunk_.data(), size, size + kTracePadding, SIZE_MAX, shift, shift}, true);
  }

  void parse(const Window& window, bool events_only) {
    window_ = window;
    simdjson::padded_string_view json(window.data, window.size, window.capacity);
    if (error_code error = parser_.iterate(json).get(doc_); error) fail_indexing(error);
    // get_value() rather than get_object(): the root check of the latter reports a truncated
    // file before anything is read, without saying where it ends.
    od::value root;
    check(doc_.get_value().get(root), "a JSON object or array");
    od::json_type type{};
    check(root.type().get(type), "a JSON object or array");
    if (events_only || type == od::json_type::array) {
      scan_events(root);
    } else {
      scan_top_object(root);
    }
    const char* rest = nullptr;
    if (doc_.current_location().get(rest) == simdjson::SUCCESS && rest < window.data + window.size) {
      fail(simdjson::TRAILING_CONTENT, "the end of the file");
    }
  }

  void check(error_code error, std::string_view expected) {
    if (error) fail(error, expected);
  }

  // The offset of the token being read; the text's size when reading stopped at its end.
  size_t offset(bool& at_end) {
    const char* location = nullptr;
    at_end = doc_.current_location().get(location) != simdjson::SUCCESS ||
             location >= window_.data + window_.size;
    return window_.to_file(at_end ? window_.size : static_cast<size_t>(location - window_.data));
  }

  // Indexing (simdjson's stage 1) failed: there is no document to ask for a location, so the
  // offending byte is found by a plain scan (only now, on the error path).
  [[noreturn]] void fail_indexing(error_code error) {
    std::string what = describe(error, "a JSON document", false);
    std::string_view text(window_.data, window_.size);
    std::optional<size_t> at;
    if (error == simdjson::EMPTY) at = 0;
    if (error == simdjson::UNCLOSED_STRING) at = window_.size;
    if (error == simdjson::UTF8_ERROR) at = first_invalid_utf8(text);
    if (error == simdjson::UNESCAPED_CHARS) at = first_control_in_string(text);
    if (!at) throw Error(fmt::format("{}: {}", text_.source, what));
    throw Error(fmt::format("{}: byte {}: {}", text_.source, window_.to_file(*at), what));
  }

  // A value of the wrong type or form at `token` (a pointer into the text).
  [[noreturn]] void fail_at(const char* token, std::string_view expected) {
    throw Error(fmt::format("{}: byte {}: expected {}", text_.source,
                            window_.to_file(static_cast<size_t>(token - window_.data)), expected));
  }

  [[noreturn]] void fail(error_code error, std::string_view expected) {
    bool at_end = false;
    size_t at = offset(at_end);
    throw Error(fmt::format("{}: byte {}: {}", text_.source, at, describe(error, expected, at_end)));
  }

  std::string describe(error_code error, std::string_view expected, bool at_end) const {
    switch (error) {
      case simdjson::EMPTY: return "the file is empty; expected a Chrome trace (JSON)";
      case simdjson::UNCLOSED_STRING:
        return "a string is not closed: the file is truncated";
      case simdjson::UTF8_ERROR: return "the text is not valid UTF-8";
      case simdjson::UNESCAPED_CHARS: return "a control character inside a string";
      case simdjson::DEPTH_ERROR: return "the JSON is nested too deeply";
      case simdjson::CAPACITY:
        return "more than 4 GiB of JSON outside traceEvents; not a trace this reader takes";
      case simdjson::TRAILING_CONTENT: return "more text after the end of the JSON document";
      case simdjson::NUMBER_ERROR:
      case simdjson::NUMBER_OUT_OF_RANGE:
        return fmt::format("a malformed or out-of-range number; expected {}", expected);
      default: break;
    }
    if (at_end || error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
      return fmt::format("the JSON ends inside {}: the file is truncated", where_);
    }
    if (error == simdjson::INCORRECT_TYPE || error == simdjson::SCALAR_DOCUMENT_AS_VALUE) {
      return fmt::format("expected {}", expected);
    }
    return fmt::format("malformed JSON; expected {}", expected);
  }

  // The key of an object member without its quotes (keys are compared as written: the names
  // plumb reads hold no escapes).
  std::string_view key_of(od::field& field) const {
    // Indexing checked that every string is closed: the loop ends within the text. Keys are
    // short, so a loop beats memchr's call.
    const char* start = field.key().raw();
    const char* end = start;
    while (*end != '"') ++end;
    return {start, static_cast<size_t>(end - start)};
  }

  void scan_top_object(od::value& root) {
    od::object object;
    check(root.get_object().get(object), "a JSON object with \"traceEvents\"");
    bool saw_events = false;
    for (auto member : object) {
      od::field field;
      check(std::move(member).get(field), "an object member");
      std::string_view key = key_of(field);
      if (key == "traceEvents") {
        saw_events = true;
        scan_events(field.value());
        where_ = "the top-level object";
      } else if (key == "distributedInfo") {
        scan_distributed_info(field.value());
      } else if (key == "baseTimeNanoseconds") {
        header_.base_time_ns = integer(field.value(), "an integer for \"baseTimeNanoseconds\"");
      } else if (key == "host_name") {
        header_.host = std::string(string(field.value(), "a string for \"host_name\""));
      }
    }
    if (!saw_events) {
      throw Error(fmt::format("{}: no \"traceEvents\" member; expected a Chrome trace (PyTorch "
                              "profiler JSON)",
                              text_.source));
    }
  }

  void scan_events(od::value value) {
    od::array events;
    check(value.get_array().get(events), "an array of events for \"traceEvents\"");
    where_ = "traceEvents";
    for (auto element : events) {
      od::object event;
      check(std::move(element).get_object().get(event), "an event object in traceEvents");
      scan_event(event);
      event_.index = events_seen_++;
      on_event_(event_);
    }
  }

  void scan_event(od::object& object) {
    event_ = ChromeEvent{};
    for (auto member : object) {
      od::field field;
      check(std::move(member).get(field), "an event member");
      std::string_view key = key_of(field);
      od::value& value = field.value();
      if (key.size() < 2 || key.size() > 4) continue;
      switch (key[0]) {
        case 'p':
          if (key == "ph") {
            std::string_view ph = string(value, "a string for \"ph\"");
            event_.ph = ph.empty() ? '\0' : ph[0];
          } else if (key == "pid") {
            event_.pid = id(value, "a number or string for \"pid\"");
          }
          break;
        case 't':
          if (key == "ts") {
            event_.ts = time_member(value);
            event_.ts_ns = event_.ts.ns;
          } else if (key == "tid") {
            event_.tid = id(value, "a number or string for \"tid\"");
          }
          break;
        case 'd':
          if (key == "dur") {
            event_.dur = time_member(value);
            event_.dur_ns = event_.dur.ns;
          }
          break;
        case 'c':
          if (key == "cat") event_.cat = string(value, "a string for \"cat\"");
          break;
        case 'n':
          if (key == "name") event_.name = string(value, "a string for \"name\"");
          break;
        case 'a':
          if (key == "args") scan_args(value);
          break;
        default: break;
      }
    }
  }

  void scan_args(od::value& value) {
    od::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return;  // "args": null and such
    ChromeArgs& args = event_.args;
    for (auto member : object) {
      od::field field;
      check(std::move(member).get(field), "an args member");
      std::optional<ArgField> which = arg_field(key_of(field));
      if (!which) continue;
      od::value& arg = field.value();
      switch (*which) {
        case ArgField::kCorrelation: args.correlation = lenient_integer(arg); break;
        case ArgField::kExternalId: args.external_id = lenient_integer(arg); break;
        case ArgField::kDevice: args.device = lenient_integer(arg); break;
        case ArgField::kStream: args.stream = lenient_integer(arg); break;
        case ArgField::kInNelems: args.in_nelems = lenient_integer(arg); break;
        case ArgField::kOutNelems: args.out_nelems = lenient_integer(arg); break;
        case ArgField::kGroupSize: args.group_size = lenient_integer(arg); break;
        case ArgField::kCount: args.count = lenient_integer(arg); break;
        case ArgField::kSeq: args.seq = lenient_integer(arg); break;
        case ArgField::kCollectiveName: args.collective_name = lenient_string(arg); break;
        case ArgField::kDtype: args.dtype = lenient_string(arg); break;
        case ArgField::kPgName: args.pg_name = lenient_string(arg); break;
        case ArgField::kPgRanks: args.pg_ranks = lenient_string(arg); break;
        case ArgField::kTaskType: args.task_type = lenient_string(arg); break;
        case ArgField::kName: event_.process_or_thread_name = lenient_string(arg); break;
      }
    }
  }

  void scan_distributed_info(od::value value) {
    od::object object;
    check(value.get_object().get(object), "an object for \"distributedInfo\"");
    for (auto member : object) {
      od::field field;
      check(std::move(member).get(field), "a distributedInfo member");
      std::string_view key = key_of(field);
      if (key == "rank") {
        header_.rank = small_integer(field.value(), "an integer for \"distributedInfo.rank\"");
      } else if (key == "world_size") {
        header_.world_size =
            small_integer(field.value(), "an integer for \"distributedInfo.world_size\"");
      } else if (key == "pg_config") {
        scan_pg_config(field.value());
      }
    }
  }

  // [{"pg_name": "0", "ranks": [0, 1], ...}, ...] (or an object of such objects by name).
  void scan_pg_config(od::value value) {
    od::json_type type{};
    check(value.type().get(type), "an array for \"pg_config\"");
    if (type == od::json_type::object) {
      od::object groups;
      check(value.get_object().get(groups), "an object for \"pg_config\"");
      for (auto member : groups) {
        od::field field;
        check(std::move(member).get(field), "a pg_config member");
        scan_process_group(field.value(), std::string(key_of(field)));
      }
      return;
    }
    od::array groups;
    check(value.get_array().get(groups), "an array for \"pg_config\"");
    for (auto element : groups) {
      od::value group;
      check(std::move(element).get(group), "a process group in pg_config");
      scan_process_group(group, {});
    }
  }

  void scan_process_group(od::value group, std::string name) {
    od::object object;
    check(group.get_object().get(object), "an object for a process group in pg_config");
    std::vector<int> ranks;
    for (auto member : object) {
      od::field field;
      check(std::move(member).get(field), "a process group member");
      std::string_view key = key_of(field);
      if (key == "pg_name") {
        name = std::string(lenient_string(field.value()));
      } else if (key == "ranks") {
        od::array list;
        if (field.value().get_array().get(list) != simdjson::SUCCESS) continue;
        for (auto rank : list) {
          int64_t value = 0;
          check(std::move(rank).get_int64().get(value), "integer ranks in pg_config");
          ranks.push_back(static_cast<int>(value));
        }
      }
    }
    header_.process_groups.emplace_back(std::move(name), std::move(ranks));
  }

  // A string without escapes is viewed in place (no copy into simdjson's string buffer, which
  // would otherwise grow with every name of the file); one with escapes is unescaped there. The
  // token runs to the next structural character: its closing quote is its last non-space.
  std::string_view string(od::value& value, std::string_view expected) {
    std::string_view token = trim(value.raw_json_token());
    if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
      std::string_view content = token.substr(1, token.size() - 2);
      if (std::memchr(content.data(), '\\', content.size()) == nullptr) return content;
    }
    std::string_view text;
    check(value.get_string().get(text), expected);
    return text;
  }

  // The number's text as written ("1736408883731508.790", or the same inside quotes).
  std::string_view number_text(od::value& value, std::string_view expected) {
    od::json_type type{};
    check(value.type().get(type), expected);
    if (type == od::json_type::string) return string(value, expected);
    if (type != od::json_type::number) fail(simdjson::INCORRECT_TYPE, expected);
    return trim(value.raw_json_token());
  }

  // "ts" or "dur" in whatever form it was written (TimeMember); only malformed JSON throws.
  TimeMember time_member(od::value& value) {
    TimeMember member;
    od::json_type type{};
    check(value.type().get(type), "a number of microseconds");
    member.text = trim(value.raw_json_token());
    switch (type) {
      case od::json_type::number: {
        std::optional<int64_t> ns = microseconds_text_to_ns(member.text);
        member.form = ns ? TimeForm::kNumber : TimeForm::kOutOfRange;
        member.ns = ns.value_or(0);
        break;
      }
      case od::json_type::string: {
        std::optional<int64_t> ns = microseconds_text_to_ns(string(value, "a string"));
        member.form = ns ? TimeForm::kString : TimeForm::kOther;
        member.ns = ns.value_or(0);
        break;
      }
      case od::json_type::null: member.form = TimeForm::kNull; break;
      case od::json_type::object: member = {TimeForm::kOther, 0, "an object"}; break;
      case od::json_type::array: member = {TimeForm::kOther, 0, "an array"}; break;
      default: member.form = TimeForm::kOther; break;
    }
    return member;
  }

  int64_t integer(od::value& value, std::string_view expected) {
    const char* token = value.raw_json_token().data();
    std::optional<int64_t> number = parse_integer(number_text(value, expected));
    if (!number) fail_at(token, expected);
    return *number;
  }

  int small_integer(od::value& value, std::string_view expected) {
    int64_t number = integer(value, expected);
    if (number < 0 || number > std::numeric_limits<int>::max()) {
      fail(simdjson::NUMBER_OUT_OF_RANGE, expected);
    }
    return static_cast<int>(number);
  }

  // pid/tid: a number, a numeric string, or any other string (hashed).
  int64_t id(od::value& value, std::string_view expected) {
    od::json_type type{};
    check(value.type().get(type), expected);
    if (type == od::json_type::string) {
      std::string_view text = string(value, expected);
      return parse_integer(text).value_or(stable_hash(text));
    }
    int64_t number = 0;
    if (value.get_int64().get(number) == simdjson::SUCCESS) return number;
    return integer(value, expected);
  }

  // args: a value of an unexpected type is left at its default rather than refused.
  int64_t lenient_integer(od::value& value) {
    od::json_type type{};
    if (value.type().get(type) != simdjson::SUCCESS) return -1;
    std::string_view text;
    if (type == od::json_type::string) {
      if (value.get_string().get(text) != simdjson::SUCCESS) return -1;
    } else if (type == od::json_type::number) {
      text = trim(value.raw_json_token());
    } else {
      return -1;
    }
    if (std::optional<int64_t> number = parse_integer(text)) return *number;
    std::optional<int64_t> ns = microseconds_text_to_ns(text);  // 3.0 → 3
    return ns && *ns % kNsPerUs == 0 ? *ns / kNsPerUs : -1;
  }

  std::string_view lenient_string(od::value& value) {
    od::json_type type{};
    if (value.type().get(type) != simdjson::SUCCESS || type != od::json_type::string) return {};
    return string(value, "a string");
  }

  const TraceText& text_;
  const std::function<void(const ChromeEvent&)>& on_event_;
  Window window_;              // the document being parsed
  std::vector<char> chunk_;    // a chunk of events between brackets, padded
  od::parser parser_;
  od::document doc_;
  ChromeTraceHeader header_;
  ChromeEvent event_;
  uint64_t events_seen_ = 0;
  std::string_view where_ = "the top-level object";
};

// Accumulates decimal digits into a non-negative integer; false on overflow.
bool push_digit(int64_t& value, char digit) {
  return !__builtin_mul_overflow(value, 10, &value) &&
         !__builtin_add_overflow(value, digit - '0', &value);
}

}  // namespace

ChromeTraceHeader scan_chrome_trace(const TraceText& text,
                                    const std::function<void(const ChromeEvent&)>& on_event) {
  Scanner scanner(text, on_event);
  return scanner.run();
}

namespace {

// `text` cut to kShownNameBytes at a UTF-8 character boundary, "..." marking the cut.
std::string shown(std::string_view text) {
  if (text.size() <= kShownNameBytes) return std::string(text);
  size_t cut = kShownNameBytes;
  constexpr unsigned char kContinuationMask = 0xC0;
  constexpr unsigned char kContinuation = 0x80;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & kContinuationMask) == kContinuation) {
    --cut;
  }
  return std::string(text.substr(0, cut)) + "...";
}

// "'dur' is a string ("12")", "'ts' is null": what a time member holds, for messages.
std::string found(std::string_view key, const TimeMember& member) {
  switch (member.form) {
    case TimeForm::kMissing: return fmt::format("'{}' is missing", key);
    case TimeForm::kString: return fmt::format("'{}' is a string ({})", key, shown(member.text));
    case TimeForm::kOutOfRange:
      return fmt::format("'{}' is {} (out of range)", key, shown(member.text));
    default: return fmt::format("'{}' is {}", key, shown(member.text));
  }
}

bool acceptable(const TimeMember& member, StringTs strings) {
  return member.form == TimeForm::kNumber ||
         (member.form == TimeForm::kString && strings == StringTs::kAccepted);
}

}  // namespace

std::string describe_event(const ChromeEvent& event) {
  if (event.name.empty()) return fmt::format("event {}", event.index);
  return fmt::format("event {} ('{}')", event.index, shown(event.name));
}

void fail_event(const ChromeEvent& event, std::string_view source, std::string_view what) {
  throw Error(fmt::format("{}: {}: {}", source, describe_event(event), what));
}

void require_times(const ChromeEvent& event, std::string_view source, bool with_dur,
                   StringTs string_ts) {
  if (!acceptable(event.ts, string_ts)) {
    fail_event(event, source,
               fmt::format("{}, expected a number of µs{}", found("ts", event.ts),
                           string_ts == StringTs::kAccepted ? " (or a string holding one)" : ""));
  }
  if (with_dur && !acceptable(event.dur, StringTs::kRefused)) {
    fail_event(event, source, fmt::format("{}, expected a number of µs", found("dur", event.dur)));
  }
}

std::string ns_as_us(int64_t ns) {
  const auto per_us = static_cast<uint64_t>(kNsPerUs);
  uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", magnitude / per_us, magnitude % per_us);
}

// The digits d1 d2 ... with the decimal point after `point` of them (moved by an exponent) are
// µs; ns keep the digits up to point + 3, and the next digit rounds half up (away from zero).
namespace {
std::optional<int64_t> scientific_microseconds_to_ns(std::string_view text, bool negative) {
  std::string_view mantissa = text.substr(0, text.find_first_of("eE"));
  int64_t exponent = 0;
  if (mantissa.size() < text.size()) {
    std::string_view exp_text = text.substr(mantissa.size() + 1);
    if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
    std::optional<int64_t> parsed = parse_integer(exp_text);
    if (!parsed || exp_text.empty() || *parsed > 100 || *parsed < -100) return std::nullopt;
    exponent = *parsed;
  }
  size_t dot = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? std::string_view{} : mantissa.substr(dot + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!std::all_of(whole.begin(), whole.end(), is_digit) ||
      !std::all_of(fraction.begin(), fraction.end(), is_digit)) {
    return std::nullopt;
  }
  // Digits kept: those before position `keep` in whole+fraction.
  int64_t keep = static_cast<int64_t>(whole.size()) + exponent + kNsDigits;
  if (keep < 0) return 0;  // below half a nanosecond
  int64_t ns = 0;
  char round_digit = '0';
  int64_t total = static_cast<int64_t>(whole.size() + fraction.size());
  for (int64_t i = 0; i < std::max(keep, total); ++i) {
    char digit = i < total ? (i < static_cast<int64_t>(whole.size()) ? whole[i] : fraction[i - whole.size()]) : '0';
    if (i < keep) {
      if (!push_digit(ns, digit)) return std::nullopt;
    } else {
      round_digit = digit;
      break;
    }
  }
  if (round_digit >= '5' && __builtin_add_overflow(ns, 1, &ns)) return std::nullopt;
  return negative ? -ns : ns;
}
}  // namespace

std::optional<int64_t> microseconds_text_to_ns(std::string_view text) {
  text = trim(text);
  bool negative = !text.empty() && text[0] == '-';
  if (negative || (!text.empty() && text[0] == '+')) text.remove_prefix(1);
  // One pass for the usual "123.456789": digits up to the third fraction digit, the fourth
  // rounds, the rest must be digits.
  int64_t ns = 0;
  int fraction_digits = -1;  // -1 before the point
  char round_digit = '0';
  bool any_digit = false;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (fraction_digits < kNsDigits) {
        if (!push_digit(ns, c)) return std::nullopt;
        if (fraction_digits >= 0) ++fraction_digits;
      } else if (fraction_digits == kNsDigits) {
        round_digit = c;
        ++fraction_digits;
      }
    } else if (c == '.' && fraction_digits < 0) {
      fraction_digits = 0;
    } else {
      break;
    }
  }
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    return scientific_microseconds_to_ns(text, negative);
  }
  if (!any_digit) return std::nullopt;
  for (int kept = std::clamp(fraction_digits, 0, kNsDigits); kept < kNsDigits; ++kept) {
    if (__builtin_mul_overflow(ns, 10, &ns)) return std::nullopt;
  }
  if (round_digit >= '5' && __builtin_add_overflow(ns, 1, &ns)) return std::nullopt;
  return negative ? -ns : ns;
}

}  // namespace plumb::step
