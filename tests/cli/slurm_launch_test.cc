#include "cli/slurm_launch.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/strings.h"
#include "support/subprocess.h"

namespace plumb::cli {
namespace {

using V = std::vector<std::string>;
const std::string kFixtures = PLUMB_TEST_FIXTURES "/slurm";

TEST(SlurmLaunch, SrunMpiListOfDebian12sSlurm) {
  // `srun --mpi=list` of slurm-wlm 22.05.8 (Debian 12), on standard output.
  EXPECT_EQ(srun_mpi_plugins(test::read_file(kFixtures + "/srun_mpi_list_22.05.txt")),
            (V{"pmix", "none", "cray_shasta", "pmi2"}));
}

TEST(SlurmLaunch, SrunMpiListOfOlderSlurms) {
  // Before 21.08 srun printed the list as log lines on standard error, "srun: " first.
  EXPECT_EQ(srun_mpi_plugins("srun: MPI types are...\nsrun: none\nsrun: pmi2\nsrun: pmix_v3\n"
                             "srun: pmix\n"),
            (V{"none", "pmi2", "pmix_v3", "pmix"}));
  EXPECT_EQ(srun_mpi_plugins("srun: error: Could not establish a configuration source\n"), V{});
}

TEST(SlurmLaunch, OpenMpiPmiClientsOfDebian12sOpenMpi) {
  // ompi_info --parsable of openmpi-bin 4.1.4 (Debian 12): an external PMIx 4 (ext3x), no s1/s2.
  EXPECT_EQ(openmpi_pmi_clients(test::read_file(kFixtures + "/ompi_info_parsable_4.1.4.txt")),
            (V{"ext3x", "isolated", "flux"}));
  EXPECT_EQ(openmpi_pmi_clients("mca:ess:pmi:version:\"mca:2.1.0\"\n"), V{});
}

TEST(SlurmLaunch, WireUpPrefersPmixThenPmi2ThenMpirun) {
  const V debian_srun = {"pmix", "none", "cray_shasta", "pmi2"};
  const V debian_ompi = {"ext3x", "isolated", "flux"};
  EXPECT_EQ(join(choose_wire_up(debian_srun, debian_ompi, true).command, " "), "srun --mpi=pmix");
  // srun without PMIx, OpenMPI built --with-pmi (s1, s2): PMI-2.
  EXPECT_EQ(choose_wire_up({"none", "pmi2"}, {"s1", "s2", "isolated"}, true).name, "pmi2");
  // Debian's OpenMPI has no PMI-2 client: srun cannot start its ranks; mpirun can.
  const MpiWireUp fallback = choose_wire_up({"none", "pmi2"}, debian_ompi, true);
  EXPECT_EQ(fallback.name, "mpirun");
  EXPECT_EQ(fallback.command, V{"mpirun"});
  // OpenMPI's own PMIx (pmix3x) counts; no ompi_info (another MPI, OpenMPI 5): srun decides.
  EXPECT_EQ(choose_wire_up({"pmix_v3", "pmix"}, {"pmix3x"}, true).name, "pmix");
  EXPECT_EQ(choose_wire_up({"pmi2"}, {}, false).name, "pmi2");
  EXPECT_EQ(choose_wire_up({"none"}, {}, false).name, "mpirun");
}

sysinfo::SlurmJob job(int nodes, int tasks, const std::string& tasks_per_node, int gpus) {
  sysinfo::SlurmJob j;
  j.id = "8";
  j.nodes = nodes;
  j.tasks = tasks;
  j.tasks_per_node = tasks_per_node;
  j.gpus_on_node = gpus;
  return j;
}

TEST(SlurmLaunch, OneRankPerGpuOfEachNodeElseTheTasksAsked) {
  // sbatch -N 4 --gpus-per-node=8: 32 ranks, 8 on each node.
  SlurmRanks r = slurm_ranks(job(4, 0, "1(x4)", 8), 0, 0);
  EXPECT_EQ(r.ranks, 32);
  EXPECT_EQ(r.per_node, 8);
  EXPECT_EQ(r.why, "one per GPU Slurm gave the job (SLURM_GPUS_ON_NODE=8) on 4 node(s)");
  // No GPU in Slurm's gres, 16 Ascend NPUs on this node (/dev/davinci0-15), 2 nodes.
  r = slurm_ranks(job(2, 2, "1(x2)", 0), 0, 16);
  EXPECT_EQ(r.ranks, 32);
  EXPECT_EQ(r.per_node, 16);
  // CPU only: the tasks the job asked for.
  r = slurm_ranks(job(1, 2, "2", 0), 0, 0);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.per_node, 0);
  EXPECT_EQ(r.why, "the job's tasks (SLURM_NTASKS=2)");
  r = slurm_ranks(job(3, 0, "2(x2),1", 0), 0, 0);
  EXPECT_EQ(r.ranks, 5);
  EXPECT_EQ(r.why, "the job's tasks (SLURM_TASKS_PER_NODE=2(x2),1)");
  // --ranks wins over everything.
  r = slurm_ranks(job(4, 0, "1(x4)", 8), 6, 8);
  EXPECT_EQ(r.ranks, 6);
  EXPECT_EQ(r.per_node, 0);
}

TEST(SlurmLaunch, LauncherWords) {
  const MpiWireUp pmix{"pmix", {"srun", "--mpi=pmix"}};
  EXPECT_EQ(join(slurm_launcher_words(pmix, {32, 8, ""}, true), " "),
            "srun --mpi=pmix --kill-on-bad-exit=1 --nodes=4 --ntasks-per-node=8");
  EXPECT_EQ(join(slurm_launcher_words(pmix, {2, 0, ""}, true), " "),
            "srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=2");
  const MpiWireUp mpirun{"mpirun", {"mpirun"}};
  EXPECT_EQ(join(slurm_launcher_words(mpirun, {32, 8, ""}, true), " "),
            "mpirun -np 32 --map-by ppr:8:node --allow-run-as-root");
  EXPECT_EQ(join(slurm_launcher_words(mpirun, {2, 0, ""}, false), " "), "mpirun -np 2");
}

TEST(SlurmLaunch, OutsideAnAllocationOneLine) {
  if (std::getenv("SLURM_JOB_ID") != nullptr) GTEST_SKIP() << "these tests run inside a Slurm job";
  EXPECT_EQ(test::error_message([] { slurm_launcher(0, 0, false); }),
            "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set): run "
            "plumb baseline in an sbatch script or an salloc shell (docs/slurm.md)");
}

}  // namespace
}  // namespace plumb::cli
