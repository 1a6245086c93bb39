// What the reference server (serve/mock_server.h) is told to do: its timings, its capacity and
// its faults, from `plumb serve mock`'s options, from a struct in a test, or per request from an
// `X-Plumb-Mock: ttft=50ms,itl=5ms,stall=3:200ms` header (docs/serve.md).
#pragma once

#include "serve/request.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::serve {

// How one generation is timed and which fault it shows. Every duration is nanoseconds.
struct MockPlan {
  Nanos ttft_ns = 0;            // from a slot being free to the first token
  Nanos itl_ns = 0;             // the gap between tokens with one generation active
  Nanos itl_per_active_ns = 0;  // added to the gap for each other active generation
  int tokens = 0;               // output length when the request names none (0: kDefaultTokens)
  int stall_after = -1;         // after this many tokens, pause stall_ns more (-1: never)
  Nanos stall_ns = 0;
  int status = 200;             // answer with this HTTP status instead of a stream
  int drop_after = -1;          // after this many tokens, close the connection
  int malformed_after = -1;     // after this many tokens, send an event that is not JSON
  int hang_after = -1;          // after this many tokens, send nothing more (the slot is held)
  bool close_delimited = false; // end the body by closing (no chunked encoding, Connection: close)
};

constexpr int kDefaultTokens = 16;

// The gap before a generation's next token with `active` generations holding a slot:
// itl + itl_per_active × (active − 1), a decode step bound by memory bandwidth (each step reads
// the weights once and every active sequence's KV cache).
Nanos mock_gap(const MockPlan& plan, int active);

// HTTP `status` for the requests `first`..`last` (0-based, by arrival), or every `every`th
// (the every-th, 2×every-th, ... request: indexes every-1, 2*every-1, ...).
struct MockErrorRule {
  int status = 500;
  std::int64_t first = -1;
  std::int64_t last = -1;
  std::int64_t every = 0;
  bool matches(std::int64_t index) const;
};

struct MockConfig {
  std::string host = "127.0.0.1";
  int port = 0;           // 0: any free port (read back with MockServer::port())
  int slots = 0;          // concurrent generations; the rest wait FIFO (0: no limit)
  MockPlan plan;          // every request's timings and faults unless its header says otherwise
  std::vector<MockErrorRule> errors;
  std::string model = "mock";  // the model name the answers and /metrics carry
  std::string log_path;        // a JSONL line per finished request (the truth), "" = none
};

// "50ms", "1.5s", "200us", "0": a duration in ns. Throws plumb::Error "WHAT TEXT: expected a
// duration such as 50ms, 200us or 1.5s".
Nanos parse_mock_duration(std::string_view text, std::string_view what);

// Applies "key=value,..." (an X-Plumb-Mock header or --plan) over `plan`. Keys: ttft, itl,
// itl_per_active, tokens, stall=K:DURATION, status, drop, malformed, hang, framing=chunked|close.
// Throws plumb::Error "WHAT: unknown key 'x' (expected ...)" and the like.
void apply_mock_overrides(MockPlan& plan, std::string_view text, std::string_view what);

// One key's value, from an option: errors name `option` ("--ttft 'fast': expected a duration
// such as 50ms, 200us or 1.5s").
void apply_mock_option(MockPlan& plan, std::string_view key, std::string_view value,
                       std::string_view option);

// "500:3-5" (requests 3 to 5), "500:7" (request 7) or "503:every=4". Throws plumb::Error.
MockErrorRule parse_mock_error_rule(std::string_view text, std::string_view what);

}  // namespace plumb::serve
