#include "comm/agreement.h"

#include <mpi.h>

#include <fmt/format.h>

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::comm {
namespace {

constexpr char kSeparator = '\x1f';  // ASCII unit separator: never in a message

struct Failure {
  int code = 0;
  std::string host;
  std::string message;
};

std::string encode(int code, const std::string& message) {
  return fmt::format("{}{}{}{}{}", code, kSeparator, host_name(), kSeparator, message);
}

Failure decode(const std::string& text) {
  const size_t a = text.find(kSeparator);
  const size_t b = text.find(kSeparator, a + 1);
  return {std::stoi(text.substr(0, a)), text.substr(a + 1, b - a - 1), text.substr(b + 1)};
}

}  // namespace

void agree(Communicator& comm, const std::function<void()>& step) {
  std::string mine;
  try {
    step();
  } catch (const Error& e) {
    mine = encode(static_cast<int>(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    mine = encode(static_cast<int>(ExitCode::kBadInput), "out of memory");
  } catch (const std::exception& e) {
    mine = encode(static_cast<int>(ExitCode::kBadInput), fmt::format("unexpected error: {}", e.what()));
  }
  const std::vector<std::string> all = comm.all_gather_strings(mine);
  int first = -1;
  int failed = 0;
  bool alike = true;
  Failure f;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    ++failed;
    if (first < 0) {
      first = static_cast<int>(r);
      f = decode(all[r]);
    } else if (decode(all[r]).message != f.message) {
      alike = false;
    }
  }
  if (first < 0) return;
  const auto ranks = static_cast<int>(all.size());
  if (alike && failed == ranks) throw Error(f.message, static_cast<ExitCode>(f.code));
  throw Error(fmt::format("rank {} on host {}: {} ({} of {} ranks failed)", first, f.host,
                          f.message, failed, ranks),
              static_cast<ExitCode>(f.code));
}

void abort_all(int exit_code, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fmt::print(stderr, "plumb: error: rank {} on host {}: {}\n", rank, host_name(), message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

int exit_agreed(Communicator& comm, const Error& error) {
  if (comm.rank() == 0) {
    fmt::print(stderr, "plumb: error: {}\n", error.what());
    std::fflush(stderr);
  }
  comm.barrier();
  return static_cast<int>(error.code());
}

namespace {

constexpr int kWatchTag = 7001;
constexpr auto kTick = std::chrono::milliseconds(250);

// How long the ranks' watchdogs wait for each other's answers once one raised the alarm: long
// enough for a loaded host to schedule them, short against the time limit.
std::chrono::seconds answer_window(int timeout_seconds) {
  return std::chrono::seconds(std::clamp(timeout_seconds / 4, 2, 10));
}

std::string encode_status(const RankStatus& s) {
  return fmt::format("{}{}{}{}{}", s.step, kSeparator, s.expired ? 1 : 0, kSeparator, s.what);
}

RankStatus decode_status(const std::string& text) {
  const size_t a = text.find(kSeparator);
  const size_t b = text.find(kSeparator, a + 1);
  if (a == std::string::npos || b == std::string::npos) return {};
  return {std::atol(text.substr(0, a).c_str()), text.substr(b + 1), text.substr(a + 1, b - a - 1) == "1"};
}

std::string rank_on_host(size_t rank, const std::vector<std::string>& hosts) {
  return fmt::format("rank {} on host {}", rank, rank < hosts.size() ? hosts[rank] : "?");
}

std::string described(const std::string& what) {
  return what.empty() ? "a step between measurements" : what;
}

}  // namespace

int reporter(const std::vector<std::optional<RankStatus>>& heard) {
  for (size_t r = 0; r < heard.size(); ++r) {
    if (heard[r]) return static_cast<int>(r);
  }
  return 0;
}

std::string timeout_message(const std::vector<std::optional<RankStatus>>& heard,
                            const std::vector<std::string>& hosts, int timeout_seconds) {
  std::vector<std::string> silent;
  long earliest = -1;
  const RankStatus* named = nullptr;  // whose step is named: the first past the limit, else any
  for (size_t r = 0; r < heard.size(); ++r) {
    if (!heard[r]) {
      silent.push_back(rank_on_host(r, hosts));
      continue;
    }
    if (!named || (heard[r]->expired && !named->expired)) named = &*heard[r];
    earliest = earliest < 0 ? heard[r]->step : std::min(earliest, heard[r]->step);
  }
  const std::string what = named ? named->what : "";
  const std::string head = fmt::format("{} did not finish within --timeout {} s", described(what),
                                       timeout_seconds);
  if (!silent.empty()) {
    return fmt::format("{}: {} did not answer (stopped, dead, or its host hangs); the job is "
                       "aborted",
                       head, join(silent, ", "));
  }
  std::vector<std::string> behind;
  for (size_t r = 0; r < heard.size(); ++r) {
    if (heard[r]->step == earliest) {
      behind.push_back(fmt::format("{} (at {})", rank_on_host(r, hosts), described(heard[r]->what)));
    }
  }
  if (behind.size() == heard.size()) {
    return fmt::format("{}: every rank answered and is in it, so the collective is slow or hangs in "
                       "the library (raise --timeout if it is only slow); the job is aborted",
                       head);
  }
  return fmt::format("{}: every rank answered; behind the others: {}; the job is aborted", head,
                     join(behind, ", "));
}

Watchdog::Watchdog(int timeout_seconds, std::vector<std::string> hosts)
    : timeout_seconds_(timeout_seconds), hosts_(std::move(hosts)) {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  thread_ = std::thread([this] { watch(); });
  pthread_setname_np(thread_.native_handle(), "plumb-watchdog");
}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  MPI_Comm_free(&comm_);
}

void Watchdog::begin(const std::string& what) {
  const std::lock_guard lock(mutex_);
  ++status_.step;
  status_.what = what;
  deadline_ = Clock::now() + std::chrono::seconds(timeout_seconds_);
}

void Watchdog::end() {
  const std::lock_guard lock(mutex_);
  status_.what.clear();
  deadline_.reset();
}

RankStatus Watchdog::status() const {
  const std::lock_guard lock(mutex_);
  RankStatus s = status_;
  s.expired = deadline_ && Clock::now() >= *deadline_;
  return s;
}

// Between alarms: one look for a message every tick (cheap next to a measurement).
void Watchdog::watch() {
  std::vector<std::optional<RankStatus>> heard(hosts_.size());
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, kTick);
    if (stop_) break;
    const bool expired = deadline_ && Clock::now() >= *deadline_;
    lock.unlock();
    const bool asked = poll(heard);
    if (expired || asked) raise_alarm(std::move(heard));
    lock.lock();
  }
}

bool Watchdog::poll(std::vector<std::optional<RankStatus>>& heard) {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kWatchTag, comm_, &flag, &st);
    if (!flag) return any;
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    std::string text(static_cast<size_t>(std::max(count, 0)), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, st.MPI_SOURCE, kWatchTag, comm_, MPI_STATUS_IGNORE);
    if (static_cast<size_t>(st.MPI_SOURCE) < heard.size()) heard[static_cast<size_t>(st.MPI_SOURCE)] = decode_status(text);
    any = true;
  }
}

void Watchdog::tell_everyone(const RankStatus& mine) {
  sent_ = encode_status(mine);
  for (int r = 0; r < static_cast<int>(hosts_.size()); ++r) {
    if (r == rank_) continue;
    MPI_Request request;
    MPI_Isend(sent_.data(), static_cast<int>(sent_.size()), MPI_CHAR, r, kWatchTag, comm_, &request);
    sends_.push_back(request);
  }
}

// Tells every rank where this one stands, listens for the answer window, then the lowest rank
// that answered names the silent ones and aborts the job; the others wait for that, and do it
// themselves if it does not come (that rank may have stopped meanwhile).
void Watchdog::raise_alarm(std::vector<std::optional<RankStatus>> heard) {
  const RankStatus mine = status();
  heard[static_cast<size_t>(rank_)] = mine;
  tell_everyone(mine);
  const auto window = answer_window(timeout_seconds_);
  auto until = Clock::now() + window;
  auto all_heard = [&] { return std::all_of(heard.begin(), heard.end(), [](const auto& h) { return h.has_value(); }); };
  while (Clock::now() < until && !all_heard()) {
    poll(heard);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (reporter(heard) != rank_) {
    until = Clock::now() + 2 * window;
    while (Clock::now() < until) {
      poll(heard);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  abort_all(static_cast<int>(ExitCode::kBadInput), timeout_message(heard, hosts_, timeout_seconds_));
}

}  // namespace plumb::comm
