#include "common/environment.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>

extern char** environ;

namespace plumb {
namespace {

// Set by the launcher for every process and different for each rank or job: they describe the
// launch, not a setting that changes results.
constexpr std::array<std::string_view, 14> kBookkeeping = {
    "OMPI_COMM_WORLD_",  "OMPI_UNIVERSE_SIZE", "OMPI_FIRST_RANKS", "OMPI_APP_CTX_",
    "OMPI_NUM_APP_CTX",  "OMPI_ARGV",          "OMPI_COMMAND",     "OMPI_FILE_LOCATION",
    "OMPI_MCA_orte_",    "OMPI_MCA_ess",      "OMPI_MCA_pmix",    "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "OMPI_MCA_mpi_oversubscribe_detected",
};

constexpr std::array<std::string_view, 5> kSecretWords = {"TOKEN", "KEY", "SECRET", "PASSWORD",
                                                          "PASSWD"};

bool starts_with_any(std::string_view name, std::span<const std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

bool looks_secret(std::string_view name) {
  for (std::string_view w : kSecretWords) {
    if (name.find(w) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

std::map<std::string, std::string> filter_environment(std::span<const std::string> entries,
                                                      std::span<const std::string_view> prefixes) {
  std::map<std::string, std::string> out;
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (!starts_with_any(name, prefixes) || starts_with_any(name, kBookkeeping)) continue;
    out[name] = looks_secret(name) ? "<redacted>" : entry.substr(eq + 1);
  }
  return out;
}

std::map<std::string, std::string> capture_environment(
    std::span<const std::string_view> prefixes) {
  std::vector<std::string> entries;
  for (char** e = environ; e && *e; ++e) entries.emplace_back(*e);
  return filter_environment(entries, prefixes);
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", utc);
}

std::string host_name() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown";
  return buffer.data();
}

namespace {

// The variables MPI launchers (mpirun, srun, hydra) set in every process they start.
constexpr std::array<const char*, 5> kRankVariables = {
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};

}  // namespace

int launcher_rank() {
  for (const char* name : kRankVariables) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

bool started_by_mpi_launcher() {
  // SLURM_PROCID alone is also set in an sbatch script, which is not one of the job's ranks.
  for (const char* name : kRankVariables) {
    if (std::string_view(name) != "SLURM_PROCID" && std::getenv(name) != nullptr) return true;
  }
  return std::getenv("SLURM_PROCID") != nullptr && std::getenv("SLURM_STEP_ID") != nullptr &&
         std::string_view(std::getenv("SLURM_STEP_ID")) != "batch";
}

}  // namespace plumb
