#include <gtest/gtest.h>

#include "cli/baseline_command.h"
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
            "allreduce,allgather,reducescatter,alltoall --iters 20 --backend auto --output-dir . "
            "--threshold 10");
  EXPECT_EQ(fits[7], "first run");  // one argument, no shell in between
  const std::vector<std::string> over = launch_command(o, "/bin/plumb", 4, 2, true);
  EXPECT_EQ(join(std::vector<std::string>(over.begin(), over.begin() + 6), " "),
            "mpirun -np 4 --oversubscribe --allow-run-as-root /bin/plumb");
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

}  // namespace
}  // namespace plumb::cli
