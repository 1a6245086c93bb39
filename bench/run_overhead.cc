// bench/run_overhead: what `plumb run` costs a job it supervises.
//
// Figures (issue 12): supervising a command that prints 1 million lines costs ≤ 5% wall time
// over running it directly; a crash is detected ≤ 100 ms after the exit.
//   1. throughput: bench/run_overhead_job prints N lines into a pipe this bench drains, directly
//      and as `plumb run --hang-timeout 600 -- job`, whose pass-through writes the same bytes
//      into the same kind of pipe; and, as the floor of any pass-through, `job | cat` (one more
//      pipe hop, no work). Wall time from spawn to reap, the three taking turns (the order
//      rotating), ratios plumb/direct and plumb/cat per turn. The jobs: a Megatron-LM training
//      log (every line a progress line) and a plain log (no line matching any default pattern),
//      both copied from a template at memory speed, the worst case; and the Megatron lines
//      formatted by snprintf, as a logger does. And the Megatron log once more with the default's
//      own regex given as --progress-regex, matched by RE2 instead of walked as pieces: what the
//      pieces fast path saves (issue 28).
//   2. detection: the job records CLOCK_MONOTONIC just before _exit(3); the delay is the time
//      this bench sees its parent end minus that stamp: `plumb run --max-restarts 0 -- job`
//      (plumb detects, stops the tree, reports, exits) against this bench fork/exec'ing the
//      job itself and waitpid'ing it (the floor: the kernel's exit and wake-up path).
//
//   build/bench/run_overhead [--lines N] [--runs N] [--crashes N] [--smoke] [--plumb PATH]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/stats.h"

extern char** environ;

namespace {

constexpr double kTargetRatio = 1.05;
constexpr double kTargetDetectMs = 100;

struct Options {
  uint64_t lines = 1000000;
  int runs = 7;
  int crashes = 15;
  std::string plumb = PLUMB_BINARY;
  std::string job = JOB_BINARY;
};

double median(const std::vector<double>& v) { return plumb::percentile(v, 50); }

int64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

struct Ran {
  double seconds = 0;
  uint64_t bytes = 0;  // read from its stdout
  int status = -1;
  int64_t reaped_ns = 0;
};

// Spawns argv with stdout into a pipe drained here (stderr to /dev/null) and reaps it.
Ran run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  Ran r;
  const int64_t t0 = monotonic_ns();
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  static char buf[1 << 16];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) r.bytes += static_cast<uint64_t>(n);
  ::close(out[0]);
  if (pid > 0) ::waitpid(pid, &r.status, 0);
  r.reaped_ns = monotonic_ns();
  r.seconds = static_cast<double>(r.reaped_ns - t0) / 1e9;
  return r;
}

struct Turns {
  std::vector<double> direct_s, cat_s, plumb_s, ratios, cat_ratios;
};

// Runs the job directly, through cat and under plumb run, taking turns; false (reported) when
// one fails or their outputs differ in size.
bool throughput(const Options& o, const std::string& mode, Turns& out,
                const std::vector<std::string>& plumb_options = {}) {
  const std::vector<std::string> direct = {o.job, mode, std::to_string(o.lines)};
  std::vector<std::string> supervised = {o.plumb, "run", "--hang-timeout", "600"};
  supervised.insert(supervised.end(), plumb_options.begin(), plumb_options.end());
  supervised.push_back("--");
  supervised.insert(supervised.end(), direct.begin(), direct.end());
  const std::vector<std::string> piped = {
      "/bin/sh", "-c", fmt::format("'{}' {} {} | cat", o.job, mode, o.lines)};
  const std::vector<std::string>* commands[] = {&direct, &piped, &supervised};
  for (int r = 0; r < o.runs; ++r) {
    Ran ran[3];
    for (int k = 0; k < 3; ++k) {
      const int which = (r + k) % 3;
      ran[which] = run(*commands[which]);
    }
    if (ran[0].status != 0 || ran[1].status != 0 || ran[2].status != 0 ||
        ran[0].bytes != ran[2].bytes || ran[0].bytes != ran[1].bytes) {
      fmt::print("# {}: a run failed (status direct {}, cat {}, plumb {}; bytes {}, {}, {})\n",
                 mode, ran[0].status, ran[1].status, ran[2].status, ran[0].bytes, ran[1].bytes,
                 ran[2].bytes);
      return false;
    }
    out.direct_s.push_back(ran[0].seconds);
    out.cat_s.push_back(ran[1].seconds);
    out.plumb_s.push_back(ran[2].seconds);
    out.ratios.push_back(ran[2].seconds / ran[0].seconds);
    out.cat_ratios.push_back(ran[2].seconds / ran[1].seconds);
  }
  return true;
}

// Milliseconds from the job's stamp to this bench reaping its parent; -1 when it went wrong.
double detection_ms(const std::vector<std::string>& argv, const std::string& stamp,
                    int expected_exit) {
  std::filesystem::remove(stamp);
  Ran r = run(argv);
  int64_t exited = 0;
  if (!(std::ifstream(stamp) >> exited) || !WIFEXITED(r.status) ||
      WEXITSTATUS(r.status) != expected_exit) {
    return -1;
  }
  return static_cast<double>(r.reaped_ns - exited) / 1e6;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--lines") o.lines = std::stoull(next());
    else if (a == "--runs") o.runs = std::stoi(next());
    else if (a == "--crashes") o.crashes = std::stoi(next());
    else if (a == "--plumb") o.plumb = next();
    else if (a == "--smoke") { o.lines = 20000; o.runs = 1; o.crashes = 2; }
    else { fmt::print(stderr, "run_overhead: unknown option {}\n", a); std::exit(2); }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  fmt::print("# run_overhead: {} lines per run, {} runs each way alternating; {} crashes each way "
             "alternating\n",
             o.lines, o.runs, o.crashes);
  double worst = 0, worst_cat = 0, formatted = 0;
  for (const std::string mode : {"megatron", "plain", "printf"}) {
    Turns t;
    if (!throughput(o, mode, t)) return 1;
    if (mode == "printf") {
      formatted = median(t.ratios);
    } else {
      worst = std::max(worst, median(t.ratios));
      worst_cat = std::max(worst_cat, median(t.cat_ratios));
    }
    fmt::print("  {:8} direct {:.3f} s, | cat {:.3f} s, plumb run {:.3f} s (medians); per-run "
               "plumb/direct {:.2f}: median {:.3f}; plumb/cat {:.2f}: median {:.3f}\n",
               mode, median(t.direct_s), median(t.cat_s), median(t.plumb_s),
               fmt::join(t.ratios, " "), median(t.ratios), fmt::join(t.cat_ratios, " "),
               median(t.cat_ratios));
  }

  // The Megatron default's regex through RE2 (a user's --progress-regex) against the pieces.
  Turns pieces, re2;
  if (!throughput(o, "megatron", pieces) ||
      !throughput(o, "megatron", re2,
                  {"--progress-regex", R"(\biteration\s+(\d+)/\s*\d+\s*\|)"})) {
    return 1;
  }
  fmt::print("  megatron through RE2 (--progress-regex) {:.3f} s, as pieces (the default) {:.3f} s "
             "(medians): RE2/pieces {:.2f}\n",
             median(re2.plumb_s), median(pieces.plumb_s),
             median(re2.plumb_s) / median(pieces.plumb_s));

  const std::string stamp = (std::filesystem::temp_directory_path() /
                             fmt::format("plumb-run-bench-{}", ::getpid()))
                                .string();
  const std::vector<std::string> direct = {o.job, "crash", stamp};
  std::vector<std::string> supervised = {o.plumb, "run", "--max-restarts", "0", "--backoff", "0",
                                         "--"};
  supervised.insert(supervised.end(), direct.begin(), direct.end());
  std::vector<double> floor_ms, plumb_ms;
  for (int r = 0; r < o.crashes; ++r) {
    double f = 0, d = 0;
    if (r % 2 == 0) {
      f = detection_ms(direct, stamp, 3);
      d = detection_ms(supervised, stamp, 1);
    } else {
      d = detection_ms(supervised, stamp, 1);
      f = detection_ms(direct, stamp, 3);
    }
    if (f < 0 || d < 0) {
      fmt::print("# detection: a crash run did not end as expected\n");
      return 1;
    }
    floor_ms.push_back(f);
    plumb_ms.push_back(d);
  }
  std::filesystem::remove(stamp);
  fmt::print("  crash    plumb run exit − job exit: {:.2f} ms (median; runs {:.1f}); floor "
             "(waitpid of the job itself) {:.3f} ms\n",
             median(plumb_ms), fmt::join(plumb_ms, " "), median(floor_ms));
  fmt::print("# run_overhead: formatted job plumb/direct {:.3f} (target ≤ {:.2f}): {} · "
             "memory-speed jobs plumb/direct {:.3f}, plumb/cat {:.3f} · detection: median {:.1f} "
             "ms (target ≤ {:.0f} ms): {}\n",
             formatted, kTargetRatio, formatted <= kTargetRatio ? "within target" : "ABOVE TARGET",
             worst, worst_cat, median(plumb_ms), kTargetDetectMs,
             median(plumb_ms) <= kTargetDetectMs ? "within target" : "ABOVE TARGET");
  return 0;
}
