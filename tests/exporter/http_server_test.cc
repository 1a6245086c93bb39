// The HTTP server over real loopback sockets on port 0.
#include "exporter/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/subprocess.h"

namespace plumb::exporter {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A blocking loopback client; reads time out after 5 s so that a server bug fails the test
// rather than hanging it.
class Client {
 public:
  explicit Client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  void send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  void shut_write() { ::shutdown(fd_, SHUT_WR); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Closes with a reset (SO_LINGER 0), as a scraper that gives up does.
  void reset() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  // Reads until `n` bytes are buffered or the peer closes; false on close or timeout.
  bool fill(std::size_t n) {
    char buf[65536];
    while (buf_.size() < n) {
      const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
      if (got <= 0) return false;
      buf_.append(buf, static_cast<std::size_t>(got));
    }
    return true;
  }
  // One response: its head (status line and headers) and body; "" when the connection closed.
  std::pair<std::string, std::string> response(bool head_request = false) {
    std::size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(buf_.size() + 1)) return {"", ""};
    }
    const std::string head = buf_.substr(0, end + 4);
    std::size_t length = 0;
    const size_t cl = head.find("Content-Length: ");
    if (cl != std::string::npos && !head_request) length = std::stoul(head.substr(cl + 16));
    if (!fill(end + 4 + length)) return {head, "(incomplete body)"};
    std::string body = buf_.substr(end + 4, length);
    buf_.erase(0, end + 4 + length);
    return {head, body};
  }
  int status() {
    const std::string head = response().first;
    return head.size() > 12 ? std::stoi(head.substr(9, 3)) : 0;
  }
  // True when the server closed the connection (EOF, or a reset) and nothing else came.
  bool closed_by_server() {
    char c;
    return buf_.empty() && ::recv(fd_, &c, 1, 0) <= 0;
  }

 private:
  int fd_;
  bool connected_ = false;
  std::string buf_;
};

HttpResponse echo(const HttpRequest& r) {
  if (r.path == "/boom") throw std::runtime_error("boom");
  return {200, "text/plain; charset=utf-8", r.method + " " + r.path + " " + r.body, {}};
}

std::unique_ptr<HttpServer> started(HttpServerOptions o = {}, HttpHandler h = echo) {
  o.listen = "127.0.0.1:0";
  auto server = std::make_unique<HttpServer>(o, h);
  server->start();
  return server;
}

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";

TEST(HttpServer, AnswersAGet) {
  auto server = started();
  Client c(server->port());
  ASSERT_TRUE(c.connected());
  c.send("GET /metrics?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto [head, body] = c.response();
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 13\r\n"
            "Connection: keep-alive\r\n\r\n");
  EXPECT_EQ(body, "GET /metrics ");
}

TEST(HttpServer, KeepsTheConnectionForASecondRequestAndReadsBodies) {
  auto server = started();
  Client c(server->port());
  c.send(kGet);
  EXPECT_EQ(c.response().second, "GET /metrics ");
  c.send("POST /api/v2/alerts HTTP/1.1\r\nContent-Length: 4\r\n\r\n[{}]");
  EXPECT_EQ(c.response().second, "POST /api/v2/alerts [{}]");
}

TEST(HttpServer, AnswersPipelinedRequestsInOrder) {
  auto server = started();
  Client c(server->port());
  c.send("GET /a HTTP/1.1\r\n\r\nHEAD /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(c.response().second, "GET /a ");
  const auto [head, body] = c.response(true);
  EXPECT_NE(head.find("Content-Length: 8\r\n"), std::string::npos) << head;  // "HEAD /b "
  const auto [last_head, last] = c.response();
  EXPECT_EQ(last, "GET /c ");
  EXPECT_NE(last_head.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
}

TEST(HttpServer, Http10ClosesAfterTheAnswerAndAHalfClosedClientIsAnswered) {
  auto server = started();
  Client old(server->port());
  old.send("GET /x HTTP/1.0\r\n\r\n");
  EXPECT_EQ(old.response().second, "GET /x ");
  EXPECT_TRUE(old.closed_by_server());
  Client half(server->port());
  half.send("GET /y HTTP/1.1\r\n\r\n");
  half.shut_write();
  EXPECT_EQ(half.response().second, "GET /y ");
  EXPECT_TRUE(half.closed_by_server());
}

TEST(HttpServer, MalformedIs400AndOversizedHeadersAre431ThenClosed) {
  HttpServerOptions o;
  o.max_header_bytes = 1024;
  auto server = started(o);
  Client bad(server->port());
  bad.send("HELLO\r\n\r\n");
  const auto [head, body] = bad.response();
  EXPECT_EQ(head.substr(0, 25), "HTTP/1.1 400 Bad Request\r");
  EXPECT_EQ(body, "malformed request line: expected METHOD TARGET HTTP/1.1\n");
  EXPECT_TRUE(bad.closed_by_server());
  Client big(server->port());
  big.send("GET / HTTP/1.1\r\nCookie: " + std::string(8000, 'c') + "\r\n\r\n");
  const auto [big_head, big_body] = big.response();
  EXPECT_EQ(big_head.substr(0, 44), "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(big_body, "request line and headers larger than the limit of 1024 bytes\n");
  EXPECT_TRUE(big.closed_by_server());
}

TEST(HttpServer, AHandlerThatThrowsIs500AndTheServerGoesOn) {
  auto server = started();
  Client c(server->port());
  c.send("GET /boom HTTP/1.1\r\n\r\n");
  const auto [head, body] = c.response();
  EXPECT_EQ(head.substr(0, 34), "HTTP/1.1 500 Internal Server Error");
  EXPECT_EQ(body, "internal error: boom\n");
  c.send(kGet);
  EXPECT_EQ(c.status(), 200);
}

// Half a request, then silence: another client is answered at once, and the slow one gets a 408
// and a close once its request timeout has passed.
TEST(HttpServer, ASlowClientDoesNotDelayAnotherAndTimesOutWith408) {
  HttpServerOptions o;
  o.request_timeout_seconds = 1.5;
  auto server = started(o);
  Client slow(server->port());
  slow.send("GET /metrics HTTP/1.1\r\nHo");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Clock::time_point t = Clock::now();
  Client fast(server->port());
  fast.send(kGet);
  EXPECT_EQ(fast.status(), 200);
  EXPECT_LT(seconds_since(t), 1.0);  // generous: the server did not wait for the slow one
  const auto [head, body] = slow.response();
  EXPECT_EQ(head.substr(0, 29), "HTTP/1.1 408 Request Timeout\r");
  EXPECT_EQ(body, "request not complete within 1.5 s\n");
  EXPECT_TRUE(slow.closed_by_server());
}

TEST(HttpServer, AnIdleKeepAliveConnectionIsClosed) {
  HttpServerOptions o;
  o.idle_timeout_seconds = 0.3;
  auto server = started(o);
  Client c(server->port());
  c.send(kGet);
  EXPECT_EQ(c.status(), 200);
  EXPECT_TRUE(c.closed_by_server());  // within the 5 s read timeout
}

TEST(HttpServer, Answers200ConcurrentConnections) {
  auto server = started();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 200; ++i) {
    clients.push_back(std::make_unique<Client>(server->port()));
    ASSERT_TRUE(clients.back()->connected()) << i;
  }
  for (int i = 0; i < 200; ++i) clients[i]->send("GET /" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(clients[i]->response().second, "GET /" + std::to_string(i) + " ") << i;
  }
}

TEST(HttpServer, PastMaxConnectionsANewClientGets503) {
  HttpServerOptions o;
  o.max_connections = 2;
  auto server = started(o);
  Client a(server->port()), b(server->port());
  a.send(kGet);
  b.send(kGet);
  EXPECT_EQ(a.status(), 200);
  EXPECT_EQ(b.status(), 200);
  Client c(server->port());
  EXPECT_EQ(c.status(), 503);
  a.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Client d(server->port());
  d.send(kGet);
  EXPECT_EQ(d.status(), 200);
}

// A scraper that gives up in the middle of a large answer: no SIGPIPE (the test process would
// die), and the next client is served.
TEST(HttpServer, AClientGoneMidResponseDoesNotKillTheServer) {
  const std::string big(4 * 1024 * 1024, 'x');
  auto server = started({}, [&](const HttpRequest&) {
    return HttpResponse{200, "text/plain", big, {}};
  });
  for (int i = 0; i < 3; ++i) {
    Client c(server->port());
    c.send(kGet);
    ASSERT_TRUE(c.fill(1000));
    i % 2 == 0 ? c.reset() : c.close();
  }
  Client next(server->port());
  next.send(kGet);
  const auto [head, body] = next.response();
  EXPECT_EQ(body.size(), big.size());
}

TEST(HttpServer, ABusyPortIsOneErrorNamingTheOption) {
  auto server = started();
  const std::string listen = "127.0.0.1:" + std::to_string(server->port());
  HttpServerOptions o;
  o.listen = listen;
  EXPECT_EQ(test::error_message([&] { HttpServer second(o, echo); }),
            "--listen " + listen + ": cannot listen: Address already in use");
  o.listen = "127.0.0.1";
  o.option_name = "--webhook-listen";
  EXPECT_EQ(test::error_message([&] { HttpServer second(o, echo); }),
            "--webhook-listen 127.0.0.1: expected HOST:PORT");
}

TEST(HttpServer, ListensOnIpv6LoopbackAndEveryAddress) {
  HttpServerOptions o;
  o.listen = ":0";
  HttpServer all(o, echo);
  all.start();
  Client c(all.port());  // IPv4 loopback reaches the dual-stack listener
  c.send(kGet);
  EXPECT_EQ(c.status(), 200);
}

TEST(HttpServer, ServeReturnsWhenTheFlagIsSetAndStopIsPrompt) {
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  HttpServer server(o, echo);
  std::atomic<bool> stop{false};
  std::thread t([&] { server.serve(stop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Clock::time_point t0 = Clock::now();
  stop = true;
  t.join();
  EXPECT_LT(seconds_since(t0), 1.0);
  server.start();
  const Clock::time_point t1 = Clock::now();
  server.stop();
  EXPECT_LT(seconds_since(t1), 1.0);
}

}  // namespace
}  // namespace plumb::exporter
