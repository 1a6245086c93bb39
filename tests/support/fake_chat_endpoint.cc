#include "support/fake_chat_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace plumb::test {
namespace {

constexpr int kPollMs = 20;

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

// Waits for `fd` to be readable, checking `stop` between short polls.
bool readable(int fd, const std::atomic<bool>& stop) {
  while (!stop) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) > 0) return true;
  }
  return false;
}

// The whole request: headers, then Content-Length bytes of body.
bool read_request(int fd, const std::atomic<bool>& stop, FakeRequest& out) {
  std::string data;
  size_t header_end = std::string::npos, need = 0;
  while (header_end == std::string::npos || data.size() < header_end + 4 + need) {
    if (!readable(fd, stop)) return false;
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return false;
    data.append(buffer, static_cast<size_t>(n));
    if (header_end == std::string::npos && (header_end = data.find("\r\n\r\n")) != std::string::npos) {
      for (const char* name : {"Content-Length:", "content-length:"}) {
        const size_t at = data.find(name);
        if (at < header_end) need = std::strtoul(data.c_str() + at + 15, nullptr, 10);
      }
    }
  }
  const size_t sp1 = data.find(' '), sp2 = data.find(' ', sp1 + 1);
  out.method = data.substr(0, sp1);
  out.path = data.substr(sp1 + 1, sp2 - sp1 - 1);
  out.headers = data.substr(0, header_end);
  out.body = data.substr(header_end + 4, need);
  return true;
}

}  // namespace

FakeChatEndpoint::FakeChatEndpoint(std::vector<FakeReply> script) : script_(std::move(script)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listen_fd_, 16) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("fake chat endpoint: cannot listen on loopback");
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

FakeChatEndpoint::~FakeChatEndpoint() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::string FakeChatEndpoint::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<FakeRequest> FakeChatEndpoint::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool FakeChatEndpoint::wait_for(size_t n, double seconds) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::duration<double>(seconds),
                           [&] { return requests_.size() >= n; });
}

void FakeChatEndpoint::serve() {
  while (readable(listen_fd_, stop_)) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    answer(fd);
    ::close(fd);
  }
}

void FakeChatEndpoint::answer(int fd) {
  FakeRequest request;
  if (!read_request(fd, stop_, request)) return;
  FakeReply reply;
  {
    std::lock_guard lock(mutex_);
    reply = script_[std::min(requests_.size(), script_.size() - 1)];
    requests_.push_back(request);
    changed_.notify_all();
  }
  if (reply.hang) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, kPollMs) > 0) {
        char c;
        if (::read(fd, &c, 1) <= 0) return;  // the client gave up and closed
      }
    }
    return;
  }
  const std::string text = "HTTP/1.1 " + std::to_string(reply.status) + " " +
                           reason(reply.status) + "\r\nContent-Length: " +
                           std::to_string(reply.body.size()) + "\r\nConnection: close\r\n" +
                           reply.headers + "\r\n" + reply.body;
  size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace plumb::test
