// The PostgreSQL store's own cases (the shared suite runs on it too: store_test.cc): how its
// failures read, credentials, read-only opening, migrating once. docs/store.md.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "baseline/store.h"
#include "baseline/store_url.h"
#include "common/error.h"
#include "support/postgres.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

class StorePostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    pg_ = test::Postgres::get();
    if (pg_ == nullptr) GTEST_SKIP() << test::Postgres::why();
  }
  // The Error opening the store at `url` throws; fails the test when it throws none.
  static Error open_error(const std::string& url, StoreMode mode = StoreMode::kReadWrite) {
    try {
      Store store(url, mode);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "opened " << url;
    return Error("");
  }
  test::Postgres* pg_ = nullptr;
};

// Issue 33: a wrong password is one line naming the URL, its password masked, and exit 2.
TEST_F(StorePostgres, AWrongPasswordIsOneLineWithThePasswordMasked) {
  const std::string db = pg_->create_database("wrong-password");
  const Error e = open_error(pg_->url(db, "plumb_pw", "not-the-Password"));
  EXPECT_EQ(std::string(e.what()),
            "postgresql://plumb_pw:***@/" + db + "?host=" + pg_->dir() +
                ": cannot connect to the store: connection to server on socket \"" + pg_->dir() +
                "/.s.PGSQL.5432\" failed: FATAL: password authentication failed for user "
                "\"plumb_pw\"");
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
}

// Issue 33: nothing listens on port 1 of the loopback: one line naming the server, exit 2, and
// nothing written anywhere instead.
TEST_F(StorePostgres, AnUnreachableServerIsOneLine) {
  const Error e = open_error("postgresql://plumb:S3cret-x@127.0.0.1:1/plumb");
  EXPECT_EQ(std::string(e.what()),
            "postgresql://plumb:***@127.0.0.1:1/plumb: cannot connect to the store: connection to "
            "server at \"127.0.0.1\", port 1 failed: Connection refused Is the server running on "
            "that host and accepting TCP/IP connections?");
  EXPECT_EQ(e.code(), ExitCode::kBadInput);
}

// Issue 33: a store of another (newer) schema version, opened with a password in the URL.
TEST_F(StorePostgres, ANewerSchemaIsOneLineWithThePasswordMasked) {
  const std::string db = pg_->create_database("newer");
  const std::string url = pg_->url(db, "plumb_pw", test::kPostgresPassword);
  { Store create(url); }
  pg_->psql(db, "UPDATE plumb_schema SET version = 10");
  const std::string masked = "postgresql://plumb_pw:***@/" + db + "?host=" + pg_->dir();
  for (const StoreMode mode : {StoreMode::kReadWrite, StoreMode::kReadOnly}) {
    const Error e = open_error(url, mode);
    EXPECT_EQ(std::string(e.what()),
              masked + ": the store has schema version 10, newer than this plumb's 9; use a newer plumb");
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
  }
}

// libpq reads the password from PGPASSFILE: the URL carries none.
TEST_F(StorePostgres, APasswordFromPgpassfile) {
  const std::string db = pg_->create_database("pgpass");
  const std::string file = test::temp_dir("pgpass") + "/pgpass";
  test::write_file(file, std::string("*:*:*:plumb_pw:") + test::kPostgresPassword + "\n");
  chmod(file.c_str(), 0600);  // libpq ignores a password file others can read
  const char* before = std::getenv("PGPASSFILE");
  setenv("PGPASSFILE", file.c_str(), 1);
  Record r;
  r.created = "2026-12-07T00:00:00Z";
  r.source = "test";
  r.label = "from pgpass";
  const std::string url = pg_->url(db, "plumb_pw");
  EXPECT_EQ(Store(url).load(Store(url).save(r)).label, "from pgpass");
  if (before != nullptr) {
    setenv("PGPASSFILE", before, 1);
  } else {
    unsetenv("PGPASSFILE");
  }
}

// A reader never creates the store: a database without plumb's tables is no store, and stays
// without them.
TEST_F(StorePostgres, AReaderNeverCreatesTheTables) {
  const std::string db = pg_->create_database("reader");
  const std::string url = pg_->url(db);
  EXPECT_EQ(std::string(open_error(url, StoreMode::kReadOnly).what()),
            url + ": no store there (plumb baseline and plumb import create one; --db names another)");
  EXPECT_EQ(pg_->query(db, "SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                          "'public'"),
            "0\n");
}

TEST_F(StorePostgres, ADatabaseWithTablesOfItsOwnIsRefused) {
  const std::string db = pg_->create_database("foreign");
  pg_->psql(db, "CREATE TABLE orders (id INTEGER); CREATE TABLE users (id INTEGER)");
  const std::string url = pg_->url(db);
  EXPECT_EQ(std::string(open_error(url).what()),
            url + ": a PostgreSQL database, but not a plumb store (it has tables of its own: "
                  "orders, users); give --db a plumb store or a new database");
}

// Issue 33: plumb processes opening a new store at the same moment migrate it once (the advisory
// lock); without it the second's CREATE TABLE would fail.
TEST_F(StorePostgres, WritersStartingAtOnceMigrateOnce) {
  const std::string url = pg_->url(pg_->create_database("migrate-once"));
  constexpr int kWriters = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kWriters; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        Record r;
        r.created = "2026-12-07T00:00:00Z";
        r.source = "writer";
        Store(url).save(r);
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    status = test::wait_status(pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(Store(url, StoreMode::kReadOnly).list().size(), static_cast<size_t>(kWriters));
}

// Issue 33: 32 writers of 200 records each, the server restarted (a fast shutdown: every
// connection dropped, transactions in flight rolled back) while they write: every record is
// stored once and whole. The writers retry their record on a new connection (store_retry.h).
TEST_F(StorePostgres, ThirtyTwoWritersAndAServerRestartLoseAndDuplicateNothing) {
  const std::string db = pg_->create_database("writers");
  const std::string url = pg_->url(db);
  { Store create(url); }
  constexpr int kWriters = 32;
  constexpr int kRecords = 200;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        Store store(url);
        for (int i = 0; i < kRecords; ++i) {
          Record r;
          r.created = "2026-12-07T00:00:00Z";
          r.source = "writer";
          r.label = std::to_string(w) + "-" + std::to_string(i);
          r.rows.resize(1);
          r.rows[0].collective = "allreduce";
          r.rows[0].straggler_share = 0.5;
          store.save(r);
        }
      } catch (const std::exception& e) {
        fprintf(stderr, "writer %d: %s\n", w, e.what());
        _exit(3);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  // Restart once a quarter of the records are in: the writers are mid-way.
  while (std::stoi(pg_->query(db, "SELECT count(*) FROM baselines")) < kWriters * kRecords / 4) {
    usleep(20 * 1000);
  }
  // The restart happened mid-way: records were still to come.
  EXPECT_LT(std::stoi(pg_->query(db, "SELECT count(*) FROM baselines")), kWriters * kRecords);
  pg_->restart();
  for (const pid_t pid : pids) {
    int status = 0;
    status = test::wait_status(pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(pg_->query(db, "SELECT count(*), count(DISTINCT label) FROM baselines"), "6400|6400\n");
  EXPECT_EQ(pg_->query(db, "SELECT count(*) FROM comm_results"), "6400\n");
}

// PLUMB_DB names the store when --db does not.
TEST_F(StorePostgres, PlumbDbNamesTheStore) {
  const std::string url = pg_->url(pg_->create_database("plumb-db"));
  setenv("PLUMB_DB", url.c_str(), 1);
  EXPECT_EQ(store_location(""), url);
  EXPECT_EQ(store_location("/tmp/x.db"), "/tmp/x.db");
  unsetenv("PLUMB_DB");
}

TEST(StoreUrl, MasksPasswordsOnly) {
  EXPECT_TRUE(is_postgres_url("postgresql://db/plumb"));
  EXPECT_TRUE(is_postgres_url("postgres://db/plumb"));
  EXPECT_FALSE(is_postgres_url("/var/lib/plumb/postgresql://x.db"));
  EXPECT_EQ(redact_store_url("postgresql://plumb:p%40ss@db.example.org:5432/plumb?sslmode=verify-full"),
            "postgresql://plumb:***@db.example.org:5432/plumb?sslmode=verify-full");
  EXPECT_EQ(redact_store_url("postgres://u@db/plumb?password=hunter2&sslmode=require"),
            "postgres://u@db/plumb?password=***&sslmode=require");
  EXPECT_EQ(redact_store_url("postgresql:///plumb?host=/run/pg"), "postgresql:///plumb?host=/run/pg");
  // An empty password hides nothing: shown as written (found by fuzz_store_location).
  EXPECT_EQ(redact_store_url("postgresql://u:@db/x?password=&a=b"), "postgresql://u:@db/x?password=&a=b");
  EXPECT_TRUE(store_url_secrets("postgresql://u:@db/x?password=").empty());
  EXPECT_EQ(mask_store_message("FATAL:  no user p@ss\n\tor pw\n",
                               "postgresql://u:p%40ss@db/x?password=pw"),
            "FATAL: no user *** or ***");
}

}  // namespace
}  // namespace plumb::baseline
