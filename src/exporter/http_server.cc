#include "exporter/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "common/error.h"
#include "exporter/http_request.h"

namespace plumb::exporter {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTickMilliseconds = 100;          // deadlines and the stop flag: checked this often
constexpr std::size_t kReadChunk = 16 * 1024;
// Answers queued for a client that does not read them: past this, its pipelined requests wait.
constexpr std::size_t kMaxPendingOutput = 256 * 1024;
// After the last answer of a closing connection: how long its unread input is drained so that the
// client reads the answer rather than a reset (nginx's lingering close).
constexpr double kLingerSeconds = 2;
constexpr int kMaxEvents = 64;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string errno_text(int e) { return std::strerror(e); }

struct Connection {
  std::string in;
  std::string out;
  std::size_t sent = 0;
  Clock::time_point since;  // start of the current wait (request, idle, write progress, linger)
  bool served = false;      // answered a request: waiting for the next one is idle time
  bool closing = false;     // close once `out` is sent
  bool lingering = false;   // sent all, write side shut: draining input until EOF
  bool peer_done = false;   // the client shut its side (EOF)
  bool dead = false;        // a socket error: close now
  uint32_t events = 0;      // what epoll watches for it
  std::size_t pending() const { return out.size() - sent; }
};

int listen_on(const addrinfo& ai, bool dual_stack) {
  const int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          ai.ai_protocol);
  if (fd < 0) return -1;
  const int one = 1;
  const int zero = 0;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (dual_stack && ai.ai_family == AF_INET6) {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  }
  if (::bind(fd, ai.ai_addr, ai.ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

struct Attempt {
  int fd = -1;
  int error = EADDRNOTAVAIL;  // errno of the last socket/bind/listen that failed
  int gai = 0;                // getaddrinfo's failure
};

// The first address of `family` that HOST:PORT resolves to (passively) that we can listen on.
Attempt try_listen(const ListenAddress& a, int family) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  hints.ai_family = family;
  addrinfo* list = nullptr;
  const std::string port = std::to_string(a.port);
  Attempt at;
  at.gai = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), port.c_str(), &hints, &list);
  if (at.gai != 0) return at;
  for (addrinfo* ai = list; ai != nullptr && at.fd < 0; ai = ai->ai_next) {
    at.fd = listen_on(*ai, a.host.empty());
    if (at.fd < 0) at.error = errno;
  }
  freeaddrinfo(list);
  return at;
}

// ":PORT" is every address: IPv6 dual-stack, or IPv4 alone on a machine without IPv6.
int open_listener(const HttpServerOptions& o) {
  const ListenAddress a = parse_listen_address(o.listen, o.option_name);
  Attempt at = try_listen(a, a.host.empty() ? AF_INET6 : AF_UNSPEC);
  if (at.fd < 0 && a.host.empty() &&
      (at.gai != 0 || at.error == EAFNOSUPPORT || at.error == EADDRNOTAVAIL)) {
    at = try_listen(a, AF_INET);
  }
  if (at.fd >= 0) return at.fd;
  const std::string what = fmt::format("{} {}", o.option_name, o.listen);
  if (at.gai != 0) throw Error(fmt::format("{}: cannot listen: {}", what, gai_strerror(at.gai)));
  throw Error(fmt::format("{}: cannot listen: {}", what, errno_text(at.error)));
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& text, const std::string& option_name) {
  const Error bad(fmt::format("{} {}: expected HOST:PORT", option_name, text));
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw bad;
  std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw bad;
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of(":[]") != std::string::npos) {
    throw bad;  // an IPv6 address needs its brackets: [::1]:9464
  }
  if (!all_digits(port) || port.size() > 5 || std::stoi(port) > 65535) throw bad;
  return {host, std::stoi(port)};
}

struct HttpServer::Impl {
  HttpServerOptions options;
  HttpHandler handler;
  HttpLimits limits;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;  // stop() writes it so that epoll_wait returns at once
  std::atomic<bool> stopping{false};
  std::thread thread;
  std::unordered_map<int, Connection> connections;
  Clock::time_point accept_paused_until{};

  void watch(int fd, uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd, op, fd, &ev) != 0 && op != EPOLL_CTL_DEL) {
      throw Error(fmt::format("{} {}: epoll_ctl: {}", options.option_name, options.listen,
                              errno_text(errno)));
    }
  }

  void close_connection(int fd) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    connections.erase(fd);
  }

  // Past max_connections a client gets a short 503 (best effort, never waited for) and a close.
  void refuse(int fd) {
    std::string out;
    append_http_response(out, {503, "text/plain; charset=utf-8", "too many connections\n", {}},
                         false, false);
    [[maybe_unused]] const ssize_t n = ::send(fd, out.data(), out.size(),
                                              MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // Out of file descriptors: the listener would wake us at once again; wait a tick.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          watch(listen_fd, 0, EPOLL_CTL_MOD);
          accept_paused_until = now + std::chrono::milliseconds(kTickMilliseconds);
        }
        return;
      }
      if (static_cast<int>(connections.size()) >= options.max_connections) {
        refuse(fd);
        continue;
      }
      Connection& c = connections[fd];
      c.since = now;
      c.events = EPOLLIN;
      watch(fd, c.events, EPOLL_CTL_ADD);
    }
  }

  void read_some(int fd, Connection& c) {
    char buf[kReadChunk];
    // Stop reading while answers pile up or input is past what any request may hold.
    const std::size_t cap = limits.max_header_bytes + limits.max_body_bytes + kReadChunk;
    while (!c.peer_done && (c.lingering || (c.pending() < kMaxPendingOutput && c.in.size() < cap))) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) {
        if (c.in.empty() && c.served && !c.closing) c.since = Clock::now();  // a new request
        if (!c.lingering && !c.closing) c.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) {
        c.peer_done = true;
      } else if (errno == EINTR) {
        continue;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        c.dead = true;
      }
      return;
    }
  }

  HttpResponse call_handler(const HttpRequest& request) {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      return {500, "text/plain; charset=utf-8", fmt::format("internal error: {}\n", e.what()), {}};
    }
  }

  // Answers every complete request in the buffer, in order (pipelining), until the answers
  // waiting to be sent pass kMaxPendingOutput.
  void answer(Connection& c) {
    while (!c.closing && c.pending() < kMaxPendingOutput) {
      HttpParse p = parse_http_request(c.in, limits);
      if (p.state == HttpParse::State::kIncomplete) return;
      if (p.state == HttpParse::State::kError) {
        append_http_response(c.out, {p.status, "text/plain; charset=utf-8", p.message + "\n", {}},
                             false, false);
        c.in.clear();
        c.closing = true;
        return;
      }
      c.in.erase(0, p.consumed);
      append_http_response(c.out, call_handler(p.request), p.keep_alive, p.head);
      c.served = true;
      c.closing = !p.keep_alive;
    }
  }

  void flush(int fd, Connection& c) {
    while (c.pending() > 0) {
      const ssize_t n = ::send(fd, c.out.data() + c.sent, c.pending(), MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::size_t>(n);
        c.since = Clock::now();  // progress: the write deadline starts again
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) c.dead = true;
        return;
      }
    }
    c.out.clear();
    c.sent = 0;
  }

  // Reads, answers and writes until nothing moves; then the epoll interest that fits.
  void service(int fd, Connection& c, bool readable) {
    if (readable) read_some(fd, c);
    for (;;) {
      const std::size_t before = c.in.size();
      if (!c.lingering) answer(c);
      flush(fd, c);
      if (c.dead || c.pending() > 0 || c.closing || c.in.size() == before) break;
    }
    if (c.dead || (c.lingering && c.peer_done) || (c.peer_done && c.pending() == 0)) {
      close_connection(fd);
      return;
    }
    if (c.closing && c.pending() == 0 && !c.lingering) {
      ::shutdown(fd, SHUT_WR);
      c.lingering = true;
      c.since = Clock::now();
    }
    uint32_t events = c.pending() > 0 ? uint32_t{EPOLLOUT} : uint32_t{0};
    if (c.lingering || c.pending() < kMaxPendingOutput) events |= EPOLLIN;
    if (events != c.events) {
      c.events = events;
      watch(fd, events, EPOLL_CTL_MOD);
    }
  }

  Clock::time_point deadline(const Connection& c) const {
    if (c.lingering) return c.since + seconds(kLingerSeconds);
    if (c.pending() == 0 && c.in.empty() && c.served && !c.closing) {
      return c.since + seconds(options.idle_timeout_seconds);
    }
    return c.since + seconds(options.request_timeout_seconds);
  }

  // A request not complete in time gets 408 and a close; an idle keep-alive connection, a client
  // that stopped reading its answer, or a lingering close past its time is closed.
  void expire(Clock::time_point now) {
    std::vector<int> due;
    for (const auto& [fd, c] : connections) {
      if (now >= deadline(c)) due.push_back(fd);
    }
    for (int fd : due) {
      Connection& c = connections.at(fd);
      const bool waiting_request = !c.closing && c.pending() == 0 && (!c.in.empty() || !c.served);
      if (!waiting_request) {
        close_connection(fd);
        continue;
      }
      const std::string text = fmt::format("request not complete within {} s\n",
                                           options.request_timeout_seconds);
      append_http_response(c.out, {408, "text/plain; charset=utf-8", text, {}}, false, false);
      c.in.clear();
      c.closing = true;
      c.since = now;
      service(fd, c, false);
    }
  }

  void resume_accepting(Clock::time_point now) {
    if (accept_paused_until != Clock::time_point{} && now >= accept_paused_until) {
      accept_paused_until = {};
      watch(listen_fd, EPOLLIN, EPOLL_CTL_MOD);
    }
  }

  void on_event(const epoll_event& ev, Clock::time_point now) {
    const int fd = ev.data.fd;
    if (fd == listen_fd) return accept_all(now);
    if (fd == wake_fd) {
      uint64_t value = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd, &value, sizeof value);
      return;
    }
    auto it = connections.find(fd);
    if (it == connections.end()) return;
    service(fd, it->second, (ev.events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0);
  }

  void loop(const std::atomic<bool>& stop) {
    epoll_event events[kMaxEvents];
    Clock::time_point next_check = Clock::now();
    while (!stop.load() && !stopping.load()) {
      const int n = ::epoll_wait(epoll_fd, events, kMaxEvents, kTickMilliseconds);
      if (n < 0 && errno != EINTR) {
        throw Error(fmt::format("{} {}: epoll_wait: {}", options.option_name, options.listen,
                                errno_text(errno)));
      }
      const Clock::time_point now = Clock::now();
      for (int i = 0; i < n; ++i) on_event(events[i], now);
      if (now >= next_check) {
        expire(now);
        resume_accepting(now);
        next_check = now + std::chrono::milliseconds(kTickMilliseconds / 2);
      }
    }
  }

  ~Impl() {
    for (const auto& [fd, c] : connections) ::close(fd);
    if (wake_fd >= 0) ::close(wake_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (listen_fd >= 0) ::close(listen_fd);
  }
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
  impl_->limits = {impl_->options.max_header_bytes, impl_->options.max_body_bytes};
  impl_->listen_fd = open_listener(impl_->options);
  impl_->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  impl_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (impl_->epoll_fd < 0 || impl_->wake_fd < 0) {
    throw Error(fmt::format("{} {}: cannot listen: {}", impl_->options.option_name,
                            impl_->options.listen, errno_text(errno)));
  }
  impl_->watch(impl_->listen_fd, EPOLLIN, EPOLL_CTL_ADD);
  impl_->watch(impl_->wake_fd, EPOLLIN, EPOLL_CTL_ADD);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

std::string HttpServer::bound_address() const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof text);
    return fmt::format("[{}]:{}", text, port());
  }
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
  return fmt::format("{}:{}", text, port());
}

void HttpServer::serve(const std::atomic<bool>& stop) { impl_->loop(stop); }

void HttpServer::start() {
  if (impl_->thread.joinable()) return;
  impl_->stopping = false;
  impl_->thread = std::thread([this] {
    const std::atomic<bool> never{false};
    try {
      impl_->loop(never);
    } catch (const std::exception& e) {  // epoll failing: nothing to serve with, say why
      fmt::print(stderr, "plumb: error: {}\n", e.what());
    }
  });
}

void HttpServer::stop() {
  impl_->stopping = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(impl_->wake_fd, &one, sizeof one);
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) {
    impl_->thread.join();
  }
}

}  // namespace plumb::exporter
