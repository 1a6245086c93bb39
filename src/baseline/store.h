// The store: baseline records in SQLite, so that the next run can be compared with this one.
//
// One file (default $XDG_DATA_HOME/plumb/plumb.db), WAL journal so readers never wait for a
// writer, every record written in one IMMEDIATE transaction so that concurrent writers queue and a
// killed writer leaves nothing half-written. The schema is versioned (PRAGMA user_version) and
// migrated forward on open. Or, for a team, a PostgreSQL database (--db postgresql://...): the same
// schema and migrations, ids from the server (store_sql.h, store_postgres.h, docs/store.md).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baseline/validity.h"
#include "baseline/store_sql.h"
#include "common/sqlite.h"
#include "comm/result.h"

namespace plumb::baseline {

// One baseline: what was measured and the context it was measured in.
struct Record {
  int64_t id = 0;
  std::string created;                 // ISO 8601 UTC
  std::string label;
  std::vector<std::string> hosts;
  std::string source;                  // "plumb baseline", "nccl-tests <file>", ...
  nlohmann::json topo;                 // plumb.topo/1, or null when not taken
  nlohmann::json env;                  // plumb.env/1, or null
  nlohmann::json comm;                 // plumb.comm/1 without results[], or null
  std::vector<comm::Row> rows;         // the comm results
  nlohmann::json step;                 // plumb.step/1 (plumb step --save), or null
  nlohmann::json recovery;             // plumb.recovery/1 (plumb run --save), or null
  nlohmann::json memory;               // the memory baseline of a training run (plumb baseline
                                       // --workload: report::memory_baseline_json), or null
  nlohmann::json serve;                // plumb.serve/1 (plumb serve bench|peak --store, or a
                                       // baseline set's serving part), or null
  nlohmann::json missing;              // the parts of a baseline set that could not be taken:
                                       // {"step": "no traces were written in ...", ...}; null
                                       // when none is missing (docs/baseline.md)
  Validity validity;                   // what its source said about its own results: wrong
                                       // results, failed checks, an early end (validity.h)
  std::string write_key;               // unique per record (schema 9): a save retried after a
                                       // lost commit, or a copy of the record, finds it and
                                       // stores nothing; empty: save() makes a new one
};

// A line of `plumb list`.
struct Entry {
  int64_t id = 0;
  std::string created;
  std::string label;
  std::vector<std::string> hosts;
  std::string source;
  int64_t rows = 0;
  bool step = false;                   // holds a plumb.step/1 record
  int64_t step_ranks = 0;              // its ranks[]
  int64_t step_steps = 0;              // the distinct steps over its ranks
  bool recovery = false;               // holds a plumb.recovery/1 record
  int64_t recovery_failures = 0;       // its recoveries[]
  double recovery_downtime_median = 0; // seconds; NaN when no failure was followed by progress
  int64_t wrong_rows = 0;              // comm rows with wrong elements
  Validity validity;                   // as Record::validity
  // Which of a baseline set's six parts the record holds (plumb list's parts column); comm when
  // it has a plumb.comm/1 document or result rows, step and recovery as above.
  bool topo = false;
  bool env = false;
  bool comm = false;
  bool memory = false;
  bool serve = false;                  // holds a plumb.serve/1 record
  int64_t serve_runs = 0;              // its runs[]
  std::vector<std::string> missing;    // the parts its `missing` names, by name
};

// One pass of plumb check (node or burn-in), as stored: its verdict, the checks that failed, and
// its plumb.check/1 document.
struct CheckEntry {
  int64_t id = 0;
  std::string created;
  std::string host;
  std::string kind;                  // "node" or "burn-in"
  std::string status;                // ok, warning, critical or unknown
  std::vector<std::string> failing;  // the checks that were warning or critical
  nlohmann::json record;             // plumb.check/1 (null from list_checks without records)
  std::string write_key;             // as Record::write_key
};

// The schema version this build writes; older stores are migrated on open.
inline constexpr int kStoreSchemaVersion = 9;
// The first schema with write keys (migration 9); older stores are read without them.
inline constexpr int kWriteKeySchema = 9;

// The store a command opens and what chose it.
struct StoreChoice {
  std::string location;  // a file path, or a postgresql:// URL (unmasked: to open, never to show)
  std::string origin;    // "--db", "PLUMB_DB", "/etc/plumb/config.yaml:1" or "the default"
};

// The first of: `db` (its --db) when given, $PLUMB_DB when set, the `store` of the config file
// (common/config.h; read only when neither is given), default_store_path(). A postgresql:// or
// postgres:// URL is a PostgreSQL store (docs/store.md). A config file's store must be an absolute
// path or a URL, else an Error naming its line.
StoreChoice choose_store(const std::string& db);
// choose_store(db).location.
std::string store_location(const std::string& db);

// $XDG_DATA_HOME/plumb/plumb.db, else $HOME/.local/share/plumb/plumb.db, else the home folder
// of the user in the password database; an Error when none is known (never the current folder).
std::string default_store_path();

// Commands that only read (list, show, export, diff, report) open the store kReadOnly: nothing is
// created, migrated or written, not even a folder or a journal, and a missing store is an Error.
// Commands that store records (baseline, import) open it kReadWrite, creating it when missing.
enum class StoreMode { kReadOnly, kReadWrite };

// The id a saved record gets: a new one from the store, or the record's own (plumb store copy
// into an empty store keeps the source's ids: store_copy.h).
enum class RecordId { kNew, kKept };

// A new write key: 128 random bits in 32 hex digits.
std::string new_write_key();
// `given` when a record carries its key (a copy, a retry), else new_write_key().
std::string write_key_or_new(const std::string& given);

class Store {
 public:
  // Opens the store at `path`: an SQLite file, or a postgresql:// URL (store_url.h). kReadWrite
  // creates it (and its folder; on PostgreSQL, its tables in an existing database) when missing
  // and migrates it to the current schema. A store written by a newer plumb, a file that is not
  // SQLite and a database with tables of its own are refused with a clear Error, in either mode.
  explicit Store(const std::string& path, StoreMode mode = StoreMode::kReadWrite);

  // Saves `record` (its id is ignored unless `id` is kKept) in one transaction, retried when the
  // server went away (store_retry.h); returns the new id. A record whose write_key the store
  // holds already (an earlier try committed, or a copy) is not stored again: its id is returned.
  int64_t save(const Record& record, RecordId id = RecordId::kNew);
  // Saves every record in one transaction (all or none, as `plumb import` wants for one file);
  // returns the new ids in order.
  std::vector<int64_t> save_all(const std::vector<Record>& records);

  // Records saved one at a time in one transaction (all or none): `plumb import` stores each
  // test of a file as soon as it is parsed, so memory holds one test, not the file's. Without
  // commit() the destructor rolls everything back.
  class Batch {
   public:
    explicit Batch(Store& store);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;
    int64_t add(const Record& record);  // the new id
    void commit();

   private:
    friend class Store;
    // `record` under `write_key`: the id of the record that has the key already, else of the one
    // added (its own id when `id` is kKept).
    int64_t add_keyed(const Record& record, const std::string& write_key, RecordId id);

    Connection& db_;
    std::unique_ptr<WriteTransaction> transaction_;
    std::unique_ptr<Query> insert_;
    std::unique_ptr<Query> insert_row_;
    std::unique_ptr<Query> insert_step_;
    std::unique_ptr<Query> insert_recovery_;
  };

  // Newest first.
  std::vector<Entry> list(int limit = 100);

  // The record with `id`; Error when there is none, or when a spread or count holds what no run
  // can have (a negative or absurd spread, a negative wrong count, an integer beyond its field:
  // table_helpers.h validity_problem), naming the record, the result and the column.
  Record load(int64_t id);

  // Every baseline id, oldest first.
  std::vector<int64_t> ids();
  // The baseline / check pass holding `write_key`, if any.
  std::optional<int64_t> baseline_with_key(const std::string& write_key);
  std::optional<int64_t> check_with_key(const std::string& write_key);

  // Saves one check pass as save() saves a record; returns its id (store_checks.cc).
  int64_t save_check(const CheckEntry& entry, RecordId id = RecordId::kNew);
  // Every check pass id, oldest first; one pass with its record.
  std::vector<int64_t> check_ids();
  CheckEntry load_check(int64_t id);
  // The newest `per_host` passes of each host (of `host` alone, of `kind` alone, when given),
  // newest first, without their records: what plumb list and the repeat-offender rule read.
  std::vector<CheckEntry> recent_checks(int per_host, const std::string& host = {},
                                        const std::string& kind = {});

  // "latest" or a number -> an id; Error for anything else or an empty store.
  int64_t resolve(const std::string& id_or_latest);

  // The store's path, or its URL with the password masked: what every message names.
  const std::string& path() const { return db_->name(); }
  // The schema version of the store as opened (a read-only store keeps its own).
  int version() const { return version_; }
  // The connection, for the store's own tools (store_integrity.h reads the tables directly).
  Connection& connection() { return *db_; }

 private:
  void migrate();
  void refuse_foreign(int version);
  void refuse_newer(int version) const;
  void refuse_missing(int version) const;

  std::unique_ptr<Connection> db_;
  int version_ = kStoreSchemaVersion;  // of the file as opened (read-only stores keep theirs)
};

}  // namespace plumb::baseline
