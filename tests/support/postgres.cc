#include "support/postgres.h"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <unistd.h>

#include "k8s/job_spec.h"  // shell_quote
#include "support/subprocess.h"

namespace plumb::test {
namespace {

std::string& reason() {
  static std::string text;
  return text;
}

// The newest /usr/lib/postgresql/N/bin (Debian's layout), as pg_cluster.sh picks it.
std::string bin_dir() {
  static const std::string dir = [] {
    std::string best;
    int newest = -1;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string name = entry.path().filename().string();
      const int version = std::isdigit(static_cast<unsigned char>(name[0])) ? std::stoi(name) : -1;
      if (version > newest) {
        newest = version;
        best = entry.path().string() + "/bin";
      }
    }
    return best;
  }();
  return dir;
}

std::string script() { return std::string(PLUMB_TEST_SOURCE_DIR) + "/support/pg_cluster.sh"; }

std::unique_ptr<Postgres> start() {
  if (const char* dir = std::getenv("PLUMB_TEST_PG_DIR"); dir != nullptr && *dir != '\0') {
    if (!std::filesystem::exists(std::string(dir) + "/data/postmaster.pid")) {
      reason() = fmt::format("no PostgreSQL server in {} (the store.postgres.start fixture says "
                             "why; apt install postgresql)", dir);
      return nullptr;
    }
    return std::make_unique<Postgres>(dir, false);
  }
  // /tmp, not the build tree: the server may run as nobody, who must reach its folder; and a
  // socket's path must stay under 108 bytes.
  const std::string dir = fmt::format("/tmp/plumb-pg-{}", getpid());
  const Run r = run_command(fmt::format("{} start {}", script(), dir));
  if (r.exit_code != 0 || !std::filesystem::exists(dir + "/data/postmaster.pid")) {
    reason() = "no PostgreSQL server for the store tests: " + r.err;
    return nullptr;
  }
  return std::make_unique<Postgres>(dir, true);
}

}  // namespace

Postgres* Postgres::get() {
  static const std::unique_ptr<Postgres> server = start();
  return server.get();
}

const std::string& Postgres::why() { return reason(); }

Postgres::~Postgres() {
  if (owned_) run_command(fmt::format("{} stop {}", script(), dir_));
}

std::string Postgres::create_database(const std::string& hint) {
  static std::atomic<int> counter{0};
  std::string name = "t";
  for (const char c : hint) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  name = fmt::format("{}_{}_{}", name.substr(0, 40), getpid(), counter++);
  // Two statements, two calls: CREATE DATABASE cannot run in the one transaction of a -c string.
  psql("postgres", fmt::format("DROP DATABASE IF EXISTS {}", name));  // a reused pid's leftover
  psql("postgres", fmt::format("CREATE DATABASE {}", name));
  return name;
}

std::string Postgres::url(const std::string& db, const std::string& user,
                          const std::string& password) const {
  return fmt::format("postgresql://{}{}@/{}?host={}", user, password.empty() ? "" : ":" + password,
                     db, dir_);
}

void Postgres::psql(const std::string& db, const std::string& sql) const {
  const Run r = run_command(fmt::format("{}/psql -h {} -U postgres -d {} -q -X -v ON_ERROR_STOP=1 -c {}",
                                        bin_dir(), dir_, db, k8s::shell_quote(sql)));
  if (r.exit_code != 0) throw std::runtime_error("psql: " + r.err);
}

std::string Postgres::query(const std::string& db, const std::string& sql) const {
  const Run r = run_command(fmt::format("{}/psql -h {} -U postgres -d {} -tAX -v ON_ERROR_STOP=1 -c {}",
                                        bin_dir(), dir_, db, k8s::shell_quote(sql)));
  if (r.exit_code != 0) throw std::runtime_error("psql: " + r.err);
  return r.out;
}

void Postgres::restart() const { run_command(fmt::format("{} restart {}", script(), dir_)); }

}  // namespace plumb::test
