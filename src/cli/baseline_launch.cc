// plumb baseline started alone: choose the ranks, build the launch command, run it in a process
// group of its own that plumb's signals reach and that does not outlive plumb.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/baseline_command.h"
#include "cli/slurm_launch.h"
#include "common/error.h"
#include "common/regex.h"
#include "common/strings.h"
#include "supervise/tool_process.h"

namespace plumb::cli {
namespace {

void add(std::vector<std::string>& argv, const char* flag, const std::string& value) {
  if (!value.empty()) argv.insert(argv.end(), {flag, value});
}

// The options every rank needs, as the ranks' command line. Not --db: the ranks hand their round
// to this process (--round-output), which alone opens the store, and a postgresql:// URL's
// password in the ranks' argv would be seen by every user of every node (ps).
std::vector<std::string> worker_arguments(const BaselineOptions& o) {
  std::vector<std::string> argv = {"baseline", "--worker"};
  add(argv, "--label", o.label);
  add(argv, "--collectives", o.collectives);
  add(argv, "--sizes", o.sizes);
  add(argv, "--iters", std::to_string(o.iters));
  add(argv, "--timeout", std::to_string(o.timeout_seconds));
  add(argv, "--cluster", o.cluster);
  add(argv, "--backend", o.backend);
  add(argv, "--output-dir", o.output_dir);
  add(argv, "--compare", o.compare);
  add(argv, "--threshold", fmt::format("{}", o.threshold_percent));
  if (o.quick) argv.emplace_back("--quick");
  if (o.quiet) argv.emplace_back("--quiet");
  return argv;
}

int count_entries(const std::string& folder, const Regex& name) {
  std::error_code ec;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (name.match(entry.path().filename().string())) ++count;
  }
  return count;
}

// NVIDIA GPUs the driver lists, else Ascend NPUs (/dev/davinciN).
int accelerators_here() {
  const int gpus = count_entries("/proc/driver/nvidia/gpus", Regex(".+"));
  return gpus > 0 ? gpus : count_entries("/dev", Regex("davinci[0-9]+"));
}

}  // namespace

std::vector<std::string> split_words(const std::string& text, const std::string& option) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // ' or " while inside one
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool escapes = quote != '\'' && c == '\\';
    if (escapes && i + 1 == text.size()) {
      throw Error(fmt::format("{} '{}': a backslash at the end escapes nothing", option, text));
    }
    if (escapes && (quote == 0 || std::strchr("\"\\$`", text[i + 1]) != nullptr)) {
      word += text[++i];
      in_word = true;
    } else if (quote != 0 && c == quote) {
      quote = 0;
    } else if (quote == 0 && (c == '\'' || c == '"')) {
      quote = c;
      in_word = true;
    } else if (quote == 0 && std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    throw Error(fmt::format("{} '{}': the quote {} is not closed", option, text, quote));
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
constexpr auto kGrace = std::chrono::seconds(5);  // from SIGTERM to SIGKILL for the group

// In the child: a process group of its own, killed when plumb dies (even by SIGKILL), the
// held signals unblocked, then exec.
[[noreturn]] void exec_in_own_group(const std::vector<std::string>& argv, pid_t parent,
                                    const sigset_t& held) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(128 + SIGKILL);  // plumb died before the line above
  pthread_sigmask(SIG_UNBLOCK, &held, nullptr);
  // In a background group reading the terminal would stop it (SIGTTIN); the ranks read nothing.
  if (const int null_fd = open("/dev/null", O_RDONLY); null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  fmt::print(stderr, "plumb: error: cannot run {}: {}\n", argv[0], std::strerror(errno));
  _exit(127);
}

// Waits for `pid`; a forwarded signal sends SIGTERM to its group, SIGKILL after kGrace or at a
// second signal.
ChildExit wait_forwarding(pid_t pid, const sigset_t& set) {
  using Clock = std::chrono::steady_clock;
  ChildExit result;
  std::optional<Clock::time_point> kill_at;
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done < 0 && errno != EINTR) break;  // not ours to wait for any more
    if (done == pid) {
      result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
      break;
    }
    if (kill_at && Clock::now() >= *kill_at) {
      kill(-pid, SIGKILL);
      kill_at.reset();
    }
    const timespec tick{0, 100'000'000};
    siginfo_t info;
    const int s = sigtimedwait(&set, &info, &tick);
    if (s > 0 && s != SIGCHLD && result.received != 0) {
      kill(-pid, SIGKILL);  // a second one (Ctrl-C twice): no more grace
    } else if (s > 0 && s != SIGCHLD) {
      result.received = s;
      kill(-pid, SIGTERM);
      kill_at = Clock::now() + kGrace;
    }
  }
  if (result.received != 0) kill(-pid, SIGKILL);  // whatever of the group is left
  return result;
}

}  // namespace

HeldSignals::HeldSignals() {
  sigemptyset(&set_);
  for (int s : kForwarded) sigaddset(&set_, s);
  sigaddset(&set_, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
}

HeldSignals::~HeldSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

ChildExit run_in_own_group(const std::vector<std::string>& argv) {
  const HeldSignals held;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) exec_in_own_group(argv, parent, held.set());
  setpgid(pid, pid);  // also here, so that a signal right after fork reaches the group
  return wait_forwarding(pid, held.set());
}

int default_ranks(int accelerators, int cores) {
  return accelerators > 0 ? accelerators : std::clamp(cores, 2, 8);
}

std::vector<std::string> launch_command(const BaselineOptions& o, const std::string& self,
                                        int ranks, int cores, bool root) {
  std::vector<std::string> argv;
  if (!o.launcher.empty()) {
    argv = split_words(o.launcher, "--launcher");
    if (argv.empty()) throw Error("--launcher is empty: name the program that starts the ranks");
  } else {
    argv = {"mpirun", "-np", std::to_string(ranks)};
    add(argv, "--hostfile", o.hostfile);
    if (o.hostfile.empty() && ranks > cores) argv.emplace_back("--oversubscribe");
    if (root) argv.emplace_back("--allow-run-as-root");
  }
  argv.push_back(self);
  for (std::string& a : worker_arguments(o)) argv.push_back(std::move(a));
  return argv;
}

namespace {

// --launcher slurm: srun (or mpirun) as this allocation and its MPI plugins want it.
std::vector<std::string> slurm_command(const BaselineOptions& o, const std::string& self) {
  const SlurmLaunch launch = slurm_launcher(o.ranks, accelerators_here(), geteuid() == 0);
  if (!o.quiet) fmt::print(std::cerr, "plumb baseline: {}\n", launch.note);
  std::vector<std::string> argv = launch.words;
  argv.push_back(self);
  for (std::string& a : worker_arguments(o)) argv.push_back(std::move(a));
  return argv;
}

}  // namespace

std::vector<std::string> ranks_command(const BaselineOptions& o) {
  if (!o.launcher.empty() && !o.hostfile.empty()) {
    throw Error("--launcher and --hostfile: give one (--hostfile is for the mpirun plumb starts)");
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (o.launcher == kSlurmLauncher) return slurm_command(o, self);
  if (o.launcher.empty() && !supervise::found_in_path("mpirun")) {
    throw Error("mpirun is not in PATH: install OpenMPI (scripts/install-deps installs "
                "openmpi-bin), or name your launcher with --launcher \"srun ...\"");
  }
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const int ranks = o.ranks > 0 ? o.ranks : default_ranks(accelerators_here(), cores);
  return launch_command(o, self, ranks, cores, geteuid() == 0);
}

}  // namespace plumb::cli
