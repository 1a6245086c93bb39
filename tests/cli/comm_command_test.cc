#include "cli/comm_command.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace plumb::cli {
namespace {

// The launcher plumb.comm/1 records (and plumb diff compares), from the variables each sets.
TEST(LauncherName, FromTheVariablesEachLauncherSets) {
  const auto with = [](std::map<std::string, std::string> vars) {
    return launcher_name([&](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  };
  EXPECT_EQ(with({}), "none (one process)");
  // Open MPI's mpirun inside a Slurm step sets both: mpirun it is.
  EXPECT_EQ(with({{"OMPI_COMM_WORLD_SIZE", "8"}, {"SLURM_STEP_ID", "0"}, {"PMIX_RANK", "0"}}),
            "mpirun (Open MPI)");
  EXPECT_EQ(with({{"SLURM_STEP_ID", "3"}, {"PMIX_RANK", "0"}}), "srun");
  EXPECT_EQ(with({{"SLURM_STEP_ID", "batch"}}), "none (one process)");  // an sbatch script
  EXPECT_EQ(with({{"PMI_SIZE", "4"}}), "mpiexec (Hydra or another PMI launcher)");
  EXPECT_EQ(with({{"PMIX_RANK", "1"}}), "a PMIx launcher");
}

}  // namespace
}  // namespace plumb::cli
