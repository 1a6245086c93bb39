// The engine: one thread, libcurl's multi interface driven by curl_multi_socket_action on
// epoll, and two timerfds on absolute CLOCK_MONOTONIC times (libcurl's timer and the
// workload's next release): epoll_wait's millisecond timeout is too coarse for releases that
// must be punctual to well under a millisecond (docs/serve.md, "The engine").
#include "serve/client.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "exporter/curl_library.h"
#include "serve/api.h"
#include "serve/client_transfer.h"
#include "serve/receive_time.h"

namespace plumb::serve {
namespace {

using exporter::CurlApi;

// Thousands of streams need thousands of descriptors: the soft limit (often 1,024) is raised to
// the hard one, as any server does.
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The kernel delays a timer by up to the thread's timer slack (50 us by default) to batch
// wake-ups; releases are meant to be punctual, so the loop's thread asks for 1 ns while it runs.
class TimerSlack {
 public:
  TimerSlack() : saved_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
  }
  ~TimerSlack() {
    if (saved_ > 0) prctl(PR_SET_TIMERSLACK, saved_, 0, 0, 0);
  }
  TimerSlack(const TimerSlack&) = delete;
  TimerSlack& operator=(const TimerSlack&) = delete;

 private:
  long saved_;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {
    if (fd_ < 0) throw Error(std::string("plumb serve: ") + std::strerror(errno));
  }
  ~Fd() { close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A timerfd armed at absolute CLOCK_MONOTONIC times; re-arming at the same time is skipped.
class Timer {
 public:
  Timer() : fd_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) {}
  int fd() const { return fd_.get(); }
  void arm_at(Nanos absolute_ns) {
    if (absolute_ns == armed_) return;
    itimerspec spec{};
    if (absolute_ns >= 0) {
      Nanos at = std::max<Nanos>(absolute_ns, 1);  // 0 would disarm
      spec.it_value.tv_sec = at / 1'000'000'000;
      spec.it_value.tv_nsec = at % 1'000'000'000;
    }
    timerfd_settime(fd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
    armed_ = absolute_ns;
  }
  void disarm() { arm_at(-1); }
  // Armed at `absolute_ns` unless already armed earlier: a wake-up before a deadline that moved
  // later costs one look (libcurl's timeout action finds nothing due and asks again), a
  // timerfd_settime per libcurl timer change would cost a system call each.
  void arm_no_later_than(Nanos absolute_ns) {
    if (armed_ < 0 || absolute_ns < armed_) arm_at(absolute_ns);
  }
  void consume() {
    std::uint64_t expirations = 0;
    [[maybe_unused]] ssize_t n = read(fd_.get(), &expirations, sizeof expirations);
    armed_ = -1;
  }

 private:
  Fd fd_;
  Nanos armed_ = -1;
};

void global_init_once(const CurlApi& curl) {
  static const bool done = [&curl] { return curl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!done) throw Error("plumb serve: libcurl failed to initialise (curl_global_init)");
}

// libcurl before 8.0.0 stacks a second HTTP/2 layer on a reused prior-knowledge (h2c)
// connection, so every stream after the first fails (curl issue 10634, pull 10643): Debian 12's
// 7.88.1 gets the first of N requests through nghttpx's h2c front end and drops the rest.
constexpr unsigned kFirstCurlReusingH2c = 0x080000;

// --cacert is read by libcurl only at the handshake, where an unreadable file would be one
// connect error per request; said once, before anything is sent.
void check_cacert(const std::string& path) {
  if (path.empty()) return;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char first = 0;  // a read, not only an open: a directory opens but does not read
  bool readable = fd >= 0 && read(fd, &first, 1) >= 0;
  int error = errno;
  if (fd >= 0) close(fd);
  if (!readable) {
    throw Error("plumb serve: --cacert " + path + ": cannot read: " + std::strerror(error));
  }
}

// What the library must support for this endpoint, checked before anything is sent.
void check_features(const CurlApi& curl, const Endpoint& endpoint, const std::string& url) {
  const curl_version_info_data* info = curl.version_info(CURLVERSION_NOW);
  if (!info) throw Error("plumb serve: libcurl gave no version information");
  std::string version = info->version ? info->version : "?";
  if (url.rfind("https://", 0) == 0 && !(info->features & CURL_VERSION_SSL)) {
    throw Error("plumb serve: --url " + url + ": this libcurl (" + version +
                ") was built without TLS");
  }
  if (endpoint.http2 && !(info->features & CURL_VERSION_HTTP2)) {
    throw Error("plumb serve: --http2: this libcurl (" + version + ") was built without HTTP/2");
  }
  if (endpoint.http2 && url.rfind("http://", 0) == 0 &&
      info->version_num < kFirstCurlReusingH2c) {
    throw Error("plumb serve: --http2 on http:// (h2c): this libcurl (" + version +
                ") fails every stream after a connection's first (curl issue 10634, fixed in "
                "8.0.0); use https:// (HTTP/2 by ALPN) or leave out --http2");
  }
  check_cacert(endpoint.cacert);
}

std::string host_of(const std::string& url);

class Engine {
 public:
  Engine(const CurlApi& curl, const Endpoint& endpoint, const ApiRow& api, std::string url,
         const Workload& workload, const RunControl& control)
      : curl_(curl),
        endpoint_(endpoint),
        api_(api),
        url_(std::move(url)),
        host_(host_of(url_)),
        tls_(url_.rfind("https://", 0) == 0),
        workload_(workload),
        control_(control),
        epoll_(epoll_create1(EPOLL_CLOEXEC)),
        cap_(workload.concurrency > 0 ? workload.concurrency : (workload.closed_loop ? 1 : 0)) {
    // Before the run's clock starts: the kernel switching stamping on stalls the machine a moment.
    start_receive_stamping();
    setup_multi();
    setup_headers();
    outcome_.records.reserve(workload.requests.size());
  }
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  RunOutcome run();

 private:
  void setup_multi();
  void setup_headers();
  void watch(int fd);
  Transfer& idle_transfer();
  void configure(Transfer& transfer);

  Nanos now() const { return monotonic_ns() - t0_; }
  bool may_release() const { return !stop_releasing_ && next_ < workload_.requests.size(); }
  void release_due();
  void start(const RequestSpec& spec, Nanos scheduled, Nanos ready);
  void arm_release_timer();
  void wait_and_dispatch();
  void act(curl_socket_t socket, int flags);
  bool release_is_due() const;
  void drain_done();
  void look_at_receive_time(int fd, std::uint32_t events);
  void finish(Transfer& transfer, CURLcode code);

  static int on_socket(CURL*, curl_socket_t socket, int what, void* self, void*);
  static int on_timer(CURLM*, long timeout_ms, void* self);
  static int on_new_socket(void*, curl_socket_t socket, curlsocktype purpose);

  const CurlApi& curl_;
  const Endpoint& endpoint_;
  const ApiRow& api_;
  std::string url_;
  std::string host_;
  bool tls_ = false;
  const Workload& workload_;
  const RunControl& control_;
  Fd epoll_;
  Timer curl_timer_;
  PendingReceive received_;
  Timer release_timer_;
  CURLM* multi_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::vector<std::unique_ptr<Transfer>> transfers_;
  std::vector<Transfer*> idle_;
  RunOutcome outcome_;
  Nanos t0_ = 0;
  int cap_ = 0;  // in flight at most; 0: no cap
  int in_flight_ = 0;
  size_t next_ = 0;         // the next request to release
  Nanos slot_free_ns_ = 0;  // when the last slot freed while every slot was taken
  bool stop_releasing_ = false;
  bool curl_due_now_ = false;  // libcurl asked for its timeout at once
};

Engine::~Engine() {
  for (auto& transfer : transfers_) {
    if (transfer->busy) curl_.multi_remove_handle(multi_, transfer->easy);
    curl_.easy_cleanup(transfer->easy);
  }
  if (multi_) curl_.multi_cleanup(multi_);
  if (headers_) curl_.slist_free_all(headers_);
}

void Engine::setup_multi() {
  multi_ = curl_.multi_init();
  if (!multi_) throw Error("plumb serve: libcurl could not make a multi handle");
  curl_.multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Engine::on_socket);
  curl_.multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_.multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Engine::on_timer);
  curl_.multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  if (endpoint_.http2) curl_.multi_setopt(multi_, CURLMOPT_PIPELINING, long{CURLPIPE_MULTIPLEX});
  // Keep a connection for every stream that may be in flight: a smaller cache would close
  // and reopen connections under load (libcurl's default is 4 per handle added).
  if (cap_ > 0) curl_.multi_setopt(multi_, CURLMOPT_MAXCONNECTS, long{cap_});
  for (int fd : {curl_timer_.fd(), release_timer_.fd()}) watch(fd);
}

void Engine::watch(int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event);
}

// JSON in, server-sent events out; "Expect:" stops libcurl's "Expect: 100-continue" on bodies
// over 1 KiB, which would wait up to a second for a server that never sends 100.
void Engine::setup_headers() {
  for (const char* header :
       {"Content-Type: application/json", "Accept: text/event-stream", "Expect:"}) {
    headers_ = curl_.slist_append(headers_, header);
  }
  for (const std::string& header : endpoint_.headers) {
    headers_ = curl_.slist_append(headers_, header.c_str());
  }
}

Transfer& Engine::idle_transfer() {
  if (!idle_.empty()) {
    Transfer* transfer = idle_.back();
    idle_.pop_back();
    return *transfer;
  }
  auto transfer = std::make_unique<Transfer>();
  transfer->curl = &curl_;
  transfer->api = &api_;
  transfer->t0 = t0_;
  transfer->received = &received_;
  transfer->easy = curl_.easy_init();
  if (!transfer->easy) throw Error("plumb serve: libcurl could not make an easy handle");
  configure(*transfer);
  transfers_.push_back(std::move(transfer));
  return *transfers_.back();
}

// The options every request of the run shares, set once per reused handle.
void Engine::configure(Transfer& transfer) {
  CURL* easy = transfer.easy;
  curl_.easy_setopt(easy, CURLOPT_URL, url_.c_str());
  curl_.easy_setopt(easy, CURLOPT_HTTPHEADER, headers_);
  curl_.easy_setopt(easy, CURLOPT_POST, 1L);
  curl_.easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
  curl_.easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
  curl_.easy_setopt(easy, CURLOPT_PRIVATE, &transfer);
  curl_.easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.error_buffer);
  curl_.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  // No proxy from http_proxy/https_proxy: a proxy in the path would be measured as the server
  // (aiohttp, as vLLM's bench uses it, ignores them too: trust_env=False).
  curl_.easy_setopt(easy, CURLOPT_PROXY, "");
  curl_.easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_.easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, &Engine::on_new_socket);
  curl_.easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(control_.request_timeout_s * 1000));
  curl_.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                    static_cast<long>(control_.connect_timeout_s * 1000));
  if (endpoint_.http2) {
    bool tls = url_.rfind("https://", 0) == 0;
    curl_.easy_setopt(
        easy, CURLOPT_HTTP_VERSION,
        tls ? long{CURL_HTTP_VERSION_2TLS} : long{CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE});
    curl_.easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
  } else {
    curl_.easy_setopt(easy, CURLOPT_HTTP_VERSION, long{CURL_HTTP_VERSION_1_1});
  }
  if (endpoint_.insecure) {
    curl_.easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_.easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!endpoint_.cacert.empty()) curl_.easy_setopt(easy, CURLOPT_CAINFO, endpoint_.cacert.c_str());
}

// Releases every request that is due and has a slot. Open loop: a request is due at its
// scheduled time and ready then, or when a slot frees if it waited for one. Closed loop: the
// next request is due, and ready, the moment one in flight ends.
void Engine::release_due() {
  if (control_.stop && control_.stop->load()) stop_releasing_ = true;
  while (may_release() && (cap_ == 0 || in_flight_ < cap_)) {
    const RequestSpec& spec = workload_.requests[next_];
    Nanos scheduled = workload_.closed_loop ? slot_free_ns_ : spec.scheduled_ns;
    Nanos ready = std::max(scheduled, slot_free_ns_);
    if (workload_.duration_ns > 0 && ready >= workload_.duration_ns) {
      stop_releasing_ = true;
      break;
    }
    if (!workload_.closed_loop && scheduled > now()) break;
    start(spec, scheduled, ready);
    ++next_;
  }
}

// A record's chunks are reserved up front so that no chunk reallocates while it streams; beyond
// this many (16 bytes each) the vector grows as chunks come, which only a very long answer needs.
constexpr int kMostReserved = 1 << 16;

void Engine::start(const RequestSpec& spec, Nanos scheduled, Nanos ready) {
  RequestRecord& record = outcome_.records.emplace_back();
  record.index = spec.index;
  record.scheduled_ns = scheduled;
  record.ready_ns = ready;
  record.chunks.reserve(static_cast<size_t>(std::clamp(spec.max_output_tokens, 0, kMostReserved)));
  Transfer& transfer = idle_transfer();
  transfer.begin(spec, record);
  api_.body(spec, endpoint_.model, api_.sends_ignore_eos, transfer.body);
  curl_.easy_setopt(transfer.easy, CURLOPT_POSTFIELDS, transfer.body.data());
  curl_.easy_setopt(transfer.easy, CURLOPT_POSTFIELDSIZE_LARGE,
                    static_cast<curl_off_t>(transfer.body.size()));
  ++in_flight_;
  record.sent_ns = now();
  CURLMcode code = curl_.multi_add_handle(multi_, transfer.easy);
  if (code != CURLM_OK) {
    throw Error(std::string("plumb serve: libcurl: ") + curl_.multi_strerror(code));
  }
}

void Engine::arm_release_timer() {
  bool waiting = !workload_.closed_loop && may_release() && (cap_ == 0 || in_flight_ < cap_);
  if (!waiting) return release_timer_.disarm();
  Nanos due = workload_.requests[next_].scheduled_ns;
  if (workload_.duration_ns > 0) due = std::min(due, workload_.duration_ns);
  release_timer_.arm_at(t0_ + due);
}

// libcurl's per-socket pointer says whether the socket is in the epoll set already.
int Engine::on_socket(CURL*, curl_socket_t socket, int what, void* self, void* watched) {
  auto& engine = *static_cast<Engine*>(self);
  int epoll = engine.epoll_.get();
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nullptr);
    return 0;
  }
  epoll_event event{};
  event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  event.data.fd = socket;
  if (watched && epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
  if (epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST) {
    epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event);
  }
  engine.curl_.multi_assign(engine.multi_, socket, &engine);
  return 0;
}

// Every connection's socket is stamped by the kernel on receipt (docs/serve.md, "Receive
// times"); a kernel that refuses leaves the clock's reading.
int Engine::on_new_socket(void*, curl_socket_t socket, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) enable_receive_timestamps(socket);
  return CURL_SOCKOPT_OK;
}

int Engine::on_timer(CURLM*, long timeout_ms, void* self) {
  auto& engine = *static_cast<Engine*>(self);
  engine.curl_due_now_ = timeout_ms == 0;
  if (timeout_ms > 0) {
    engine.curl_timer_.arm_no_later_than(monotonic_ns() + Nanos{timeout_ms} * 1'000'000);
  }
  return 0;
}

// With a stop flag to watch (a signal handler's), the wait wakes every 50 ms to look at it.
constexpr int kStopPollMs = 50;
constexpr int kEventsPerWait = 256;

// Between two sockets' work the loop looks at the clock: with thousands of streams one wake-up
// can bring hundreds of sockets, and a release due meanwhile must not wait for all of them.
// Finished transfers are settled after the wake-up's sockets are read (drain_done), so that the
// bookkeeping of one stream's end does not delay the reading, and the time, of the next one's.
void Engine::act(curl_socket_t socket, int flags) {
  int running = 0;
  curl_.multi_socket_action(multi_, socket, flags, &running);
  if (release_is_due()) release_due();
}

bool Engine::release_is_due() const {
  return !workload_.closed_loop && may_release() && (cap_ == 0 || in_flight_ < cap_) &&
         workload_.requests[next_].scheduled_ns <= now();
}

void Engine::wait_and_dispatch() {
  if (curl_due_now_) {
    curl_due_now_ = false;
    act(CURL_SOCKET_TIMEOUT, 0);
    return drain_done();
  }
  epoll_event events[kEventsPerWait];
  int n = epoll_wait(epoll_.get(), events, kEventsPerWait, control_.stop ? kStopPollMs : -1);
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == release_timer_.fd()) {
      release_timer_.consume();
      release_due();
    } else if (fd == curl_timer_.fd()) {
      curl_timer_.consume();
      act(CURL_SOCKET_TIMEOUT, 0);
    } else {
      std::uint32_t got = events[i].events;
      look_at_receive_time(fd, got);
      act(fd, ((got & EPOLLIN) ? CURL_CSELECT_IN : 0) | ((got & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                  ((got & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0));
      received_.clear();
    }
  }
  drain_done();
}

// The kernel's receive time of what `fd` brought, for the first bytes libcurl reads from it
// next; a stamp no bytes took is not carried over to another socket.
void Engine::look_at_receive_time(int fd, std::uint32_t events) {
  Nanos received = (events & EPOLLIN) ? peek_receive_time(fd) : kNoTime;
  received_.set(fd, received == kNoTime ? kNoTime : received - t0_);
}

void Engine::drain_done() {
  int left = 0;
  while (CURLMsg* message = curl_.multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    Transfer* transfer = nullptr;
    curl_.easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
    finish(*transfer, message->data.result);
  }
}

void Engine::finish(Transfer& transfer, CURLcode code) {
  Nanos at = now();  // the end of a stream without an end marker, or of an error
  TransferEnd end;
  end.code = code;
  curl_.easy_getinfo(transfer.easy, CURLINFO_RESPONSE_CODE, &end.http_status);
  // Connected means ready to carry the request: over TLS, the handshake done too.
  curl_off_t connect_us = 0;
  curl_.easy_getinfo(transfer.easy, tls_ ? CURLINFO_APPCONNECT_TIME_T : CURLINFO_CONNECT_TIME_T,
                     &connect_us);
  end.connected = connect_us > 0;
  long os_errno = 0;
  curl_.easy_getinfo(transfer.easy, CURLINFO_OS_ERRNO, &os_errno);
  end.os_errno = static_cast<int>(os_errno);
  end.curl_error = transfer.error_buffer;
  const char* content_type = nullptr;
  curl_.easy_getinfo(transfer.easy, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type) end.content_type = content_type;
  end.body = transfer.error_body;
  settle_record(api_, end, transfer.state, *transfer.spec, host_, control_.request_timeout_s, at,
                *transfer.record);
  curl_.multi_remove_handle(multi_, transfer.easy);
  transfer.busy = false;
  idle_.push_back(&transfer);
  // The slot is free from the request's end (its end marker), not from libcurl's bookkeeping.
  Nanos ended = transfer.record->end_ns;
  if ((cap_ > 0 && in_flight_ == cap_) || workload_.closed_loop) slot_free_ns_ = ended;
  --in_flight_;
  if (control_.on_done && !control_.on_done(*transfer.record)) stop_releasing_ = true;
  release_due();  // at once: a closed loop's next request is due the moment this one ended
}

RunOutcome Engine::run() {
  TimerSlack slack;
  t0_ = monotonic_ns();
  outcome_.start_ns = t0_;
  while (true) {
    release_due();
    if (in_flight_ == 0 && !may_release()) break;
    arm_release_timer();
    wait_and_dispatch();
  }
  outcome_.duration_ns = now();
  outcome_.not_released = static_cast<std::int64_t>(workload_.requests.size() - next_);
  return std::move(outcome_);
}

// "HOST:PORT" of a URL, for a connect error's line.
std::string host_of(const std::string& url) {
  size_t start = url.find("://") + 3;
  return url.substr(start, url.find_first_of("/?#", start) - start);
}

}  // namespace

RunOutcome run_load(const Endpoint& endpoint, const Workload& workload, const RunControl& control) {
  const ApiRow& api = find_api(endpoint.api);
  std::string url = request_url(api, endpoint.url, endpoint.model);
  const CurlApi& curl = exporter::curl_api();
  global_init_once(curl);
  check_features(curl, endpoint, url);
  raise_open_file_limit();
  Engine engine(curl, endpoint, api, std::move(url), workload, control);
  return engine.run();
}

}  // namespace plumb::serve
