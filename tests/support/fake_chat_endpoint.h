// A loopback HTTP endpoint that stands in for a chat webhook (Feishu, Slack, ...) in the relay's
// tests: it records every request and answers from a script (status, body, headers), or holds
// the connection without answering to test timeouts. One connection at a time, closed after
// each answer: what the relay's client does, and nothing more.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace plumb::test {

struct FakeReply {
  int status = 200;
  std::string body;
  std::string headers;  // extra header lines, each ending "\r\n" ("Retry-After: 1\r\n")
  bool hang = false;    // read the request, never answer
};

struct FakeRequest {
  std::string method;
  std::string path;
  std::string headers;  // as received
  std::string body;
};

class FakeChatEndpoint {
 public:
  // Replies in order; the last one repeats.
  explicit FakeChatEndpoint(std::vector<FakeReply> script);
  ~FakeChatEndpoint();
  FakeChatEndpoint(const FakeChatEndpoint&) = delete;
  FakeChatEndpoint& operator=(const FakeChatEndpoint&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "/open-apis/bot/v2/hook/test-token") const;
  std::vector<FakeRequest> requests() const;
  // Waits up to `seconds` for `n` requests; false when fewer came.
  bool wait_for(size_t n, double seconds) const;

 private:
  void serve();
  void answer(int fd);

  std::vector<FakeReply> script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<FakeRequest> requests_;
  std::thread thread_;
};

}  // namespace plumb::test
