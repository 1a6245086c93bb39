#include "serve/mock_server.h"

#include "common/error.h"
#include "exporter/http_request.h"
#include "serve/mock_metrics.h"
#include "serve/mock_wire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace plumb::serve {
namespace {

constexpr int kMaxEvents = 256;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::string_view kMockHeader = "x-plumb-mock";

struct Generation {
  std::uint64_t serial = 0;
  std::size_t truth = 0;  // index into truths
  const MockApi* api = nullptr;
  MockRequest request;
  MockPlan plan;
  std::string id;
  int total = 0;
  int sent = 0;
  bool has_slot = false;
  bool queued = false;  // waiting for a slot
  bool hung = false;
  bool malformed = false;
  Nanos arrived_ns = 0;
  Nanos next_due = 0;
  Nanos last_token_ns = 0;
};

struct Conn {
  int fd = -1;
  std::string in, out;
  std::optional<Generation> gen;
  bool chunked = true;
  bool close_after_write = false;
  bool want_write = false;
};

struct Due {
  Nanos at;
  int fd;
  std::uint64_t serial;
  bool operator>(const Due& other) const { return at > other.at; }
};

std::string chunk(std::string_view data) {
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

std::string status_line(int status) {
  auto reason = exporter::http_reason(status);
  return "HTTP/1.1 " + std::to_string(status) + " " +
         std::string(reason.empty() ? "Error" : reason) + "\r\n";
}

std::string plain_response(int status, std::string_view type, std::string_view body, bool keep) {
  return status_line(status) + "content-type: " + std::string(type) +
         "\r\ncontent-length: " + std::to_string(body.size()) +
         (keep ? "" : "\r\nconnection: close") + "\r\n\r\n" + std::string(body);
}


}  // namespace

Nanos MockServer::now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string mock_truth_json_line(const MockTruth& t) {
  nlohmann::json line = {{"index", t.index},       {"api", t.api}, {"prompt_head", t.prompt_head},
                         {"arrived_ns", t.arrived_ns}, {"started_ns", t.started_ns},
                         {"token_ns", t.token_ns}, {"end_ns", t.end_ns},
                         {"status", t.status},     {"tokens_planned", t.tokens_planned},
                         {"outcome", t.outcome}};
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct MockServer::Impl {
  MockConfig config;
  int listen_fd = -1, epoll_fd = -1, timer_fd = -1, wake_fd = -1;
  int bound_port = 0;
  std::thread thread;
  bool running = false;

  // Loop-thread state.
  std::unordered_map<int, Conn> conns;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> dues;
  std::deque<std::pair<int, std::uint64_t>> waiting;
  int active = 0;
  std::int64_t arrivals = 0;
  std::uint64_t next_serial = 1;
  MockMetrics metrics;
  std::ofstream log;
  bool stopping = false;

  mutable std::mutex truth_mutex;
  std::vector<MockTruth> truths;

  explicit Impl(MockConfig c) : config(std::move(c)) {}

  // ---- setup -------------------------------------------------------------------------------
  void bind_and_listen() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    std::string where = config.host + ":" + std::to_string(config.port);
    if (int rc = ::getaddrinfo(config.host.empty() ? nullptr : config.host.c_str(),
                               std::to_string(config.port).c_str(), &hints, &found); rc != 0)
      throw Error("plumb serve mock: cannot listen on " + where + ": " + ::gai_strerror(rc));
    std::string reason = "no address";
    for (addrinfo* a = found; a && listen_fd < 0; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      int one = 1;
      if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (fd >= 0 && ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
        listen_fd = fd;
        break;
      }
      reason = std::strerror(errno);
      if (fd >= 0) ::close(fd);
    }
    ::freeaddrinfo(found);
    if (listen_fd < 0) throw Error("plumb serve mock: cannot listen on " + where + ": " + reason);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    bound_port = ntohs(addr.ss_family == AF_INET6
                           ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                           : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  }

  void setup() {
    bind_and_listen();
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    timer_fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    for (int fd : {listen_fd, timer_fd, wake_fd}) watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    if (!config.log_path.empty()) {
      log.open(config.log_path, std::ios::out | std::ios::trunc);
      if (!log) throw Error("plumb serve mock: --log " + config.log_path + ": cannot write");
    }
  }

  void watch(int fd, std::uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd, op, fd, &ev);
  }

  // ---- the loop ----------------------------------------------------------------------------
  void loop() {
    // Timer expiries within 1 ns of the deadline, not the default 50 us slack.
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    epoll_event events[kMaxEvents];
    while (!stopping) {
      arm_timer();
      int n = ::epoll_wait(epoll_fd, events, kMaxEvents, -1);
      for (int i = 0; i < n && !stopping; ++i) dispatch(events[i]);
      run_due();
    }
  }

  void arm_timer() {
    itimerspec spec{};
    if (!dues.empty()) {
      Nanos at = std::max<Nanos>(dues.top().at, 1);
      spec.it_value.tv_sec = at / 1'000'000'000;
      spec.it_value.tv_nsec = at % 1'000'000'000;
    }
    ::timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  void dispatch(const epoll_event& ev) {
    int fd = ev.data.fd;
    std::uint64_t drained = 0;
    if (fd == wake_fd) {
      stopping = true;
    } else if (fd == timer_fd) {
      [[maybe_unused]] auto r = ::read(timer_fd, &drained, sizeof drained);
    } else if (fd == listen_fd) {
      accept_all();
    } else if (ev.events & (EPOLLERR | EPOLLHUP)) {
      close_conn(fd, "client_closed");
    } else {
      if ((ev.events & EPOLLOUT) && !flush(fd)) return;
      if (ev.events & EPOLLIN) read_conn(fd);
    }
  }

  void accept_all() {
    while (true) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or out of descriptors: the backlog waits
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      conns[fd].fd = fd;
      watch(fd, EPOLLIN | EPOLLRDHUP, EPOLL_CTL_ADD);
    }
  }

  void read_conn(int fd) {
    char buffer[kReadChunk];
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n > 0) {
        conns[fd].in.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        close_conn(fd, "client_closed");
        return;
      }
      if (errno != EINTR) break;
    }
    process_input(fd);
  }

  // Serves the requests waiting in the connection's buffer, one at a time.
  void process_input(int fd) {
    while (true) {
      auto it = conns.find(fd);
      if (it == conns.end() || it->second.gen || it->second.close_after_write) return;
      Conn& conn = it->second;
      auto parse = exporter::parse_http_request(conn.in, exporter::HttpLimits{});
      if (parse.state == exporter::HttpParse::State::kIncomplete) return;
      if (parse.state == exporter::HttpParse::State::kError) {
        conn.in.clear();
        conn.close_after_write = true;
        send(fd, plain_response(parse.status, "text/plain", parse.message + "\n", false));
        return;
      }
      conn.in.erase(0, parse.consumed);
      handle_request(fd, parse.request, parse.keep_alive);
    }
  }

  void handle_request(int fd, const exporter::HttpRequest& request, bool keep_alive) {
    if (!keep_alive) conns[fd].close_after_write = true;
    if (request.path == "/metrics" || request.path == "/health") {
      bool metrics_path = request.path == "/metrics";
      std::string body = metrics_path ? metrics.render(config.model) : "";
      send(fd, plain_response(200, metrics_path ? "text/plain; version=0.0.4; charset=utf-8"
                                                : "application/json", body, keep_alive));
      return;
    }
    const MockApi* api = find_mock_api(request.path);
    if (!api) {
      send(fd, plain_response(404, "application/json", R"({"detail":"Not Found"})", keep_alive));
      return;
    }
    if (request.method != "POST") {
      send(fd, plain_response(405, "application/json", R"({"detail":"Method Not Allowed"})",
                              keep_alive));
      return;
    }
    start_generation(fd, *api, request, keep_alive);
  }

  // ---- one generation ----------------------------------------------------------------------
  std::size_t new_truth(const MockApi& api, Nanos now) {
    std::lock_guard lock(truth_mutex);
    MockTruth t;
    t.index = arrivals++;
    t.api = std::string(api.name);
    t.arrived_ns = now;
    truths.push_back(std::move(t));
    return truths.size() - 1;
  }

  // The HTTP status the plan or the error rules give the request of arrival `index`.
  int planned_status(const MockPlan& plan, std::int64_t index) const {
    if (plan.status != 200) return plan.status;
    for (const auto& rule : config.errors)
      if (rule.matches(index)) return rule.status;
    return 200;
  }

  void start_generation(int fd, const MockApi& api, const exporter::HttpRequest& request,
                        bool keep_alive) {
    Nanos now = MockServer::now_ns();
    std::size_t truth = new_truth(api, now);
    Generation gen;
    gen.plan = config.plan;
    gen.api = &api;
    gen.arrived_ns = now;
    gen.truth = truth;
    std::string problem = api.parse(request.body, request.path, gen.request);
    if (problem.empty() && !gen.request.stream)
      problem = "the mock server only streams: set \"stream\": true";
    std::string header = request.header(std::string(kMockHeader));
    if (problem.empty() && !header.empty()) {
      try {
        apply_mock_overrides(gen.plan, header, "X-Plumb-Mock");
      } catch (const Error& e) {
        problem = e.what();
      }
    }
    if (!problem.empty()) return refuse(fd, api, truth, 400, problem, "bad_request", keep_alive);
    int status = planned_status(gen.plan, truths_index(truth));
    if (status != 200)
      return refuse(fd, api, truth, status, "mock: programmed HTTP " + std::to_string(status),
                    "error", keep_alive);
    begin_stream(fd, std::move(gen));
  }

  std::int64_t truths_index(std::size_t truth) const {
    std::lock_guard lock(truth_mutex);
    return truths[truth].index;
  }

  void refuse(int fd, const MockApi& api, std::size_t truth, int status,
              const std::string& message, const char* outcome, bool keep_alive) {
    send(fd, plain_response(status, "application/json", api.error_body(status, message),
                            keep_alive));
    finish_truth(truth, status, outcome, 0);
  }

  void begin_stream(int fd, Generation gen) {
    Conn& conn = conns[fd];
    if (gen.request.model.empty()) gen.request.model = config.model;
    gen.request.created = static_cast<long long>(std::time(nullptr));
    gen.total = gen.request.max_tokens > 0 ? gen.request.max_tokens
                : gen.plan.tokens > 0      ? gen.plan.tokens
                                           : kDefaultTokens;
    gen.serial = next_serial++;
    gen.id = (gen.api->name == "openai-chat" ? "chatcmpl-mock" : "cmpl-mock") +
             std::to_string(gen.serial);
    {
      std::lock_guard lock(truth_mutex);
      truths[gen.truth].tokens_planned = gen.total;
      truths[gen.truth].prompt_head = gen.request.prompt_head;
    }
    metrics.prompt_tokens += static_cast<std::uint64_t>(gen.request.prompt_tokens);
    conn.chunked = !gen.plan.close_delimited;
    if (gen.plan.close_delimited) conn.close_after_write = true;
    std::string head = status_line(200) + "content-type: " + std::string(gen.api->content_type) +
                       (conn.chunked ? "\r\ntransfer-encoding: chunked" : "\r\nconnection: close") +
                       "\r\n\r\n";
    conn.gen = std::move(gen);
    conn.out += head;
    if (!flush(fd)) return;
    if (slots_free()) {
      take_slot(fd, MockServer::now_ns());
    } else {
      waiting.emplace_back(fd, conns[fd].gen->serial);
      conns[fd].gen->queued = true;
      ++metrics.waiting;
    }
  }

  bool slots_free() const { return config.slots <= 0 || active < config.slots; }

  void take_slot(int fd, Nanos at) {
    Generation& gen = *conns[fd].gen;
    gen.queued = false;
    gen.has_slot = true;
    ++active;
    ++metrics.running;
    {
      std::lock_guard lock(truth_mutex);
      truths[gen.truth].started_ns = at;
    }
    if (!apply_faults(fd, 0)) return;
    gen.next_due = at + gen.plan.ttft_ns;
    dues.push({gen.next_due, fd, gen.serial});
  }

  void release_slot(Nanos at) {
    --active;
    --metrics.running;
    while (!waiting.empty() && slots_free()) {
      auto [fd, serial] = waiting.front();
      waiting.pop_front();
      auto it = conns.find(fd);
      if (it == conns.end() || !it->second.gen || it->second.gen->serial != serial) continue;
      --metrics.waiting;
      take_slot(fd, std::max(at, it->second.gen->arrived_ns));
    }
  }

  Nanos gap(const Generation& gen) const { return mock_gap(gen.plan, active); }

  void run_due() {
    while (!dues.empty() && !stopping) {
      Due due = dues.top();
      if (due.at > MockServer::now_ns()) return;
      dues.pop();
      auto it = conns.find(due.fd);
      if (it == conns.end() || !it->second.gen || it->second.gen->serial != due.serial) continue;
      send_tokens(due.fd);
    }
  }

  // Sends the token now due, and those after it already due (a zero gap), in one write.
  void send_tokens(int fd) {
    Generation& gen = *conns[fd].gen;
    std::vector<int> ks;
    std::string data;
    do {
      int k = ++gen.sent;
      ks.push_back(k);
      data += gen.api->token(gen.request, gen.id, k, gen.total);
      if (k == gen.total) data += gen.api->end(gen.request, gen.id, gen.total);
      if (gen.plan.malformed_after == k) data += mock_malformed_event(), gen.malformed = true;
      if (k < gen.total) gen.next_due += gap(gen) + (gen.plan.stall_after == k ? gen.plan.stall_ns : 0);
    } while (gen.sent < gen.total && gen.next_due <= MockServer::now_ns() && !fault_at(gen, gen.sent));
    Nanos t = MockServer::now_ns();
    record_tokens(gen, ks, t);
    Conn& conn = conns[fd];
    conn.out += conn.chunked ? chunk(data) : data;
    bool done = gen.sent == gen.total;
    if (done) return complete(fd, t);
    if (!flush(fd) || !apply_faults(fd, gen.sent)) return;
    Generation& still = *conns[fd].gen;
    dues.push({still.next_due, fd, still.serial});
  }

  static bool fault_at(const Generation& gen, int k) {
    const MockPlan& p = gen.plan;
    return p.drop_after == k || p.hang_after == k || p.malformed_after == k || p.stall_after == k;
  }

  void record_tokens(Generation& gen, const std::vector<int>& ks, Nanos t) {
    for (int k : ks) {
      if (k == 1) metrics.ttft.observe(static_cast<double>(t - gen.arrived_ns) / 1e9);
      else metrics.itl.observe(static_cast<double>(t - gen.last_token_ns) / 1e9);
      gen.last_token_ns = t;
    }
    metrics.generation_tokens += ks.size();
    std::lock_guard lock(truth_mutex);
    auto& token_ns = truths[gen.truth].token_ns;
    token_ns.insert(token_ns.end(), ks.size(), t);
  }

  // The drop and hang faults after `k` tokens; false when the generation went no further.
  bool apply_faults(int fd, int k) {
    Generation& gen = *conns[fd].gen;
    if (gen.plan.drop_after == k) {
      close_conn(fd, "dropped");
      return false;
    }
    if (gen.plan.hang_after == k) {
      gen.hung = true;  // keeps its slot until the client gives up
      return false;
    }
    return true;
  }

  void complete(int fd, Nanos t) {
    Conn& conn = conns[fd];
    Generation gen = std::move(*conn.gen);
    conn.gen.reset();
    if (conn.chunked) conn.out += "0\r\n\r\n";
    metrics.e2e.observe(static_cast<double>(t - gen.arrived_ns) / 1e9);
    ++metrics.finished_length;
    finish_truth(gen.truth, 200, gen.malformed ? "malformed" : "completed", t);
    release_slot(gen.next_due);
    if (flush(fd)) process_input(fd);
  }

  void finish_truth(std::size_t truth, int status, const char* outcome, Nanos end) {
    std::lock_guard lock(truth_mutex);
    MockTruth& t = truths[truth];
    if (!t.outcome.empty()) return;
    t.status = status;
    t.outcome = outcome;
    t.end_ns = end ? end : MockServer::now_ns();
    if (log.is_open()) log << mock_truth_json_line(t) << '\n' << std::flush;
  }

  // ---- writing and closing ---------------------------------------------------------------
  void send(int fd, const std::string& data) {
    conns[fd].out += data;
    flush(fd);
  }

  // Writes what it can; false when the connection is gone (closed here).
  bool flush(int fd) {
    auto it = conns.find(fd);
    if (it == conns.end()) return false;
    Conn& conn = it->second;
    std::size_t done = 0;
    while (done < conn.out.size()) {
      ssize_t n = ::send(fd, conn.out.data() + done, conn.out.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      } else if (errno != EINTR) {
        close_conn(fd, "client_closed");
        return false;
      }
    }
    conn.out.erase(0, done);
    bool want = !conn.out.empty();
    if (want != conn.want_write) {
      conn.want_write = want;
      watch(fd, EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u), EPOLL_CTL_MOD);
    }
    if (!want && conn.close_after_write && !conn.gen) {
      close_conn(fd, "");
      return false;
    }
    return true;
  }

  void close_conn(int fd, const char* outcome) {
    auto it = conns.find(fd);
    if (it == conns.end()) return;
    if (it->second.gen) {
      Generation& gen = *it->second.gen;
      finish_truth(gen.truth, 200, gen.hung ? "hang" : outcome, 0);
      if (gen.has_slot) release_slot(MockServer::now_ns());
      if (gen.queued) --metrics.waiting;  // its place in the queue is skipped when reached
    }
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    conns.erase(fd);
  }

  void shutdown() {
    std::vector<int> fds;
    for (auto& [fd, conn] : conns) fds.push_back(fd);
    for (int fd : fds) close_conn(fd, "client_closed");
    for (int fd : {listen_fd, epoll_fd, timer_fd, wake_fd})
      if (fd >= 0) ::close(fd);
    listen_fd = epoll_fd = timer_fd = wake_fd = -1;
  }
};

MockServer::MockServer(MockConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  impl_->setup();
}

MockServer::~MockServer() {
  stop();
  impl_->shutdown();
}

int MockServer::port() const { return impl_->bound_port; }

std::string MockServer::base_url() const {
  std::string host = impl_->config.host.empty() || impl_->config.host == "0.0.0.0"
                         ? "127.0.0.1" : impl_->config.host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(port());
}

void MockServer::start() {
  if (impl_->running) return;
  impl_->running = true;
  impl_->thread = std::thread([this] { impl_->loop(); });
}

void MockServer::stop() {
  if (!impl_->running) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(impl_->wake_fd, &one, sizeof one);
  impl_->thread.join();
  impl_->running = false;
}

std::vector<MockTruth> MockServer::truth() const {
  std::lock_guard lock(impl_->truth_mutex);
  return impl_->truths;
}

}  // namespace plumb::serve
