#include "supervise/patterns.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "supervise/attempt.h"
#include "support/subprocess.h"

namespace plumb::supervise {
namespace {

// What the regex alone says of `line`: whether it matches, and group 1's number.
struct Verdict {
  bool matched = false;
  std::optional<int64_t> step;
  bool operator==(const Verdict&) const = default;
};

Verdict by_regex(const LinePattern& p, const std::string& line) {
  LinePattern regex_only = p;
  regex_only.pieces.clear();
  std::optional<LineMatch> m = match_line({regex_only}, line);
  return m ? Verdict{true, m->step} : Verdict{};
}

Verdict by_pieces(const LinePattern& p, const std::string& line) {
  std::optional<LineMatch> m = match_line({p}, line);
  return m ? Verdict{true, m->step} : Verdict{};
}

const LinePattern& progress(const std::string& name) {
  static const std::vector<LinePattern> all = default_progress_patterns();
  for (const LinePattern& p : all) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no pattern " + name);
}

TEST(RunPatterns, TheDefaultsReadTheStepFromTheirFrameworksLines) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"megatron", " [2026-03-01 10:00:00] iteration      120/  500000 | consumed samples: 6 |"},
      {"deepspeed", "[Rank 0] step=120, skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]"},
      {"torchtitan", "step:  120  loss:  9.5432  memory: 12.3GiB(15.6%)"},
      {"hf-trainer", " 12%|█▏        | 120/1000 [01:02<07:37,  1.92it/s]"},
      {"plumb-train-events",
       R"({"schema":"plumb.train-events/1","time":1733330000.5,"step":120,"step_seconds":1.23})"},
  };
  const std::vector<LinePattern> defaults = default_progress_patterns();
  for (const auto& [name, line] : lines) {
    std::optional<LineMatch> m = match_line(defaults, line);
    ASSERT_TRUE(m.has_value()) << line;
    EXPECT_EQ(m->pattern->name, name);
    EXPECT_EQ(m->step, 120) << line;
  }
}

TEST(RunPatterns, PiecesFindWhatTheRegexFindsOnNearMisses) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"megatron",
       {"iteration 5/ 10|", "iteration5/10 |", "reiteration 5/10 |", "_iteration 5/10 |",
        "-iteration 5/10 |", "iteration 5/10 x | iteration 6/10 |", "iteration \t\r5/\v10\f|",
        "iteration  5 /10 |", "iteration 5/ |", "time per iteration (ms) iteration 7/8|",
        "iteration 99999999999999999999/1 |", "iteration 5/10 |\r", "\xa0iteration 5/10 |",
        "iteration\xa0 5/10 |", "iteration", "iterationiteration 3/4|"}},
      {"deepspeed",
       {"step=3, skipped=0", "step=3,skipped=", "xstep=3, skipped=", "step=3 , skipped=",
        "step=, skipped=", "step=3, skip step=4,  skipped=1", "step=3,\tskipped="}},
      {"torchtitan",
       {"step: 3 loss: 1", "step:3 loss:", "step:3loss:", "step: 3\tloss:", "mystep: 3 loss:",
        "step: x step: 4 loss:", "step:"}},
      {"hf-trainer",
       {"%|| 3/4 [", "%|abc| 3/4[", "%|abc|3/ 4 [", "%|a|b| 3/4 [", "%| 3/4 [", "%|%|x| 5/6 [",
        "%|x|\r7/8\t[", "%|x| 7/8 ]", "10%|\xe2\x96\x88| 9/10 [00:01<00:00]"}},
  };
  for (const auto& [name, lines] : cases) {
    const LinePattern& p = progress(name);
    ASSERT_FALSE(p.pieces.empty()) << name;
    for (const std::string& line : lines) {
      EXPECT_EQ(by_pieces(p, line), by_regex(p, line)) << name << ": " << line;
    }
  }
}

// Each framework's line, mutated at random (fragments of the patterns and the characters at
// their edges inserted, characters deleted or replaced): pieces and regex agree on every one.
TEST(RunPatterns, PiecesAgreeWithTheRegexOnRandomLines) {
  const std::vector<std::string> bases = {
      "[x] iteration 12/ 100 | loss", "[Rank 0] step=12, skipped=0, lr", "step: 12  loss: 9.5",
      " 12%|#   | 12/100 [00:01<00:02]"};
  const std::vector<std::string> fragments = {
      "iteration", "step=", "step:", "%|", "skipped=", "loss:", ",", "/", "|", "[", " ", "  ",
      "\t", "\r", "\v", "1", "42", "007", "x", "_", "-", "\xa0", "\xe2\x96\x88", "("};
  std::mt19937 random(12);
  std::uniform_int_distribution<size_t> pick(0, fragments.size() - 1);
  std::uniform_int_distribution<int> edits(0, 4);
  int matched = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = bases[static_cast<size_t>(i) % bases.size()];
    for (int n = edits(random); n > 0; --n) {
      const size_t at = std::uniform_int_distribution<size_t>(0, line.size() - 1)(random);
      switch (edits(random) % 3) {
        case 0: line.insert(at, fragments[pick(random)]); break;
        case 1: line.erase(at, 1); break;
        default: line.replace(at, 1, fragments[pick(random)]); break;
      }
      if (line.empty()) line = "x";
    }
    for (const char* name : {"megatron", "deepspeed", "torchtitan", "hf-trainer"}) {
      const LinePattern& p = progress(name);
      Verdict v = by_regex(p, line);
      matched += v.matched ? 1 : 0;
      ASSERT_EQ(by_pieces(p, line), v) << name << ": " << line;
    }
  }
  EXPECT_GT(matched, 5000);  // the corpus reaches the matching paths, not only the misses
}

// contrib/plumb_train_events.py's lines, printed by the job: the schema's name and "step" in any
// order; "step_seconds" is not "step", and a line of another schema is not progress.
TEST(RunPatterns, ATrainEventsLineIsProgressWhateverItsKeyOrder) {
  const std::vector<LinePattern> defaults = default_progress_patterns();
  std::optional<LineMatch> m = match_line(
      defaults, R"({"step_seconds": 1.2, "step": 7, "schema": "plumb.train-events/1"})");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pattern->name, "plumb-train-events");
  EXPECT_EQ(m->step, 7);
  EXPECT_FALSE(match_line(defaults, R"({"schema":"plumb.train-events/1","step_seconds":1.2})"));
  EXPECT_FALSE(match_line(defaults, R"({"schema":"plumb.run-events/1","step":7})"));
}

// The frameworks' own lines when they load a checkpoint: the step they resume after.
TEST(RunPatterns, ResumeLinesGiveTheStepTheJobResumedFrom) {
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"megatron", "  successfully loaded checkpoint from /ckpt/gpt [ t 1/8, p 1/4 ] at iteration "
                   "1000"},
      {"hf-trainer", "  Continuing training from global step 1000"},
      {"torchtitan", "[rank0]:[titan] 2025-01-01 10:00:00,000 - root - INFO - Loading the "
                     "checkpoint at step 1000."},
  };
  const std::vector<LinePattern> resume = default_resume_patterns();
  for (const auto& [name, line] : lines) {
    std::optional<LineMatch> m = match_line(resume, line);
    ASSERT_TRUE(m.has_value()) << line;
    EXPECT_EQ(m->pattern->name, name);
    EXPECT_EQ(m->step, 1000);
  }
  EXPECT_FALSE(match_line(resume, " iteration     1001/   10000 | consumed samples: 8 |"));
}

// "aclrtMalloc failed" holds no "ACL": under one entry with the literal "ACL" the prefilter
// skipped it.
// Likewise a watchdog timeout line that does not name NCCL.
TEST(RunPatterns, AnAclCallThatFailedAndAWatchdogTimeoutAreFatal) {
  std::optional<LineMatch> m =
      match_line(default_fatal_patterns(), "EE9999: aclrtMallocAsync failed, error code 207001");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pattern->name, "acl-error");
  m = match_line(default_fatal_patterns(),
                 "[Rank 3] Watchdog caught collective operation timeout: Work(SeqNum=7)");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pattern->name, "nccl-error");
}

TEST(RunPatterns, APatternRe2RefusesIsAnErrorWithRe2sReason) {
  EXPECT_EQ(test::error_message([] { user_pattern("--progress-regex", "(?=x)"); }),
            "--progress-regex '(?=x)': not a valid regular expression (invalid perl operator: "
            "(?=)");
  EXPECT_EQ(test::error_message([] { user_pattern("--fatal-regex", R"((a)\1)"); }),
            "--fatal-regex '(a)\\1': not a valid regular expression (invalid escape sequence: "
            "\\1)");
  EXPECT_EQ(test::error_message([] { user_pattern("--fatal-regex", "("); }),
            "--fatal-regex '(': not a valid regular expression (missing ): ()");
}

// The patterns that made std::regex overflow its stack or spin for minutes, on a 1 MB line:
// matched on the line's first 64 KiB, in linear time, with the answers RE2 gives.
TEST(RunPatterns, HostilePatternsOnAMegabyteLineAreMatchedOnItsFirst64KiB) {
  const std::string as(1 << 20, 'a');
  const std::vector<LinePattern> hostile = {user_pattern("--progress-regex", "(a|aa)*c"),
                                            user_pattern("--progress-regex", "(a+)+b"),
                                            user_pattern("--progress-regex", R"(.*step (\d+).*)")};
  EXPECT_FALSE(match_line(hostile, as));
  std::optional<LineMatch> m = match_line(hostile, "step 7 " + as);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->step, 7);
  EXPECT_FALSE(match_line(hostile, as + " step 8"));  // past the first 64 KiB
  EXPECT_TRUE(match_line(hostile, std::string(kMaxLineBytes - 7, 'a') + "step 9"));
}

TEST(RunPatterns, AFatalLineComesBeforeProgressAndAUserPatternHasNoPieces) {
  const std::vector<LinePattern> fatal = default_fatal_patterns();
  std::optional<LineMatch> m =
      match_line(fatal, "iteration 5/10 | NCCL error in: ProcessGroupNCCL.cpp");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pattern->name, "nccl-error");
  LinePattern user = user_pattern("--progress-regex", R"(done (\d+))");
  EXPECT_TRUE(user.pieces.empty());
  m = match_line({user}, "job done 17 steps");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->step, 17);
}

TEST(RunPatterns, ALiteralCursorSkipsOnlyTheLinesWithoutALiteral) {
  const std::vector<LinePattern> fatal = default_fatal_patterns();
  const std::string text = "plain line\nan NCCL line\nplain\nout of memory\n";
  LiteralCursor cursor(fatal, text);
  EXPECT_FALSE(cursor.may_match(0, 10));   // "plain line"
  EXPECT_TRUE(cursor.may_match(11, 23));   // "an NCCL line"
  EXPECT_FALSE(cursor.may_match(24, 29));  // "plain"
  EXPECT_TRUE(cursor.may_match(30, 43));   // "out of memory"
  const std::vector<LinePattern> user = {user_pattern("--fatal-regex", "plain")};
  LiteralCursor always(user, text);
  EXPECT_TRUE(always.may_match(0, 10));  // no literal: every line is tried
}

// A literal is searched either 16 positions at a time for two of its characters ("aclrt",
// "iteration", "step:": all their letters common) or by memchr of a rare one ("NCCL", "Xid"):
// either way it is found wherever it lies against those blocks (first, inside, across, last
// bytes of the line), and lines that hold its characters apart or a literal cut short are
// skipped.
TEST(RunPatterns, ALiteralIsFoundAtEveryOffsetAndNearMissesAreNot) {
  const std::vector<LinePattern> fatal = default_fatal_patterns();
  for (const std::string_view literal : {"aclrtMalloc failed", "NCCL error", " Xid ", "CUDA error"}) {
    for (size_t before = 0; before < 40; ++before) {
      for (size_t after : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}}) {
        const std::string line =
            std::string(before, 'c') + std::string(literal) + std::string(after, 'l');
        std::optional<LineMatch> m = match_line(fatal, line);
        ASSERT_TRUE(m.has_value()) << '"' << line << '"';
        LiteralCursor cursor(fatal, line);
        EXPECT_TRUE(cursor.may_match(0, line.size())) << '"' << line << '"';
      }
    }
  }
  const std::vector<LinePattern> progress = default_progress_patterns();
  for (const std::string_view literal : {"iteration 7/ 9 |", "step: 7 loss:"}) {
    for (size_t before = 0; before < 40; ++before) {
      const std::string line = std::string(before, 'r') + " " + std::string(literal);
      std::optional<LineMatch> m = match_line(progress, line);
      ASSERT_TRUE(m.has_value()) << '"' << line << '"';
      EXPECT_EQ(m->step, 7) << '"' << line << '"';
      LiteralCursor cursor(progress, line);
      EXPECT_TRUE(cursor.may_match(0, line.size())) << '"' << line << '"';
    }
  }
  EXPECT_FALSE(match_line(progress, std::string(50, 'r') + "iteratio n 7/ 9 |"));
  const std::vector<std::string> misses = {
      std::string(100, 'c') + "acl rtMalloc failed", "a" + std::string(64, 'c') + "lrt", "aclr",
      "NCC", std::string(33, 'N') + "CCX" + std::string(40, 'C'), "CUDA erro"};
  for (const std::string& miss : misses) {
    EXPECT_FALSE(match_line(fatal, miss)) << '"' << miss << '"';
    LiteralCursor cursor(fatal, miss);
    EXPECT_FALSE(cursor.may_match(0, miss.size())) << '"' << miss << '"';
  }
}

// Runs `script` under sh as one attempt with the default patterns, its pass-through output sent
// to /dev/null instead of the test's stdout.
AttemptResult watch(const std::string& script,
                    const std::function<void(AttemptOptions&)>& more = {}) {
  AttemptOptions o;
  o.argv = {"sh", "-c", script};
  o.progress = default_progress_patterns();
  o.fatal = default_fatal_patterns();
  o.resume = default_resume_patterns();
  o.kill_grace_s = 1;
  if (more) more(o);
  const int saved = ::dup(STDOUT_FILENO);
  const int null = ::open("/dev/null", O_WRONLY);
  ::dup2(null, STDOUT_FILENO);
  ::close(null);
  AttemptResult r = run_attempt(o);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  return r;
}

TEST(RunScan, ALineAndItsLiteralSplitAcrossReadsAreOneLine) {
  AttemptResult r =
      watch("printf 'iteration 4/ 10 |\\n iter'; sleep 0.3; printf 'ation 5/ 10 |\\n'");
  EXPECT_EQ(r.outcome, Outcome::kFinished);
  EXPECT_EQ(r.last_step, 5);
  r = watch("printf 'iteration 4/ 10 |\\nNC'; sleep 0.3; printf 'CL error in: x\\n'; sleep 5");
  EXPECT_EQ(r.outcome, Outcome::kFatalLine);
  EXPECT_EQ(r.detail, "NCCL error in: x");
  EXPECT_EQ(r.last_step, 4);
}

TEST(RunScan, LinesWithoutALiteralAreSkippedAndTheOthersStillMatch) {
  AttemptResult r = watch(
      "for i in 1 2 3 4 5 6 7 8 9; do echo plain $i; done; echo 'iteration 3/ 9 |'; echo plain; "
      "echo 'xx step=4, skipped=0'; echo plain; echo 'Xid 79 on GPU 0'; echo 'iteration 5/ 9 |'; "
      "sleep 5");
  EXPECT_EQ(r.outcome, Outcome::kFatalLine);
  EXPECT_EQ(r.detail, "Xid 79 on GPU 0");
  EXPECT_EQ(r.last_step, 4);
}

TEST(RunScan, ALongLineIsMatchedOnItsFirst64KiB) {
  const std::string x300k = "head -c 300000 /dev/zero | tr '\\0' x";
  AttemptResult r = watch("printf 'iteration 8/ 10 |'; " + x300k + "; printf '\\n'");
  EXPECT_EQ(r.last_step, 8);
  r = watch("printf 'iteration 8/ 10 |\\n'; " + x300k + "; printf ' iteration 9/ 10 |\\n'");
  EXPECT_EQ(r.last_step, 8);  // step 9 lies past the first 64 KiB of its line
  r = watch(x300k + "; printf '\\niteration 10/ 10 |\\n'");
  EXPECT_EQ(r.last_step, 10);  // the next line is whole again
}

// A burst of output just before the exit is still in the pipe when the exit is seen (several
// reads' worth): it is read and scanned before the verdict, so the last step is the job's last.
TEST(RunScan, TheLastLinesBeforeTheExitAreStillMatched) {
  const AttemptResult r =
      watch("f=$(mktemp); seq 1 60000 | sed 's#.*# iteration &/ 60000 | lm loss: 2.5E+00 |#' "
            "> $f; cat $f; rm -f $f; exit 3");
  EXPECT_EQ(r.outcome, Outcome::kExit);
  EXPECT_EQ(r.last_step, 60000);
}

TEST(RunScan, CrlfLinesMatchWithTheCarriageReturnKept) {
  AttemptResult r = watch("printf 'iteration 6/ 10 |\\r\\nstep: 7  loss: 2.5\\r\\n'");
  EXPECT_EQ(r.last_step, 7);
  r = watch("printf 'iteration 6/ 10 |\\r\\nCUDA error: an illegal memory access\\r\\n'; sleep 5");
  EXPECT_EQ(r.outcome, Outcome::kFatalLine);
  EXPECT_EQ(r.detail, "CUDA error: an illegal memory access\r");
  EXPECT_EQ(r.last_step, 6);
}

// Lines before the attempt's first progress line are handed over as unmatched; the resume line
// gives its step; after the first progress line neither is looked for.
TEST(RunScan, LinesBeforeTheFirstProgressLineAreUnmatchedOrResume) {
  std::vector<std::string> unmatched;
  std::vector<int64_t> resumed;
  const AttemptResult r = watch(
      "printf 'loading\\n  successfully loaded checkpoint from /c [ t 1/1, p 1/1 ] at iteration "
      "40\\nEpoch 0 | step 1/2\\n iteration 41/ 50 |\\nafter\\n Continuing training from "
      "global step 9\\n'",
      [&](AttemptOptions& o) {
        o.on_unmatched = [&](std::string_view line) {
          unmatched.emplace_back(line);
          return true;
        };
        o.on_resumed = [&](int64_t step) { resumed.push_back(step); };
      });
  EXPECT_EQ(r.outcome, Outcome::kFinished);
  EXPECT_EQ(r.last_step, 41);
  EXPECT_EQ(unmatched, (std::vector<std::string>{
                           "loading",
                           "  successfully loaded checkpoint from /c [ t 1/1, p 1/1 ] at "
                           "iteration 40",
                           "Epoch 0 | step 1/2"}));
  EXPECT_EQ(resumed, (std::vector<int64_t>{40}));
}

// With --heartbeat the file is the progress: output is not activity, and no line is unmatched.
TEST(RunScan, WithAHeartbeatOutputIsNotActivity) {
  int unmatched = 0;
  const AttemptResult r = watch(
      "while :; do echo 'Epoch 0 | step 1/2'; sleep 0.1; done", [&](AttemptOptions& o) {
        o.heartbeat = "/nonexistent/heartbeat";
        o.hang_timeout_s = 0.5;
        o.on_unmatched = [&](std::string_view) {
          ++unmatched;
          return true;
        };
      });
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_EQ(r.detail.rfind("no progress for ", 0), 0u) << r.detail;
  EXPECT_EQ(unmatched, 0);
}

// A job that printed no progress line and then went silent is still a hang, said as silence.
TEST(RunScan, SilenceBeforeAnyProgressLineIsAHang) {
  const AttemptResult r = watch("echo 'Epoch 0 | step 1/2'; sleep 30",
                                [](AttemptOptions& o) { o.hang_timeout_s = 0.5; });
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_EQ(r.detail.rfind("no output for ", 0), 0u) << r.detail;
  EXPECT_NE(r.detail.find(" (--hang-timeout 0.5; no progress line yet, so any output counted)"),
            std::string::npos)
      << r.detail;
}

// Lines fed in reads of every size come out as the same lines, each cut at 64 KiB.
TEST(RunScan, TheLineSplitterGivesTheSameLinesWhateverTheReads) {
  const std::string text = "a\n\nbc\n" + std::string(70000, 'x') + "\nlast\npartial";
  std::vector<std::string> whole = {"a", "", "bc", std::string(kMaxLineBytes, 'x'), "last"};
  for (size_t size : {size_t{1}, size_t{2}, size_t{3}, size_t{4096}, size_t{65536}, text.size()}) {
    LineSplitter splitter;
    std::vector<std::string> lines;
    for (size_t at = 0; at < text.size(); at += size) {
      splitter.feed(std::string_view(text).substr(at, size), [&](std::string_view line, size_t) {
        lines.emplace_back(line);
        return true;
      });
    }
    EXPECT_EQ(lines, whole) << "reads of " << size;
  }
}

// SIGPIPE ignored (as plumb run does), a stream whose reader is gone is reported once and then
// skipped; the other stream still works.
TEST(RunPassThrough, AClosedStreamIsReportedOnceAndSkipped) {
  struct sigaction ignore{}, saved{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &saved);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[0]);
  const int saved_out = ::dup(STDOUT_FILENO);
  ::dup2(pipe_fds[1], STDOUT_FILENO);
  ::close(pipe_fds[1]);
  std::vector<std::pair<int, int>> closed;
  PassThrough out([&](int fd, int error) { closed.emplace_back(fd, error); });
  out.write(STDOUT_FILENO, "one\n", nullptr);
  out.write(STDOUT_FILENO, "two\n", nullptr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::close(saved_out);
  ::sigaction(SIGPIPE, &saved, nullptr);
  EXPECT_EQ(closed, (std::vector<std::pair<int, int>>{{STDOUT_FILENO, EPIPE}}));
  EXPECT_TRUE(out.closed(STDOUT_FILENO));
  EXPECT_FALSE(out.closed(STDERR_FILENO));
}

}  // namespace
}  // namespace plumb::supervise
