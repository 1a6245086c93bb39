#include <gtest/gtest.h>

#include <signal.h>

#include "cli/baseline_command.h"
#include "common/error.h"
#include "common/strings.h"

namespace plumb::cli {
namespace {

TEST(BaselineLaunch, DefaultRanks) {
  EXPECT_EQ(default_ranks(0, 2), 2);
  EXPECT_EQ(default_ranks(0, 1), 2);     // at least two: one rank moves no data
  EXPECT_EQ(default_ranks(0, 128), 8);   // a baseline of one host, not a core count
  EXPECT_EQ(default_ranks(8, 128), 8);   // one per accelerator
  EXPECT_EQ(default_ranks(16, 2), 16);
}

TEST(BaselineLaunch, MpirunOversubscribesOnlyBeyondTheCores) {
  BaselineOptions o;
  o.label = "first run";
  const std::vector<std::string> fits = launch_command(o, "/bin/plumb", 2, 2, false);
  EXPECT_EQ(join(fits, " "),
            "mpirun -np 2 /bin/plumb baseline --worker --label first run --collectives "
            "allreduce,allgather,reducescatter,alltoall --iters 20 --timeout 300 --backend auto "
            "--output-dir . "
            "--threshold 10");
  EXPECT_EQ(fits[7], "first run");  // one argument, no shell in between
  const std::vector<std::string> over = launch_command(o, "/bin/plumb", 4, 2, true);
  EXPECT_EQ(join(std::vector<std::string>(over.begin(), over.begin() + 6), " "),
            "mpirun -np 4 --oversubscribe --allow-run-as-root /bin/plumb");
}

// The store is opened by the process that started the ranks: a URL's password never reaches their
// command line, which any user of a node can read.
TEST(BaselineLaunch, TheStoreStaysOutOfTheRanksCommandLine) {
  BaselineOptions o;
  o.db = "postgresql://plumb:S3cret@db.example.org/plumb";
  const std::string argv = join(launch_command(o, "/bin/plumb", 2, 2, false), " ");
  EXPECT_EQ(argv.find("--db"), std::string::npos) << argv;
  EXPECT_EQ(argv.find("S3cret"), std::string::npos) << argv;
}

TEST(BaselineLaunch, HostfileAndLauncher) {
  BaselineOptions o;
  o.hostfile = "hosts.txt";
  o.quick = true;
  std::vector<std::string> argv = launch_command(o, "/bin/plumb", 16, 2, false);
  EXPECT_EQ(join(std::vector<std::string>(argv.begin(), argv.begin() + 7), " "),
            "mpirun -np 16 --hostfile hosts.txt /bin/plumb baseline");
  EXPECT_EQ(argv.back(), "--quick");
  o.hostfile.clear();
  o.launcher = "srun  -N 4 --ntasks-per-node 8";
  o.rounds = 5;
  argv = launch_command(o, "/bin/plumb", 16, 2, false);
  EXPECT_EQ(join(std::vector<std::string>(argv.begin(), argv.begin() + 8), " "),
            "srun -N 4 --ntasks-per-node 8 /bin/plumb baseline --worker");
  // Rounds are separate launches of the ranks: the ranks themselves measure once.
  EXPECT_EQ(join(argv, " ").find("--rounds"), std::string::npos);
}

TEST(BaselineLaunch, LauncherWordsSplitAsAShellWould) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_words("srun  -N 4\t--ntasks-per-node 8 ", "--launcher"),
            (V{"srun", "-N", "4", "--ntasks-per-node", "8"}));
  EXPECT_EQ(split_words("srun --export='A B'", "--launcher"), (V{"srun", "--export=A B"}));
  EXPECT_EQ(split_words(R"(a "b \"c\" \$d \x" 'e\f' g\ h '' "")", "--launcher"),
            (V{"a", R"(b "c" $d \x)", R"(e\f)", "g h", "", ""}));
  EXPECT_EQ(split_words("$HOME *", "--launcher"), (V{"$HOME", "*"}));  // nothing is expanded
  EXPECT_EQ(split_words("   ", "--launcher"), V{});
}

TEST(BaselineLaunch, UnclosedQuoteOrTrailingBackslashIsRefused) {
  auto message = [](const std::string& text) {
    try {
      split_words(text, "--launcher");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("srun --export='A B"), "--launcher 'srun --export='A B': the quote ' is not closed");
  EXPECT_EQ(message("srun \"-N 4"), "--launcher 'srun \"-N 4': the quote \" is not closed");
  EXPECT_EQ(message("srun \\"), "--launcher 'srun \\': a backslash at the end escapes nothing");
}

TEST(BaselineLaunch, QuotedLauncherWordsReachTheCommand) {
  BaselineOptions o;
  o.launcher = "srun --export='A B' -N 2";
  const std::vector<std::string> argv = launch_command(o, "/bin/plumb", 2, 2, false);
  EXPECT_EQ(std::vector<std::string>(argv.begin(), argv.begin() + 5),
            (std::vector<std::string>{"srun", "--export=A B", "-N", "2", "/bin/plumb"}));
  o.launcher = " ";
  EXPECT_THROW(launch_command(o, "/bin/plumb", 2, 2, false), Error);
}

TEST(BaselineLaunch, ChildRunsInItsOwnProcessGroup) {
  // field 5 of /proc/PID/stat is the process group
  const ChildExit own = run_in_own_group({"sh", "-c", "test \"$(cut -d' ' -f5 /proc/$$/stat)\" = $$"});
  EXPECT_EQ(own.code, 0);
  EXPECT_EQ(own.signal, 0);
  const ChildExit failed = run_in_own_group({"false"});
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(failed.received, 0);
  const ChildExit killed = run_in_own_group({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(run_in_own_group({"/nonexistent/launcher"}).code, 127);
}

// A SIGTERM to plumb (here: the test process, sent by the child itself) waits until the child's
// group got it, instead of killing plumb before it cleaned up.
TEST(BaselineLaunch, SignalToPlumbIsForwardedToTheGroup) {
  const ChildExit exit = run_in_own_group({"sh", "-c", "kill -TERM $PPID; sleep 30 & wait"});
  EXPECT_EQ(exit.received, SIGTERM);
  EXPECT_EQ(exit.signal, SIGTERM);
}

}  // namespace
}  // namespace plumb::cli
