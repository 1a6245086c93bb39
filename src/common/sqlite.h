// A thin RAII layer over SQLite's C API: a connection, prepared statements, transactions.
// Every failure becomes a plumb::Error naming the database file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plumb {

class Statement;

// How a database is opened for reading only. kShared sees other connections' commits; kImmutable
// (for a file in a folder this user cannot write, where SQLite could not create its -shm file)
// reads the file as it is, locking nothing.
enum class ReadOnly { kNo, kShared, kImmutable };

class Database {
 public:
  // Opens (creating when missing) the database at `path` for reading and writing; with
  // `read_only`, opens an existing one without ever writing to it or its folder.
  explicit Database(const std::string& path, ReadOnly read_only = ReadOnly::kNo);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements without results.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_id() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  [[noreturn]] void fail(std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Binds by 1-based index. Text is not copied: it must stay alive until step().
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);

  // Steps once: true when a row is available, false when done.
  bool step();
  // Resets for another execution with new bindings.
  void reset();

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const;
  bool column_is_null(int index) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed uncommitted. IMMEDIATE takes the write
// lock at the start, so two writers queue on the busy timeout instead of failing mid-way.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace plumb
