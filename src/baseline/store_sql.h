// The store's backend seam: one Store (store.cc) over SQLite (the embedded default, a file) or
// PostgreSQL (a server many writers share, through libpq: store_postgres.cc). Store code writes
// SQL once, with '?' parameters; a Connection runs it on its dialect ('?' becomes $n on
// PostgreSQL) and the few statements that differ come from DialectSql, one table per dialect.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace plumb::baseline {

enum class Dialect { kSqlite, kPostgres };

// The statements and words that differ between the dialects (store_sql.cc: kSqliteSql,
// kPostgresSql). Everything else is the same SQL on both.
struct DialectSql {
  std::string_view what;            // "an SQLite database": what a foreign store is
  std::string_view new_store;       // "a new file": what --db may name instead
  std::string_view begin;           // a write transaction
  std::string_view open_writer;     // run once when a writer opens the store
  std::string_view lock_migrations; // run inside the migration's transaction, first
  std::string_view set_version;     // fmt pattern: stamp the schema version {}
  std::string_view returning_id;    // appended to an INSERT whose new id is wanted
  std::string_view sync_ids;        // fmt pattern, {} the table: after an id was kept, the next
                                    // new id follows the largest (empty: the store does it)
  std::string_view serve_runs;      // plumb list: the runs[] of b.serve, NULL when none
  std::string_view user_tables;     // the names of the tables in the store, sorted
  bool empty_store_readable;        // an existing store with no tables reads as empty (SQLite:
                                    // an empty file); PostgreSQL: no schema is no store
};

const DialectSql& dialect_sql(Dialect dialect);

// One statement of one execution at a time; bind by 1-based index, then step() through the rows.
class QueryBackend {
 public:
  virtual ~QueryBackend() = default;
  virtual void bind(int index, int64_t value) = 0;
  virtual void bind(int index, double value) = 0;
  virtual void bind(int index, std::string_view value) = 0;
  virtual void bind_null(int index) = 0;
  virtual bool step() = 0;
  virtual void reset() = 0;
  virtual int64_t column_int(int index) const = 0;
  virtual double column_double(int index) const = 0;
  virtual std::string column_text(int index) const = 0;
  virtual bool column_is_null(int index) const = 0;
  // After step() of an INSERT ending in DialectSql::returning_id: the new row's id.
  virtual int64_t inserted_id() const = 0;
};

// A prepared statement, by value (what Statement is for SQLite alone). Bound text must stay alive
// until step().
class Query {
 public:
  explicit Query(std::unique_ptr<QueryBackend> backend) : backend_(std::move(backend)) {}
  Query& bind(int index, int64_t value) { backend_->bind(index, value); return *this; }
  Query& bind(int index, double value) { backend_->bind(index, value); return *this; }
  Query& bind(int index, std::string_view value) { backend_->bind(index, value); return *this; }
  Query& bind_null(int index) { backend_->bind_null(index); return *this; }
  bool step() { return backend_->step(); }
  void reset() { backend_->reset(); }
  int64_t column_int(int index) const { return backend_->column_int(index); }
  double column_double(int index) const { return backend_->column_double(index); }
  std::string column_text(int index) const { return backend_->column_text(index); }
  bool column_is_null(int index) const { return backend_->column_is_null(index); }
  int64_t inserted_id() const { return backend_->inserted_id(); }

 private:
  std::unique_ptr<QueryBackend> backend_;
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  // What messages call the store: its path, or its URL with the password masked.
  virtual const std::string& name() const = 0;
  virtual void exec(std::string_view sql) = 0;
  virtual Query prepare(std::string_view sql) = 0;
  // The stamped schema version; 0 for a new store (no stamp, or no schema table).
  virtual int schema_version() = 0;

  const DialectSql& sql() const { return dialect_sql(dialect()); }
};

// A write transaction (DialectSql::begin ... COMMIT), rolled back when destroyed uncommitted.
class WriteTransaction {
 public:
  explicit WriteTransaction(Connection& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Connection& db_;
  bool done_ = false;
};

// How a store is opened (store.h StoreMode, repeated here to keep this header on its own).
enum class OpenFor { kReading, kWriting };

// The SQLite store at `path`: created (with its folder) for writing, never for reading; the
// messages of common/sqlite.h.
std::unique_ptr<Connection> open_sqlite(const std::string& path, OpenFor mode);

}  // namespace plumb::baseline
