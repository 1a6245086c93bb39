#include "supervise/attempt.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include "common/error.h"
#include "common/steady_time.h"

namespace plumb::supervise {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadBytes = 1 << 18;    // one read of the job's output, at most
constexpr size_t kDrainAfterExit = 64 << 20;  // read after the job ended, at most
constexpr int kPipeBytes = 1 << 20;       // the job's pipes: room to print while plumb scans
constexpr int kTickMs = 200;              // the longest poll: stop requests, heartbeat checks
constexpr size_t kDetailChars = 300;

int g_wake[2] = {-1, -1};  // written by the SIGCHLD handler (self-pipe)

void on_sigchld(int) {
  int saved = errno;
  char byte = 1;
  [[maybe_unused]] ssize_t ignored = ::write(g_wake[1], &byte, 1);
  errno = saved;
}

void install_sigchld() {
  if (g_wake[0] >= 0) return;
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) throw Error("plumb run: cannot create a pipe");
  struct sigaction sa{};
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_NOCLDSTOP;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGCHLD, &sa, nullptr);
}

// The processes whose parent is this one: the job, and orphans it left that were handed to this
// process as their subreaper.
std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const pid_t self = ::getpid();
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(fmt::format("/proc/{}/stat", entry->d_name));
    std::string line;
    if (!std::getline(stat, line)) continue;
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    pid_t ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %*c %d", &ppid) == 1 && ppid == self) {
      out.push_back(static_cast<pid_t>(std::atoi(entry->d_name)));
    }
  }
  ::closedir(proc);
  return out;
}

void signal_tree(pid_t group, int sig) {
  ::kill(-group, sig);
  for (pid_t child : own_children()) ::kill(child, sig);
}

// Reaps every child that has ended; true when none is left.
bool reap_all() {
  for (;;) {
    pid_t pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) continue;
    return pid < 0 && errno == ECHILD;
  }
}

// SIGTERM to the job's group and to every process left to this one, SIGKILL after `grace`, until
// no child is left: nothing the job started outlives the attempt. A process handed to plumb while
// it waits (its parent ended on the SIGTERM) gets its own SIGTERM when it is seen.
void stop_tree(pid_t group, double grace_s) {
  std::set<pid_t> told;
  auto term_new_children = [&] {
    for (pid_t child : own_children()) {
      if (!told.insert(child).second) continue;
      ::kill(child, SIGTERM);
      ::kill(child, SIGCONT);  // a stopped process acts on SIGTERM only once continued
    }
  };
  ::kill(-group, SIGTERM);
  ::kill(-group, SIGCONT);
  term_new_children();
  const Clock::time_point start = Clock::now();
  for (int round = 1; !reap_all(); ++round) {
    if (seconds_since(start) >= grace_s) {
      do {  // again until none is left: a process may be handed over after each round
        signal_tree(group, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      } while (!reap_all());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (round % 5 == 0) term_new_children();  // every 50 ms: the ones handed over meanwhile
  }
}

AttemptResult verdict(Outcome outcome, std::string detail, int exit_code = 0, int signal = 0) {
  AttemptResult r;
  r.outcome = outcome;
  r.detail = std::move(detail);
  r.exit_code = exit_code;
  r.signal = signal;
  return r;
}

struct Started {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

[[noreturn]] void exec_child(const AttemptOptions& o, int out_w, int err_w, int status_w) {
  ::setpgid(0, 0);
  ::dup2(out_w, STDOUT_FILENO);
  ::dup2(err_w, STDERR_FILENO);
  struct sigaction sa{};
  sa.sa_handler = SIG_DFL;
  // An ignored signal stays ignored across exec: plumb ignores SIGPIPE and SIGXFSZ for itself,
  // the job gets the defaults it would have had without plumb.
  for (int sig : {SIGCHLD, SIGPIPE, SIGXFSZ}) ::sigaction(sig, &sa, nullptr);
  for (const auto& [name, value] : o.env) ::setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  int error = errno;
  [[maybe_unused]] ssize_t ignored = ::write(status_w, &error, sizeof error);
  ::_exit(127);
}

Started start(const AttemptOptions& o) {
  int out[2], err[2], status[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0) {
    throw Error("plumb run: cannot create a pipe");
  }
  pid_t pid = ::fork();
  if (pid < 0) throw Error("plumb run: cannot fork");
  if (pid == 0) exec_child(o, out[1], err[1], status[1]);
  ::setpgid(pid, pid);
  ::close(out[1]);
  ::close(err[1]);
  ::close(status[1]);
  int error = 0;
  ssize_t got = ::read(status[0], &error, sizeof error);
  ::close(status[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    ::waitpid(pid, nullptr, 0);
    ::close(out[0]);
    ::close(err[0]);
    throw Error(fmt::format("cannot start '{}': {}", o.argv[0],
                            error == ENOENT ? "no such command (not in PATH)" : std::strerror(error)));
  }
  for (int fd : {out[0], err[0]}) {
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    ::fcntl(fd, F_SETPIPE_SZ, kPipeBytes);  // best effort: the system's limit may be lower
  }
  return {pid, out[0], err[0]};
}

// Watching one attempt: the streams, the clock of the last progress, the verdict.
class Watch {
 public:
  Watch(const AttemptOptions& o, Started job)
      : o_(o), job_(job), out_(o.output != nullptr ? *o.output : own_output_),
        lines_are_activity_(o.heartbeat.empty()) {}

  AttemptResult run() {
    const Clock::time_point begin = Clock::now();
    last_progress_ = begin;
    heartbeat_mtime_ = heartbeat_time();
    while (!result_) step();
    finish();
    result_->seconds = seconds_since(begin);
    result_->last_step = last_step_;
    return *result_;
  }

 private:
  void step() {
    pollfd fds[3] = {{g_wake[0], POLLIN, 0}, {job_.out, POLLIN, 0}, {job_.err, POLLIN, 0}};
    int n = ::poll(fds, 3, timeout_ms());
    if (n > 0 && (fds[0].revents & POLLIN) != 0) drain_wake();
    if (n > 0) {
      pump(fds[1], job_.out, STDOUT_FILENO, out_line_);
      pump(fds[2], job_.err, STDERR_FILENO, err_line_);
    }
    if (result_) return;
    check_exit();
    if (!result_) check_hang();
    if (!result_ && stopping()) {
      result_ = verdict(Outcome::kStopped, "stopped by a signal to plumb run");
    }
  }

  bool stopping() const { return o_.stop != nullptr && o_.stop->load(); }

  int timeout_ms() const {
    if (o_.hang_timeout_s <= 0) return kTickMs;
    double left = o_.hang_timeout_s - seconds_since(last_progress_);
    return std::clamp(static_cast<int>(left * 1000) + 1, 0, kTickMs);
  }

  static void drain_wake() {
    char buf[64];
    while (::read(g_wake[0], buf, sizeof buf) > 0) {
    }
  }

  void pump(const pollfd& p, int& fd, int to, LineSplitter& line) {
    if (fd < 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
    read_once(fd, to, line);
  }

  // One read of the job's output, passed on and scanned; the bytes read, 0 at its end (the pipe
  // is closed then), -1 when nothing is there now.
  ssize_t read_once(int& fd, int to, LineSplitter& line) {
    char* buf = read_buffer_.data();
    ssize_t n = ::read(fd, buf, read_buffer_.size());
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      ::close(fd);
      fd = -1;
      return 0;
    }
    if (n < 0) return -1;
    out_.write(to, std::string_view(buf, static_cast<size_t>(n)), o_.stop);
    read_time_ = Clock::now();  // the time of every line in this read
    // Before the attempt's first progress line, output of any kind (a line, or a progress bar
    // redrawn with \r) is activity: logs in no known format do not make a hang.
    if (!progress_seen_ && lines_are_activity_ && !after_exit_) last_progress_ = read_time_;
    scan(std::string_view(buf, static_cast<size_t>(n)), line);
    return n;
  }

  // What the job printed just before it ended may still be in the pipes (more than one read):
  // passed on and scanned for progress, so that the last step is right, before the verdict. A
  // fatal line found there does not change an exit into another kind of failure (nor a job that
  // finished with 0 into a failed one). At most kDrainAfterExit bytes, and not past a stop
  // request: a process the job left that keeps printing cannot hold plumb here.
  void drain_after_exit() {
    after_exit_ = true;
    size_t budget = kDrainAfterExit;
    for (bool more = true; more && budget > 0 && !stopping();) {
      more = false;
      for (auto [fd, to, line] :
           {std::tuple<int*, int, LineSplitter*>{&job_.out, STDOUT_FILENO, &out_line_},
            {&job_.err, STDERR_FILENO, &err_line_}}) {
        if (*fd < 0) continue;
        const ssize_t n = read_once(*fd, to, *line);
        if (n > 0) {
          more = true;
          budget -= std::min(budget, static_cast<size_t>(n));
        }
      }
    }
  }

  // Splits into lines and matches each on its first kMaxLineBytes; the lines of this read that
  // hold none of a set's literals skip that set.
  void scan(std::string_view chunk, LineSplitter& lines) {
    LiteralCursor fatal(o_.fatal, chunk);
    LiteralCursor progress(o_.progress, chunk);
    std::optional<LiteralCursor> resume;  // only before the first progress line
    if (!progress_seen_ && !o_.resume.empty()) resume.emplace(o_.resume, chunk);
    lines.feed(chunk, [&](std::string_view text, size_t at) {
      if (at == std::string_view::npos) {  // it began in an earlier read: every set is tried
        if (resume && !progress_seen_) on_resume_line(text);
        on_line(text, true, true);
        return !result_;
      }
      const size_t end = at + text.size();
      if (resume && !progress_seen_ && resume->may_match(at, end)) on_resume_line(text);
      on_line(text, fatal.may_match(at, end), progress.may_match(at, end));
      return !result_;
    });
  }

  void on_resume_line(std::string_view text) {
    std::optional<LineMatch> m = match_line(o_.resume, text);
    if (m && m->step && o_.on_resumed) o_.on_resumed(*m->step);
  }

  void on_line(std::string_view text, bool may_be_fatal, bool may_be_progress) {
    if (may_be_fatal && !after_exit_ && match_line(o_.fatal, text)) {
      std::string detail(text.substr(0, kDetailChars));
      result_ = verdict(Outcome::kFatalLine, detail);
      return;
    }
    std::optional<LineMatch> m;
    if (may_be_progress) m = match_line(o_.progress, text);
    if (!m) {
      if (tell_unmatched_ && !progress_seen_) tell_unmatched_ = o_.on_unmatched(text);
      return;
    }
    progress_seen_ = true;
    last_progress_ = read_time_;
    if (m->step) last_step_ = m->step;
    if (o_.on_progress) o_.on_progress(m->step);
  }

  void check_exit() {
    int status = 0;
    pid_t pid = ::waitpid(job_.pid, &status, WNOHANG);
    if (pid != job_.pid) return;
    exited_ = true;
    drain_after_exit();
    if (WIFEXITED(status)) {
      int code = WEXITSTATUS(status);
      result_ = verdict(code == 0 ? Outcome::kFinished : Outcome::kExit,
                        fmt::format("exit {}", code), code);
    } else {
      int sig = WTERMSIG(status);
      result_ = verdict(Outcome::kSignal, fmt::format("signal {} ({})", sig, ::strsignal(sig)), 0,
                        sig);
    }
  }

  int64_t heartbeat_time() const {
    struct stat st{};
    if (o_.heartbeat.empty() || ::stat(o_.heartbeat.c_str(), &st) != 0) return 0;
    return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }

  void check_hang() {
    int64_t mtime = heartbeat_time();
    if (mtime != heartbeat_mtime_) {
      heartbeat_mtime_ = mtime;
      last_progress_ = Clock::now();
      if (o_.on_progress) o_.on_progress(std::nullopt);
    }
    if (o_.hang_timeout_s <= 0) return;
    double quiet = seconds_since(last_progress_);
    if (quiet < o_.hang_timeout_s) return;
    const bool by_output = !progress_seen_ && lines_are_activity_;
    AttemptResult r = verdict(
        Outcome::kHang,
        by_output ? fmt::format("no output for {:.1f} s (--hang-timeout {}; no progress line yet, "
                                "so any output counted)",
                                quiet, o_.hang_timeout_s)
                  : fmt::format("no progress for {:.1f} s (--hang-timeout {})", quiet,
                                o_.hang_timeout_s));
    r.detect_seconds = quiet - o_.hang_timeout_s;
    result_ = r;
  }

  // Whatever the verdict, nothing the job started is left running, and its last output is
  // passed on.
  void finish() {
    if (!exited_ && (result_->outcome == Outcome::kFinished || result_->outcome == Outcome::kExit)) {
      exited_ = true;
    }
    stop_tree(job_.pid, exited_ ? std::min(o_.kill_grace_s, 1.0) : o_.kill_grace_s);
    for (int* fd : {&job_.out, &job_.err}) {
      if (*fd < 0) continue;
      char buf[kReadBytes];
      ssize_t n;
      while ((n = ::read(*fd, buf, sizeof buf)) > 0) {
        out_.write(fd == &job_.out ? STDOUT_FILENO : STDERR_FILENO,
                   std::string_view(buf, static_cast<size_t>(n)), o_.stop);
      }
      ::close(*fd);
      *fd = -1;
    }
  }

  const AttemptOptions& o_;
  Started job_;
  PassThrough own_output_;
  PassThrough& out_;
  const bool lines_are_activity_;  // no --heartbeat: output is activity until a progress line
  bool progress_seen_ = false;     // this attempt has printed a progress line
  bool tell_unmatched_ = lines_are_activity_ && static_cast<bool>(o_.on_unmatched);
  std::optional<AttemptResult> result_;
  std::optional<int64_t> last_step_;
  Clock::time_point last_progress_;
  int64_t heartbeat_mtime_ = 0;
  bool exited_ = false;
  LineSplitter out_line_;
  LineSplitter err_line_;
  std::vector<char> read_buffer_ = std::vector<char>(kReadBytes);
  bool after_exit_ = false;  // the job has ended: its last output is read for progress only
  Clock::time_point read_time_;
};

}  // namespace

void PassThrough::write(int fd, std::string_view bytes, const std::atomic<bool>* stop) {
  while (!bytes.empty() && !closed(fd)) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    const int error = n < 0 ? errno : EIO;
    if (error == EINTR || error == EAGAIN) {  // a signal, or a non-blocking stream that is full
      if (stop != nullptr && stop->load()) return;  // stopping: the reader does not read
      pollfd p{fd, POLLOUT, 0};
      if (error == EAGAIN) ::poll(&p, 1, kTickMs);
      continue;
    }
    if (fd >= 0 && fd < 3) closed_[fd] = true;
    if (on_closed_) on_closed_(fd, error);
    return;
  }
}

AttemptResult run_attempt(const AttemptOptions& options) {
  if (options.argv.empty()) throw Error("no command after --");
  install_sigchld();
  Started job = start(options);
  if (options.on_start) options.on_start(job.pid);
  Watch watch(options, job);
  return watch.run();
}

std::string outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kFinished: return "finished";
    case Outcome::kExit: return "exit";
    case Outcome::kSignal: return "signal";
    case Outcome::kHang: return "hang";
    case Outcome::kFatalLine: return "fatal_line";
    case Outcome::kStopped: return "stopped";
  }
  return "?";
}

}  // namespace plumb::supervise
