// run_load end to end against a small loopback HTTP server inside the test, one thread per
// connection, whose answers are programmed per test (serve/mock_server.h is the full one).
#include "serve/client.h"
#include "serve/sse.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "exporter/curl_library.h"
#include "support/subprocess.h"

namespace plumb::serve {
namespace {

// What the server does with one request on a connection: writes to the socket; returns false
// to close the connection.
using Answer = std::function<bool(int fd)>;

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string chunk(std::string_view data) {
  char size[32];
  snprintf(size, sizeof size, "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

constexpr std::string_view kStreamHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

class LoopbackServer {
 public:
  explicit LoopbackServer(Answer answer) : answer_(std::move(answer)) {
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listen_, 1024), 0);
    socklen_t length = sizeof address;
    getsockname(listen_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~LoopbackServer() {
    stopping_ = true;
    shutdown(listen_, SHUT_RDWR);
    close(listen_);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (int fd : connections_) shutdown(fd, SHUT_RDWR);
    for (std::thread& t : workers_) t.join();
    for (int fd : connections_) close(fd);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  int connections() const { return accepted_; }
  // The first request's request line and headers.
  std::string first_head() {
    std::lock_guard lock(mutex_);
    return first_head_;
  }
  std::string first_line() {
    std::string head = first_head();
    return head.substr(0, head.find("\r\n"));
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      int fd = accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      ++accepted_;
      int one = 1;  // each event goes out as written, as a streaming server's do
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard lock(mutex_);
      connections_.push_back(fd);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }
  // Reads requests (headers and a Content-Length body) and answers each.
  void serve(int fd) {
    std::string in;
    char buffer[65536];
    while (true) {
      size_t head_end;
      while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) return;
        in.append(buffer, static_cast<size_t>(n));
      }
      size_t at = in.find("Content-Length: ");
      size_t length = at < head_end ? std::stoul(in.substr(at + 16)) : 0;
      while (in.size() < head_end + 4 + length) {
        ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) return;
        in.append(buffer, static_cast<size_t>(n));
      }
      {
        std::lock_guard lock(mutex_);
        if (first_head_.empty()) first_head_ = in.substr(0, head_end);
      }
      in.erase(0, head_end + 4 + length);
      ++requests_;
      if (!answer_(fd)) {
        shutdown(fd, SHUT_RDWR);
        return;
      }
    }
  }

  Answer answer_;
  int listen_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> connections_;
  std::vector<std::thread> workers_;
  std::string first_head_;
};

std::string completion_event(std::string_view text) {
  return "data: {\"choices\":[{\"index\":0,\"text\":\"" + std::string(text) + "\"}]}\n\n";
}

// An OpenAI completions stream of `tokens` tokens, `gap` apart, with usage and [DONE].
Answer stream_answer(int tokens, std::chrono::microseconds gap = {}) {
  return [tokens, gap](int fd) {
    if (!send_all(fd, kStreamHead)) return false;
    for (int i = 0; i < tokens; ++i) {
      if (gap.count() > 0) std::this_thread::sleep_for(gap);
      if (!send_all(fd, chunk(completion_event(" t")))) return false;
    }
    std::string usage =
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" +
        std::to_string(tokens) + "}}\n\n";
    return send_all(fd, chunk(usage + "data: [DONE]\n\n")) && send_all(fd, "0\r\n\r\n");
  };
}

Endpoint endpoint_for(const LoopbackServer& server) {
  Endpoint endpoint;
  endpoint.url = server.url();
  endpoint.api = "openai-completions";
  endpoint.model = "m";
  return endpoint;
}

Workload open_loop(int n, Nanos gap_ns = 0, int concurrency = 0) {
  Workload workload;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec;
    spec.index = i;
    spec.scheduled_ns = i * gap_ns;
    spec.prompt = "hello";
    spec.input_tokens = 1;
    spec.max_output_tokens = 4;
    workload.requests.push_back(spec);
  }
  workload.concurrency = concurrency;
  return workload;
}

TEST(ServeClient, StreamsAreRecordedInOrderWithUsage) {
  LoopbackServer server(stream_answer(4));
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(20, 1'000'000), RunControl{});
  ASSERT_EQ(outcome.records.size(), 20u);
  EXPECT_EQ(outcome.not_released, 0);
  for (size_t i = 0; i < outcome.records.size(); ++i) {
    const RequestRecord& r = outcome.records[i];
    EXPECT_EQ(r.index, static_cast<std::int64_t>(i));
    EXPECT_TRUE(r.ok()) << r.error_detail;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.scheduled_ns, static_cast<Nanos>(i) * 1'000'000);
    EXPECT_EQ(r.ready_ns, r.scheduled_ns);
    EXPECT_GE(r.sent_ns, r.scheduled_ns);
    ASSERT_EQ(r.chunks.size(), 4u);
    EXPECT_EQ(r.first_token_ns, r.chunks[0].at_ns);
    EXPECT_GT(r.first_token_ns, r.sent_ns);
    EXPECT_GE(r.end_ns, r.chunks.back().at_ns);
    EXPECT_EQ(r.output_tokens, 4);
    EXPECT_EQ(r.input_tokens, 3);
    EXPECT_EQ(r.token_source, TokenSource::usage);
  }
  EXPECT_GE(outcome.duration_ns, outcome.records.back().end_ns);
}

TEST(ServeClient, ConnectionsAreKeptAlive) {
  LoopbackServer server(stream_answer(2));
  Workload workload = open_loop(30);
  workload.closed_loop = true;
  workload.concurrency = 1;
  RunOutcome outcome = run_load(endpoint_for(server), workload, RunControl{});
  EXPECT_EQ(outcome.records.size(), 30u);
  EXPECT_EQ(server.requests(), 30);
  EXPECT_EQ(server.connections(), 1);  // one at a time: one connection, reused
}

TEST(ServeClient, ConcurrencyCapsAnOpenLoop) {
  LoopbackServer server(stream_answer(3, std::chrono::milliseconds(5)));
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(12, 0, 3), RunControl{});
  ASSERT_EQ(outcome.records.size(), 12u);
  for (const RequestRecord& r : outcome.records) {
    EXPECT_EQ(r.scheduled_ns, 0);  // the schedule stays; the wait shows in ready_ns
    EXPECT_TRUE(r.ok()) << r.error_detail;
  }
  // At most 3 at once: the fourth was ready when one of the first three ended (the one whose
  // transfer libcurl finished first, not always the one whose end marker came first).
  std::vector<Nanos> ends = {outcome.records[0].end_ns, outcome.records[1].end_ns,
                             outcome.records[2].end_ns};
  const RequestRecord& fourth = outcome.records[3];
  EXPECT_NE(std::find(ends.begin(), ends.end(), fourth.ready_ns), ends.end()) << fourth.ready_ns;
  EXPECT_GE(fourth.sent_ns, fourth.ready_ns);
}

TEST(ServeClient, ClosedLoopReleasesTheNextAtTheEndOfOne) {
  LoopbackServer server(stream_answer(2));
  Workload workload = open_loop(10);
  workload.closed_loop = true;
  workload.concurrency = 2;
  RunOutcome outcome = run_load(endpoint_for(server), workload, RunControl{});
  ASSERT_EQ(outcome.records.size(), 10u);
  EXPECT_EQ(outcome.records[0].scheduled_ns, 0);
  EXPECT_EQ(outcome.records[1].scheduled_ns, 0);
  // Each later request is due at the end of an earlier one, each end freeing one slot.
  std::vector<Nanos> free_at = {outcome.records[0].end_ns};
  for (size_t i = 2; i < outcome.records.size(); ++i) {
    const RequestRecord& r = outcome.records[i];
    free_at.push_back(outcome.records[i - 1].end_ns);
    EXPECT_EQ(r.ready_ns, r.scheduled_ns);
    auto slot = std::find(free_at.begin(), free_at.end(), r.scheduled_ns);
    ASSERT_NE(slot, free_at.end()) << i;
    free_at.erase(slot);
    EXPECT_GE(r.sent_ns, r.scheduled_ns);
  }
}

TEST(ServeClient, OnDoneFalseStopsReleasing) {
  LoopbackServer server(stream_answer(1));
  RunControl control;
  int done = 0;
  control.on_done = [&done](const RequestRecord&) { return ++done < 3; };
  Workload workload = open_loop(10);
  workload.closed_loop = true;  // one at a time: nothing else is in flight when the third ends
  workload.concurrency = 1;
  RunOutcome outcome = run_load(endpoint_for(server), workload, control);
  EXPECT_EQ(outcome.records.size(), 3u);
  EXPECT_EQ(outcome.not_released, 7);
}

TEST(ServeClient, TheDurationStopsReleasing) {
  LoopbackServer server(stream_answer(1));
  Workload workload = open_loop(10, 10'000'000);
  workload.duration_ns = 35'000'000;  // requests due at 0, 10, 20, 30 ms go
  RunOutcome outcome = run_load(endpoint_for(server), workload, RunControl{});
  EXPECT_EQ(outcome.records.size(), 4u);
  EXPECT_EQ(outcome.not_released, 6);
}

TEST(ServeClient, AStopFlagStopsReleasing) {
  LoopbackServer server(stream_answer(1));
  std::atomic<bool> stop{true};
  RunControl control;
  control.stop = &stop;
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(5), control);
  EXPECT_TRUE(outcome.records.empty());
  EXPECT_EQ(outcome.not_released, 5);
}

TEST(ServeClient, AnHttpErrorKeepsTheStartOfItsBody) {
  LoopbackServer server([](int fd) {
    return send_all(fd,
                    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 11\r\n\r\noverloaded\n");
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(2), RunControl{});
  ASSERT_EQ(outcome.records.size(), 2u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::http_status);
  EXPECT_EQ(outcome.records[0].http_status, 500);
  EXPECT_EQ(outcome.records[0].error_detail, "HTTP 500: overloaded");
}

TEST(ServeClient, ARefusedConnectionIsAConnectError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);
  close(fd);  // bound, never listening, closed: nothing answers on that port
  Endpoint endpoint;
  endpoint.url = "http://127.0.0.1:" + std::to_string(port);
  endpoint.api = "tgi";
  RunOutcome outcome = run_load(endpoint, open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::connect);
  EXPECT_EQ(outcome.records[0].error_detail,
            "cannot connect to 127.0.0.1:" + std::to_string(port) + ": Connection refused");
}

TEST(ServeClient, AFailedTlsHandshakeIsAConnectError) {
  LoopbackServer server(stream_answer(1));  // speaks plain HTTP: the handshake fails
  Endpoint endpoint = endpoint_for(server);
  endpoint.url = "https" + endpoint.url.substr(4);
  RunControl control;
  control.connect_timeout_s = 0.2;  // the server waits for a request that never comes
  RunOutcome outcome = run_load(endpoint, open_loop(1), control);
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::connect);
  EXPECT_FALSE(outcome.records[0].error_detail.empty()) << "libcurl's own words";
}

TEST(ServeClient, AServerThatHangsMidStreamIsATimeout) {
  LoopbackServer server([](int fd) {
    send_all(fd, kStreamHead);
    send_all(fd, chunk(completion_event(" t")));
    char byte;
    recv(fd, &byte, 1, 0);  // until the client gives up
    return false;
  });
  RunControl control;
  control.request_timeout_s = 0.2;
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), control);
  ASSERT_EQ(outcome.records.size(), 1u);
  const RequestRecord& r = outcome.records[0];
  EXPECT_EQ(r.error, ErrorKind::timeout);
  EXPECT_EQ(r.error_detail, "no end within 0.2 s of being sent (1 chunks read)");
  EXPECT_EQ(r.chunks.size(), 1u);
}

TEST(ServeClient, AStreamClosedBeforeItsEndIsDropped) {
  LoopbackServer server([](int fd) {
    send_all(fd, kStreamHead);
    send_all(fd, chunk(completion_event(" t")));
    return false;  // closed without the last chunk
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::dropped);
  EXPECT_EQ(outcome.records[0].error_detail.rfind("the connection closed before data: [DONE]", 0),
            0u)
      << outcome.records[0].error_detail;
  EXPECT_EQ(outcome.records[0].output_tokens, 1);
  EXPECT_EQ(outcome.records[0].token_source, TokenSource::chunks);
}

TEST(ServeClient, AStreamThatEndsWithoutItsMarkerIsDropped) {
  LoopbackServer server([](int fd) {
    return send_all(fd, kStreamHead) && send_all(fd, chunk(completion_event(" t"))) &&
           send_all(fd, "0\r\n\r\n");
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::dropped);
  EXPECT_EQ(outcome.records[0].error_detail, "the stream ended before data: [DONE]");
}

TEST(ServeClient, AMalformedStreamIsMalformed) {
  LoopbackServer server([](int fd) {
    return send_all(fd, kStreamHead) && send_all(fd, chunk("data: {not json\n\n")) &&
           send_all(fd, "0\r\n\r\n");
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::malformed);
  EXPECT_EQ(outcome.records[0].error_detail.rfind("an SSE event that is not JSON (", 0), 0u);
}

// A hostile server (issue 31, "bad input loses nothing"): an event one byte over the parser's
// bound, and an event nested 100,000 deep, are each a counted malformed request with its reason,
// never a crash or a hang.
TEST(ServeClient, AnSseEventOverTheBoundIsMalformed) {
  LoopbackServer server([](int fd) {
    const std::string event = "data: " + std::string(kMaxSseEventBytes + 1, 'x') + "\n\n";
    return send_all(fd, kStreamHead) && send_all(fd, chunk(event)) && send_all(fd, "0\r\n\r\n");
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::malformed);
  EXPECT_EQ(outcome.records[0].error_detail, "an SSE event over 1048576 bytes");
}

TEST(ServeClient, AnSseEventNested100000DeepIsMalformed) {
  constexpr size_t kDepth = 100'000;
  LoopbackServer server([](int fd) {
    const std::string event = "data: " + std::string(kDepth, '[') + std::string(kDepth, ']') + "\n\n";
    return send_all(fd, kStreamHead) && send_all(fd, chunk(event)) && send_all(fd, "0\r\n\r\n");
  });
  RunOutcome outcome = run_load(endpoint_for(server), open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_EQ(outcome.records[0].error, ErrorKind::malformed);
  EXPECT_EQ(outcome.records[0].error_detail,
            "an SSE event that is not JSON (JSON nested deeper than 512 levels (at byte 512)): " +
                std::string(80, '['));  // the event's first 80 bytes
}

TEST(ServeClient, Http2OnHttpSpeaksItWithPriorKnowledge) {
  // An HTTP/1.1 server: it sees HTTP/2's connection preface, then the client gives up on it.
  LoopbackServer server([](int fd) {
    return send_all(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") && false;
  });
  Endpoint endpoint = endpoint_for(server);
  endpoint.http2 = true;
  // libcurl before 8.0.0 breaks a reused h2c connection, so plumb refuses h2c there (client.cc).
  const curl_version_info_data* info = exporter::curl_api().version_info(CURLVERSION_NOW);
  if (info->version_num < 0x080000) {
    EXPECT_EQ(test::error_message([&] { run_load(endpoint, open_loop(1), RunControl{}); }),
              std::string("plumb serve: --http2 on http:// (h2c): this libcurl (") + info->version +
                  ") fails every stream after a connection's first (curl issue 10634, fixed in "
                  "8.0.0); use https:// (HTTP/2 by ALPN) or leave out --http2");
    return;
  }
  RunOutcome outcome = run_load(endpoint, open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_FALSE(outcome.records[0].ok());
  EXPECT_EQ(server.first_line(), "PRI * HTTP/2.0");
}

TEST(ServeClient, HeadersGoOnEveryRequest) {
  LoopbackServer server(stream_answer(1));
  Endpoint endpoint = endpoint_for(server);
  endpoint.headers = {"Authorization: Bearer k"};
  RunOutcome outcome = run_load(endpoint, open_loop(1), RunControl{});
  ASSERT_EQ(outcome.records.size(), 1u);
  EXPECT_TRUE(outcome.records[0].ok());
  std::string head = server.first_head();
  EXPECT_EQ(server.first_line(), "POST /v1/completions HTTP/1.1");
  EXPECT_NE(head.find("\r\nAuthorization: Bearer k"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Type: application/json"), std::string::npos) << head;
  EXPECT_EQ(head.find("Expect:"), std::string::npos) << head;
}

TEST(ServeClient, BadSetupIsRefusedBeforeAnythingIsSent) {
  Endpoint endpoint;
  endpoint.url = "http://127.0.0.1:1";
  endpoint.api = "tgj";
  try {
    run_load(endpoint, open_loop(1), RunControl{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "plumb serve: unknown API 'tgj' (did you mean 'tgi'?); expected one "
                 "of openai-completions, openai-chat, tgi, triton");
  }
  endpoint.api = "tgi";
  endpoint.url = "127.0.0.1:1";
  EXPECT_THROW(run_load(endpoint, open_loop(1), RunControl{}), Error);
}

}  // namespace
}  // namespace plumb::serve
