// The throwaway PostgreSQL server the store tests run against (tests/support/pg_cluster.sh): one
// per test binary. Under ctest the `store.postgres` fixture starts it before the tests named
// *Postgres* and stops it after (PLUMB_TEST_PG_DIR names its folder); a test binary run by hand
// starts one at its first use and stops it when it exits.
#pragma once

#include <string>

namespace plumb::test {

// The password of the role plumb_pw (pg_cluster.sh), which logs in with it over the socket.
inline constexpr const char* kPostgresPassword = "plumb-test-S3cret";

class Postgres {
 public:
  // The server, started when needed; nullptr when none can be (then why() says why).
  static Postgres* get();
  static const std::string& why();

  // Its socket folder.
  const std::string& dir() const { return dir_; }
  // A new empty database, named after `hint` and made unique; returns its name.
  std::string create_database(const std::string& hint);
  // postgresql://USER@/DB?host=DIR (the superuser, trusted on the socket), or with `password`.
  std::string url(const std::string& db, const std::string& user = "postgres",
                  const std::string& password = {}) const;
  // Runs `sql` in `db` with psql as the superuser; throws std::runtime_error with psql's message
  // when it fails.
  void psql(const std::string& db, const std::string& sql) const;
  // The rows `sql` gives in `db`, as psql -tA prints them (a line each, '|' between columns).
  std::string query(const std::string& db, const std::string& sql) const;
  // Stops and starts the server (the fast shutdown: connections are dropped).
  void restart() const;

  explicit Postgres(std::string dir, bool owned) : dir_(std::move(dir)), owned_(owned) {}
  ~Postgres();

 private:
  std::string dir_;
  bool owned_;
};

}  // namespace plumb::test
