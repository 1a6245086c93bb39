#include "common/sqlite.h"

#include <fmt/format.h>

#include <cctype>
#include <string_view>

#include "common/error.h"

namespace plumb {
namespace {

// How long a writer waits for another one to finish before giving up.
constexpr int kBusyTimeoutMs = 30000;

// "file:" URI of a path, percent-encoding what a URI reserves.
std::string file_uri(const std::string& path, std::string_view query) {
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-_.~").find(static_cast<char>(c)) != std::string_view::npos) {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?" + std::string(query);
}

}  // namespace

Database::Database(const std::string& path, ReadOnly read_only) : path_(path) {
  const bool ro = read_only != ReadOnly::kNo;
  const int flags = ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                       : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const std::string name =
      !ro ? path : file_uri(path, read_only == ReadOnly::kImmutable ? "mode=ro&immutable=1" : "mode=ro");
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(fmt::format("{}: cannot open the store: {}", path, message));
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::fail(std::string_view what) const {
  throw Error(fmt::format("{}: {}: {}", path_, what, sqlite3_errmsg(db_)));
}

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error(fmt::format("{}: {}", path_, text));
  }
}

Statement Database::prepare(std::string_view sql) { return Statement(*this, sql); }

int64_t Database::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_,
                         nullptr) != SQLITE_OK) {
    db.fail("cannot prepare a statement");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  // SQLITE_STATIC: the caller's text outlives the step() that reads it (every use here binds
  // then steps at once), so SQLite need not copy it.
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_STATIC) != SQLITE_OK) {
    db_.fail("bind");
  }
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("query failed");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }
double Statement::column_double(int index) const { return sqlite3_column_double(stmt_, index); }
std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text ? std::string(reinterpret_cast<const char*>(text)) : std::string();
}
bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (const Error&) {
    // nothing to undo
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace plumb
