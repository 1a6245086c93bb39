// plumb baseline started alone: choose the ranks, build the launch command, run it.
#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "cli/baseline_command.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::cli {
namespace {

void add(std::vector<std::string>& argv, const char* flag, const std::string& value) {
  if (!value.empty()) argv.insert(argv.end(), {flag, value});
}

// The options every rank needs, as the ranks' command line.
std::vector<std::string> worker_arguments(const BaselineOptions& o) {
  std::vector<std::string> argv = {"baseline", "--worker"};
  add(argv, "--label", o.label);
  add(argv, "--collectives", o.collectives);
  add(argv, "--sizes", o.sizes);
  add(argv, "--iters", std::to_string(o.iters));
  add(argv, "--cluster", o.cluster);
  add(argv, "--backend", o.backend);
  add(argv, "--db", o.db);
  add(argv, "--output-dir", o.output_dir);
  add(argv, "--compare", o.compare);
  add(argv, "--threshold", fmt::format("{}", o.threshold_percent));
  if (o.quick) argv.emplace_back("--quick");
  if (o.quiet) argv.emplace_back("--quiet");
  return argv;
}

int count_entries(const std::string& folder, const std::regex& name) {
  std::error_code ec;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (std::regex_match(entry.path().filename().string(), name)) ++count;
  }
  return count;
}

// NVIDIA GPUs the driver lists, else Ascend NPUs (/dev/davinciN).
int accelerators_here() {
  const int gpus = count_entries("/proc/driver/nvidia/gpus", std::regex(".+"));
  return gpus > 0 ? gpus : count_entries("/dev", std::regex("davinci[0-9]+"));
}

bool in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split_list(path ? path : "", ':')) {
    if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

int run_inheriting(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) {
    execvp(args[0], args.data());
    fmt::print(stderr, "plumb: error: cannot run {}: {}\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  throw Error(fmt::format("{} was killed by signal {}", argv[0], WTERMSIG(status)));
}

int default_ranks(int accelerators, int cores) {
  return accelerators > 0 ? accelerators : std::clamp(cores, 2, 8);
}

std::vector<std::string> launch_command(const BaselineOptions& o, const std::string& self,
                                        int ranks, int cores, bool root) {
  std::vector<std::string> argv;
  if (!o.launcher.empty()) {
    argv = split_list(o.launcher, ' ');
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

std::vector<std::string> ranks_command(const BaselineOptions& o) {
  if (!o.launcher.empty() && !o.hostfile.empty()) {
    throw Error("--launcher and --hostfile: give one (--hostfile is for the mpirun plumb starts)");
  }
  if (o.launcher.empty() && !in_path("mpirun")) {
    throw Error("mpirun is not in PATH: install OpenMPI (scripts/install-deps installs "
                "openmpi-bin), or name your launcher with --launcher \"srun ...\"");
  }
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const int ranks = o.ranks > 0 ? o.ranks : default_ranks(accelerators_here(), cores);
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  return launch_command(o, self, ranks, cores, geteuid() == 0);
}

}  // namespace plumb::cli
