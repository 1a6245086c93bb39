// plumb run never dies before its job, and never kills a healthy one (issue 28, item 3): hostile
// patterns on megabyte lines, a stdout closed by `| head -1`, an events file that cannot be
// written, logs in no known format, a checkpoint directory the job creates. Each case is a tiny
// shell job under the real binary, a few seconds at most.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/processes.h"
#include "support/run_supervised.h"
#include "support/subprocess.h"

namespace plumb::test {
namespace {

namespace fs = std::filesystem;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// CPU seconds (user + system) a process has used, from /proc/PID/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int k = 3; k <= 15 && fields >> field; ++k) {
    if (k >= 14) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

pid_t plumb_pid(const std::string& marker) {
  for (const Process& p : processes_with(marker)) {
    if (!p.argv.empty() && fs::path(p.argv[0]).filename() == "plumb") return p.pid;
  }
  return -1;
}

// The patterns that crashed or hung std::regex, over 1 MB output lines (issue 28: '.*step (\d+).*'
// overflowed the stack on 60 KB, '(a|aa)*c' crashed on 30 KB, '(a+)+b' spun for ten minutes and
// ignored SIGTERM). Now: the step is read, plumb idles once the lines are through, and SIGTERM
// stops it and the job within 1 s.
TEST(RunSafety, HostilePatternsOnMegabyteLinesNeitherCrashNorBlockSigterm) {
  const std::string dir = temp_dir("run-hostile");
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh",
             "for i in 1 2 3 4 5; do printf 'step 7 '; head -c 1000000 /dev/zero | tr '\\0' a; "
             "echo; done\ntouch " + dir + "/printed\nexec sleep 60\n");
  write_file(dir + "/run.sh", "exec " + kPlumb + " run --events " + events +
                                  " --progress-regex '.*step (\\d+).*' --progress-regex "
                                  "'(a|aa)*c' --progress-regex '(a+)+b' --fatal-regex "
                                  "'(x+x+)+y' --kill-grace 5 -- sh " + dir +
                                  "/job.sh >/dev/null\n");
  test::Run run;
  std::thread runner([&] { run = run_command("sh " + dir + "/run.sh"); });
  const bool through = wait_for(
      [&] {
        return fs::exists(dir + "/printed") &&
               read_file(events).find("\"event\":\"progress\"") != std::string::npos;
      },
      std::chrono::seconds(30));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last line read
  const pid_t pid = plumb_pid(events);
  const double cpu_before = cpu_seconds(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double idle_cpu = cpu_seconds(pid) - cpu_before;
  const auto sent = std::chrono::steady_clock::now();
  if (pid > 0) ::kill(pid, SIGTERM);
  runner.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ASSERT_TRUE(through) << run.err;
  ASSERT_GT(pid, 0);
  EXPECT_LT(cpu_before, 5.0) << "5 MB of output cost more than 5 s of CPU";
  EXPECT_LT(idle_cpu, 0.2) << "plumb spins after the lines are through";
  EXPECT_LT(seconds, 1.0) << "SIGTERM to plumb obeyed only after " << seconds << " s";
  EXPECT_EQ(run.exit_code, 130) << run.err;
  const std::vector<nlohmann::json> all = events_of(events);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back()["event"], "stopped");
  const auto progress = of_kind(all, "progress");
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress[0]["step"], 7);
}

// While a job prints 1 MB lines without pause, SIGTERM still stops plumb within 1 s: matching
// runs on bounded prefixes between reads, never for longer than a read's worth.
TEST(RunSafety, SigtermIsObeyedWhileMegabyteLinesPourIn) {
  const std::string dir = temp_dir("run-pour");
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh",
             "while :; do printf 'step 7 '; head -c 1000000 /dev/zero | tr '\\0' a; echo; done\n");
  write_file(dir + "/run.sh", "exec " + kPlumb + " run --events " + events +
                                  " --progress-regex '.*step (\\d+).*' --progress-regex '(a+)+b' "
                                  "--kill-grace 5 -- sh " + dir + "/job.sh >/dev/null\n");
  test::Run run;
  std::thread runner([&] { run = run_command("sh " + dir + "/run.sh"); });
  const bool progressed = wait_for(
      [&] { return read_file(events).find("\"event\":\"progress\"") != std::string::npos; },
      std::chrono::seconds(30));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const pid_t pid = plumb_pid(events);
  const auto sent = std::chrono::steady_clock::now();
  if (pid > 0) ::kill(pid, SIGTERM);
  runner.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ASSERT_TRUE(progressed) << run.err;
  EXPECT_LT(seconds, 1.0);
  EXPECT_EQ(run.exit_code, 130) << run.err;
  EXPECT_EQ(events_of(events).back()["event"], "stopped");
}

// `plumb run ... | head -1`: head exits after the first line; plumb, whose next write meets the
// closed pipe, says so once and supervises on — the crash is restarted and the run finishes.
TEST(RunSafety, AStdoutClosedByHeadIsNotedAndTheJobIsStillSupervised) {
  const std::string dir = temp_dir("run-head");
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh",
             "echo \"attempt ${PLUMB_RESTART:-0} line 1\"; sleep 0.3\n"
             "echo \"attempt ${PLUMB_RESTART:-0} line 2\"; echo ' iteration 1/ 2 |'; sleep 0.2\n"
             "[ -n \"$PLUMB_RESTART\" ] || exit 3\necho ' iteration 2/ 2 |'\n");
  const test::Run run =
      run_command("{ { " + kPlumb + " run --backoff 0.1 --events " + events + " -- sh " + dir +
                  "/job.sh; echo $? > " + dir + "/rc; } | head -1; }");
  EXPECT_EQ(run.out, "attempt 0 line 1\n");
  EXPECT_EQ(read_file(dir + "/rc"), "0\n") << run.err;
  EXPECT_EQ(count(run.err, "plumb run: standard output is closed (Broken pipe): the job's output "
                           "to it is dropped from now on; supervision goes on\n"),
            1u)
      << run.err;
  const std::vector<nlohmann::json> all = events_of(events);
  const auto closed = of_kind(all, "output_closed");
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0]["stream"], "stdout");
  EXPECT_EQ(closed[0]["error"], "Broken pipe");
  EXPECT_EQ(of_kind(all, "failure").size(), 1u);
  EXPECT_EQ(of_kind(all, "restart").size(), 1u);
  EXPECT_EQ(all.back()["event"], "finished");
}

TEST(RunSafety, AnEventsFileThatCannotBeWrittenStopsTheRunBeforeTheJob) {
  const std::string dir = temp_dir("run-full");
  const test::Run run =
      run_command(kPlumb + " run --events /dev/full -- touch " + dir + "/started");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err,
            "plumb: error: --events /dev/full: cannot be written: No space left on device\n");
  EXPECT_FALSE(fs::exists(dir + "/started"));
}

// The events file reaches a file size limit (1 KiB, `ulimit -f 2`) after a few events: plumb is
// not killed by SIGXFSZ, says so once, restarts the job three times, and counts the lost events;
// what the file holds is whole lines.
TEST(RunSafety, AnEventsFileThatFailsLaterIsReportedOnceAndCounted) {
  const std::string dir = temp_dir("run-fsize");
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh", "[ \"${PLUMB_RESTART:-0}\" -ge 3 ] || exit 3\n");
  const test::Run run =
      run_command("{ { sh -c 'ulimit -f 2; exec " + kPlumb +
                  " run --backoff 0 --max-restarts 5 --events " + events + " -- sh " + dir +
                  "/job.sh'; echo $? > " + dir + "/rc; } 2>&1 | cat; }");
  EXPECT_EQ(read_file(dir + "/rc"), "0\n") << run.out;
  EXPECT_EQ(count(run.out, "plumb run: --events " + events +
                               ": writing failed (File too large): events are lost while it "
                               "fails; supervision goes on\n"),
            1u)
      << run.out;
  EXPECT_NE(run.out.find("the job finished with exit 0 (attempt 4,"), std::string::npos);
  const std::vector<nlohmann::json> written = events_of(events);  // every line parses
  ASSERT_FALSE(written.empty());
  EXPECT_EQ(written[0]["event"], "start");
  EXPECT_LE(fs::file_size(events), 1024u);
  // 4 starts, 3 failures, back-offs and restarts, 1 finished: 14 events, those not in the file
  // lost; said in the run's last line.
  const std::string counted = fmt::format(
      "plumb run: --events {}: {} of 14 events could not be written (the first failure: File too "
      "large)\n",
      events, 14 - written.size());
  ASSERT_GE(run.out.size(), counted.size());
  EXPECT_EQ(run.out.substr(run.out.size() - counted.size()), counted) << run.out;
}

// The metrics file's folder disappears during the run (the job removes it, then makes it again
// after the restart): the failure is said once, the run goes on to its restart and end, the file
// is written again once it can be, and the failed updates are counted.
TEST(RunSafety, AMetricsFileThatFailsLaterIsReportedOnceAndCounted) {
  const std::string dir = temp_dir("run-metrics-gone");
  write_file(dir + "/job.sh",
             "if [ -z \"$PLUMB_RESTART\" ]; then rm -r m; exit 3; fi\nmkdir m\n");
  fs::create_directory(dir + "/m");
  const test::Run run = run_command("cd " + dir + " && " + kPlumb +
                                    " run --backoff 0 --metrics m/metrics.prom -- sh job.sh");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(count(run.err, "plumb run: --metrics m/metrics.prom: cannot write"), 1u) << run.err;
  EXPECT_NE(run.err.find("plumb run: --metrics m/metrics.prom: cannot write: folder m does not "
                         "exist; the file keeps its last content until a write succeeds; "
                         "supervision goes on\n"),
            std::string::npos)
      << run.err;
  // Updates: the first attempt's start, the restart, the second start (these two failed), the
  // run's end and the last one after it.
  EXPECT_NE(run.err.find("plumb run: --metrics m/metrics.prom: 2 of 5 updates could not be "
                         "written (the first failure: cannot write: folder m does not exist)\n"),
            std::string::npos)
      << run.err;
  EXPECT_NE(read_file(dir + "/m/metrics.prom").find("plumb_run_"), std::string::npos);
}

// A job whose lines match no default progress pattern prints one every 0.25 s for 2 s under a
// 1 s hang timeout: it is not a hang (any output counts until a progress line appears), and after
// its first 1,000 lines plumb says once that nothing matched, with one of them.
TEST(RunSafety, AJobWithUnrecognisedLinesRunsToItsEnd) {
  const std::string dir = temp_dir("run-unknown");
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh",
             "i=1; while [ $i -le 1000 ]; do echo \"Epoch 0 | step $i/1000 | loss 2.31\"; "
             "i=$((i+1)); done\n"
             "for j in 1 2 3 4 5 6 7 8; do sleep 0.25; echo \"Epoch 1 | step $j/8 | loss 2.1\"; "
             "done\n");
  const test::Run run = run_command(kPlumb + " run --hang-timeout 1 --events " + events +
                                    " -- sh " + dir + "/job.sh");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(count(run.err,
                  "plumb run: none of the first 1000 output lines matched a progress pattern (the "
                  "defaults know Megatron-LM, DeepSpeed, torchtitan, Hugging Face Trainer and "
                  "plumb.train-events/1), e.g. \"Epoch 0 | step 1000/1000 | loss 2.31\". Until "
                  "one does, any output counts as progress (hang detection sees only silence). "
                  "Give --progress-regex with the step as group 1 (--progress-regex 'step "
                  "(\\d+)') to detect a job that prints but makes no progress and to count steps "
                  "lost\n"),
            1u)
      << run.err;
  const std::vector<nlohmann::json> all = events_of(events);
  EXPECT_TRUE(of_kind(all, "failure").empty());
  const auto said = of_kind(all, "progress_unrecognised");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0]["lines"], 1000);
  EXPECT_EQ(all.back()["event"], "finished");
}

// The job creates --checkpoint-dir at its first save (relative to the directory plumb started
// in), then changes directory after the restart: the missing directory was waited for, the
// back-off announced, and PLUMB_RESUME_FROM is absolute, so the job still finds its checkpoint.
TEST(RunSafety, ACheckpointDirTheJobCreatesIsWaitedForAndResumedFromByAbsolutePath) {
  const std::string dir = fs::canonical(temp_dir("run-ckdir")).string();
  const std::string events = dir + "/events.jsonl";
  write_file(dir + "/job.sh",
             "if [ -z \"$PLUMB_RESTART\" ]; then\n"
             "  mkdir -p ckpt/iter_0000002 && echo w > ckpt/iter_0000002/model.pt\n"
             "  echo 2 > ckpt/latest_checkpointed_iteration.txt\n"
             "  echo ' iteration 1/ 4 |'; echo ' iteration 2/ 4 |'; echo ' iteration 3/ 4 |'; "
             "exit 3\nfi\ncd /\n"
             "echo \"resume from $PLUMB_RESUME_FROM step $PLUMB_RESUME_STEP\"\n"
             "[ -f \"$PLUMB_RESUME_FROM/model.pt\" ] && echo 'found it'\n"
             "echo ' iteration 3/ 4 |'; echo ' iteration 4/ 4 |'\n");
  const test::Run run = run_command("cd " + dir + " && " + kPlumb +
                                    " run --backoff 0.1 --checkpoint-dir ckpt --events " + events +
                                    " -- sh " + dir + "/job.sh");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("plumb run: --checkpoint-dir " + dir +
                         "/ckpt does not exist yet: waiting for the job to create it (a restart "
                         "before then starts from the beginning)\n"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("plumb run: waiting 0.1 s before attempt 2 (--backoff, doubled after "
                         "each restart)\n"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.out.find("resume from " + dir + "/ckpt/iter_0000002 step 2\nfound it\n"),
            std::string::npos)
      << run.out;
  const std::vector<nlohmann::json> all = events_of(events);
  const auto waits = of_kind(all, "backoff");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]["attempt"], 2);
  EXPECT_EQ(waits[0]["seconds"], 0.1);
  const auto checkpoints = of_kind(all, "checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0]["path"], dir + "/ckpt/iter_0000002");
}

// The directory is still missing at the restart: the restart goes on from the beginning, said.
TEST(RunSafety, ARestartBeforeTheCheckpointDirExistsStartsFromTheBeginning) {
  const std::string dir = temp_dir("run-nockdir");
  const std::string events = dir + "/events.jsonl";
  const test::Run run = run_command(kPlumb + " run --backoff 0 --checkpoint-dir " + dir +
                                    "/never --events " + events +
                                    " -- sh -c '[ -n \"$PLUMB_RESTART\" ] || exit 3'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("plumb run: no checkpoint to resume from (" + dir +
                         "/never does not exist yet): restarting from the beginning\n"),
            std::string::npos)
      << run.err;
  const auto checkpoints = of_kind(events_of(events), "checkpoint");
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0]["error"], dir + "/never does not exist yet");
  EXPECT_TRUE(checkpoints[0]["path"].is_null());
}

}  // namespace
}  // namespace plumb::test
