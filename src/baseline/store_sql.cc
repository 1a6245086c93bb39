#include "baseline/store_sql.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <unistd.h>

#include "common/error.h"
#include "common/sqlite.h"

namespace plumb::baseline {
namespace {

// WAL: readers never wait for the writer. synchronous=NORMAL: a commit survives a crash of plumb
// (what the killed-writer test checks); a power cut may lose the last commits, not corrupt the
// file. 64 MiB of page cache keeps a large import from spilling mid-transaction.
constexpr DialectSql kSqliteSql = {
    .what = "an SQLite database",
    .new_store = "a new file",
    .begin = "BEGIN IMMEDIATE",
    .open_writer = "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = "
                   "NORMAL; PRAGMA cache_size = -65536;",
    .lock_migrations = "",
    .set_version = "PRAGMA user_version = {}",
    .returning_id = "",
    .sync_ids = "",
    .serve_runs = "json_array_length(b.serve, '$.runs')",
    .user_tables = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                   "'sqlite_%' ORDER BY name LIMIT 4",
    .empty_store_readable = true,
};

// The schema version lives in a one-row table (PostgreSQL has no user_version). Migrations run
// under a transaction-scoped advisory lock, so two plumb processes opening a new store at once
// migrate it once: the second waits, then finds it current. The lock's key is "plumbsto" in
// ASCII (0x706c756d6273746f), a number no other application is likely to pick.
// An id kept (plumb store copy) is inserted as given, and the identity's sequence then set to the
// largest id, so that the next new id follows it.
// json_array_length of SQLite gives 0 for a runs that is not an array and NULL without one.
constexpr DialectSql kPostgresSql = {
    .what = "a PostgreSQL database",
    .new_store = "a new database",
    .begin = "BEGIN",
    .open_writer = "",
    .lock_migrations = "SELECT pg_advisory_xact_lock(8101813209413202031); "
                       "CREATE TABLE IF NOT EXISTS plumb_schema (version INTEGER NOT NULL);",
    .set_version = "DELETE FROM plumb_schema; INSERT INTO plumb_schema (version) VALUES ({});",
    .returning_id = " RETURNING id",
    .sync_ids = "SELECT setval(pg_get_serial_sequence('{0}', 'id'), (SELECT MAX(id) FROM {0}))",
    .serve_runs = "CASE WHEN b.serve IS NULL OR (b.serve::json -> 'runs') IS NULL THEN NULL "
                  "WHEN json_typeof(b.serve::json -> 'runs') = 'array' "
                  "THEN json_array_length(b.serve::json -> 'runs') ELSE 0 END",
    .user_tables = "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                   "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name LIMIT 4",
    .empty_store_readable = false,
};

class SqliteQuery final : public QueryBackend {
 public:
  SqliteQuery(Database& db, std::string_view sql) : db_(db), statement_(db.prepare(sql)) {}
  void bind(int index, int64_t value) override { statement_.bind(index, value); }
  void bind(int index, double value) override { statement_.bind(index, value); }
  void bind(int index, std::string_view value) override { statement_.bind(index, value); }
  void bind_null(int index) override { statement_.bind_null(index); }
  bool step() override { return statement_.step(); }
  void reset() override { statement_.reset(); }
  int64_t column_int(int index) const override { return statement_.column_int(index); }
  double column_double(int index) const override { return statement_.column_double(index); }
  std::string column_text(int index) const override { return statement_.column_text(index); }
  bool column_is_null(int index) const override { return statement_.column_is_null(index); }
  int64_t inserted_id() const override { return db_.last_insert_id(); }

 private:
  Database& db_;
  Statement statement_;
};

class SqliteConnection final : public Connection {
 public:
  SqliteConnection(const std::string& path, ReadOnly read_only) : db_(path, read_only) {}
  Dialect dialect() const override { return Dialect::kSqlite; }
  const std::string& name() const override { return db_.path(); }
  void exec(std::string_view sql) override { db_.exec(sql); }
  Query prepare(std::string_view sql) override {
    return Query(std::make_unique<SqliteQuery>(db_, sql));
  }
  // PRAGMA user_version; a file that is not SQLite fails here with a message saying so.
  int schema_version() override {
    try {
      Statement q = db_.prepare("PRAGMA user_version");
      q.step();
      return static_cast<int>(q.column_int(0));
    } catch (const Error&) {
      throw Error(fmt::format("{}: not a plumb store (not an SQLite database, or unreadable)",
                              db_.path()));
    }
  }

 private:
  Database db_;
};

namespace fs = std::filesystem;

// A reading command never creates anything: the store must be there already.
void check_readable(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(fmt::format("{}: is a folder, not a store", path));
  if (!fs::exists(path, ec)) {
    throw Error(fmt::format("{}: no store there (plumb baseline and plumb import create one; "
                            "--db names another)", path));
  }
  if (access(path.c_str(), R_OK) != 0) {
    throw Error(fmt::format("{}: cannot read the store: {}", path, std::strerror(errno)));
  }
}

}  // namespace

const DialectSql& dialect_sql(Dialect dialect) {
  return dialect == Dialect::kPostgres ? kPostgresSql : kSqliteSql;
}

WriteTransaction::WriteTransaction(Connection& db) : db_(db) { db_.exec(db_.sql().begin); }

WriteTransaction::~WriteTransaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (const Error&) {
    // nothing to undo
  }
}

void WriteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

// SQLite needs to create the -shm file beside a WAL store even to read it; in a folder this user
// cannot write, the file is read as immutable (no other writer can be changing it from here).
std::unique_ptr<Connection> open_sqlite(const std::string& path, OpenFor mode) {
  if (mode == OpenFor::kWriting) {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    return std::make_unique<SqliteConnection>(path, ReadOnly::kNo);
  }
  check_readable(path);
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  const bool folder_writable = access(parent.c_str(), W_OK) == 0;
  return std::make_unique<SqliteConnection>(
      path, folder_writable ? ReadOnly::kShared : ReadOnly::kImmutable);
}

}  // namespace plumb::baseline
