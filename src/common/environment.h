// The process environment as a measurement's context: the variables that change results.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

namespace plumb {

// Variables whose names start with one of `prefixes`, sorted by name. Launcher bookkeeping that
// changes on every run without changing results (OMPI_COMM_WORLD_RANK, PMIX_* ids, ...) is left
// out, so that two runs taken the same way record the same environment. Values of variables whose
// names look secret (TOKEN, KEY, SECRET, PASSWORD) are replaced by "<redacted>".
std::map<std::string, std::string> capture_environment(std::span<const std::string_view> prefixes);

// The same over an explicit list of "NAME=value" entries (for tests).
std::map<std::string, std::string> filter_environment(std::span<const std::string> entries,
                                                      std::span<const std::string_view> prefixes);

// The current time as ISO 8601 UTC with seconds: "2026-12-02T10:29:03Z".
std::string utc_timestamp();

// This machine's host name ("unknown" if it cannot be read).
std::string host_name();

// The rank a launcher (mpirun, srun, a PMI/PMIx launcher) gave this process, read from its
// environment before MPI is initialised; 0 when started alone. Used to print usage errors once.
int launcher_rank();

// True in a process an MPI launcher started as one of a job's ranks (mpirun, a PMI/PMIx launcher,
// an srun job step); false when started alone or in an sbatch script.
bool started_by_mpi_launcher();

}  // namespace plumb
