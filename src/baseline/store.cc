#include "baseline/store.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "baseline/importers/table_helpers.h"
#include "baseline/record_json.h"
#include "common/error.h"
#include "common/json.h"
#include "common/strings.h"

namespace plumb::baseline {
namespace {

// Migration i brings the schema from version i to i + 1. Append, never edit.
const std::vector<std::string_view> kMigrations = {
    R"(CREATE TABLE baselines (
         id      INTEGER PRIMARY KEY AUTOINCREMENT,
         created TEXT NOT NULL,
         label   TEXT NOT NULL DEFAULT '',
         hosts   TEXT NOT NULL,   -- JSON array
         source  TEXT NOT NULL,
         topo    TEXT,            -- plumb.topo/1
         env     TEXT,            -- plumb.env/1
         comm    TEXT             -- plumb.comm/1 without results
       );
       CREATE TABLE comm_results (
         baseline_id     INTEGER NOT NULL REFERENCES baselines(id) ON DELETE CASCADE,
         seq             INTEGER NOT NULL,
         layer           TEXT NOT NULL,
         grp             TEXT NOT NULL,
         group_ranks     INTEGER NOT NULL,
         collective      TEXT NOT NULL,
         dtype           TEXT NOT NULL,
         op              TEXT NOT NULL,
         root            INTEGER NOT NULL,
         requested_bytes INTEGER NOT NULL,
         bytes           INTEGER NOT NULL,
         count           INTEGER NOT NULL,
         time_us         REAL NOT NULL,
         algbw_gbps      REAL NOT NULL,
         busbw_gbps      REAL NOT NULL,
         wrong           INTEGER,          -- NULL when not checked
         p50_us          REAL,             -- NULL when the source had none (imports)
         p99_us          REAL,
         max_us          REAL,
         straggler_rank  INTEGER NOT NULL,
         straggler_share REAL NOT NULL,
         PRIMARY KEY (baseline_id, seq)
       ) WITHOUT ROWID;)",
    // 2: the spread of busbw over the rounds of a run (plumb comm --rounds, plumb baseline)
    R"(ALTER TABLE comm_results ADD COLUMN busbw_spread REAL;)",
    // 3: a plumb step record (plumb.step/1), with what it holds counted for plumb list
    R"(CREATE TABLE step_records (
         baseline_id INTEGER PRIMARY KEY REFERENCES baselines(id) ON DELETE CASCADE,
         ranks       INTEGER NOT NULL,  -- ranks[]
         steps       INTEGER NOT NULL,  -- distinct steps over the ranks
         record      TEXT NOT NULL      -- plumb.step/1
       );)",
    // 4: a plumb run recovery baseline (plumb.recovery/1), with its summary for plumb list
    R"(CREATE TABLE recovery_records (
         baseline_id     INTEGER PRIMARY KEY REFERENCES baselines(id) ON DELETE CASCADE,
         failures        INTEGER NOT NULL,  -- recoveries[]
         downtime_median REAL,              -- seconds; NULL when none is known
         record          TEXT NOT NULL      -- plumb.recovery/1
       );)",
    // 5: what a record's source said about its own results (baseline/validity.h): wrong results,
    // failed checks, a sweep that ended early. Records stored before keep NULL: their rows'
    // wrong counts still mark them.
    R"(ALTER TABLE baselines ADD COLUMN validity TEXT;  -- JSON list of issues; NULL when none)",
    // 6: the baseline set (plumb baseline --workload): its memory part, and the parts that could
    // not be taken with the reason of each. Records stored before keep NULL in both.
    R"(ALTER TABLE baselines ADD COLUMN memory TEXT;   -- the memory baseline; NULL when not taken
       ALTER TABLE baselines ADD COLUMN missing TEXT;  -- JSON {part: reason}; NULL when none)",
    // 7: node checks (plumb check node --store, plumb check burn-in): one row per pass, its
    // failing checks kept apart so that a node's history is one indexed query (docs/check.md).
    R"(CREATE TABLE check_records (
         id      INTEGER PRIMARY KEY AUTOINCREMENT,
         created TEXT NOT NULL,
         host    TEXT NOT NULL,
         kind    TEXT NOT NULL,  -- node | burn-in
         status  TEXT NOT NULL,  -- ok | warning | critical | unknown
         failing TEXT NOT NULL,  -- JSON array: the checks that were warning or critical
         record  TEXT NOT NULL   -- plumb.check/1
       );
       CREATE INDEX check_records_host ON check_records (host, id);)",
    // 8: a serving record (plumb serve bench|peak --store, docs/serve.md), or a baseline set's
    // serving part. Records stored before keep NULL.
    R"(ALTER TABLE baselines ADD COLUMN serve TEXT;  -- plumb.serve/1; NULL when not taken)",
};

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json json_or_null(const Statement& s, int column) {
  if (s.column_is_null(column)) return nullptr;
  std::string problem;  // a store plumb did not write: the value is left out, as before
  return parse_json_or_discarded(s.column_text(column), problem);
}

std::vector<std::string> hosts_of(const std::string& text) {
  std::string problem;
  const auto j = parse_json_or_discarded(text, problem);
  if (!j.is_array()) return {};
  std::vector<std::string> hosts;
  for (const auto& h : j) {
    if (h.is_string()) hosts.push_back(h.get<std::string>());
  }
  return hosts;
}

void insert_rows(Statement& insert, int64_t id, const std::vector<comm::Row>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const comm::Row& r = rows[i];
    insert.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, r.layer).bind(4, r.group);
    insert.bind(5, static_cast<int64_t>(r.group_ranks)).bind(6, r.collective).bind(7, r.dtype);
    insert.bind(8, r.op).bind(9, static_cast<int64_t>(r.root));
    insert.bind(10, static_cast<int64_t>(r.requested_bytes)).bind(11, static_cast<int64_t>(r.bytes));
    insert.bind(12, static_cast<int64_t>(r.count)).bind(13, r.time_us).bind(14, r.algbw_gbps);
    insert.bind(15, r.busbw_gbps);
    if (r.wrong < 0) {
      insert.bind_null(16);
    } else {
      insert.bind(16, r.wrong);
    }
    insert.bind(17, r.p50_us).bind(18, r.p99_us).bind(19, r.max_us);
    insert.bind(20, static_cast<int64_t>(r.straggler)).bind(21, r.straggler_share);
    insert.bind(22, r.busbw_spread);
    insert.step();
    insert.reset();
  }
}

// What a step record holds, for plumb list: its ranks and the distinct steps over them. A record
// of another shape counts what it has (the store keeps what it is given; plumb diff checks it).
std::pair<int64_t, int64_t> step_counts(const nlohmann::json& step) {
  const auto ranks = step.find("ranks");
  if (ranks == step.end() || !ranks->is_array()) return {0, 0};
  std::set<int64_t> steps;
  for (const auto& rank : *ranks) {
    const auto list = rank.is_object() ? rank.find("steps") : rank.end();
    if (!rank.is_object() || list == rank.end() || !list->is_array()) continue;
    for (const auto& s : *list) {
      if (s.is_object() && s.contains("step") && s["step"].is_number_integer()) {
        steps.insert(s["step"].get<int64_t>());
      }
    }
  }
  return {static_cast<int64_t>(ranks->size()), static_cast<int64_t>(steps.size())};
}

void insert_step(Statement& insert, int64_t id, const nlohmann::json& step) {
  if (step.is_null()) return;
  const auto [ranks, steps] = step.is_object() ? step_counts(step) : std::pair<int64_t, int64_t>{};
  const std::string text = json_text(step);
  insert.bind(1, id).bind(2, ranks).bind(3, steps).bind(4, text);
  insert.step();
  insert.reset();
}

// What a recovery record holds, for plumb list: its failures and their median downtime, read
// from its totals (written by supervise::recovery_to_json); a record of another shape counts what
// it has.
void insert_recovery(Statement& insert, int64_t id, const nlohmann::json& recovery) {
  if (recovery.is_null()) return;
  const nlohmann::json* totals =
      recovery.is_object() && recovery.contains("totals") ? &recovery["totals"] : nullptr;
  const auto field = [&](const char* key) {
    return totals != nullptr && totals->is_object() && totals->contains(key) ? (*totals)[key]
                                                                               : nlohmann::json();
  };
  const nlohmann::json failures = field("failures");
  const nlohmann::json downtime = field("downtime_seconds_median");
  const std::string text = json_text(recovery);
  insert.bind(1, id).bind(2, failures.is_number_integer() ? failures.get<int64_t>() : 0);
  if (downtime.is_number()) {
    insert.bind(3, downtime.get<double>());
  } else {
    insert.bind_null(3);
  }
  insert.bind(4, text);
  insert.step();
  insert.reset();
}

nlohmann::json load_recovery(Database& db, int64_t id, int version) {
  if (version < 4) return nullptr;
  Statement q = db.prepare("SELECT record FROM recovery_records WHERE baseline_id = ?");
  q.bind(1, id);
  return q.step() ? json_or_null(q, 0) : nlohmann::json(nullptr);
}

nlohmann::json load_step(Database& db, int64_t id, int version) {
  if (version < 3) return nullptr;
  Statement q = db.prepare("SELECT record FROM step_records WHERE baseline_id = ?");
  q.bind(1, id);
  return q.step() ? json_or_null(q, 0) : nlohmann::json(nullptr);
}

// SQLite stores NaN as NULL: unknown values come back as NaN.
double double_or_nan(const Statement& q, int column) {
  return q.column_is_null(column) ? std::numeric_limits<double>::quiet_NaN() : q.column_double(column);
}

// The columns of comm_results in the order load_rows() selects them (after seq), to name the one
// a check refuses; validity_problem()'s fields map onto them by kFieldColumns.
constexpr std::array<const char*, kFieldCount> kFieldColumns = {
    "bytes", "count", "time_us", "algbw_gbps", "busbw_gbps", "p50_us", "p99_us", "max_us",
    "wrong", "busbw_spread"};

// A stored row's spread and counts are range-checked (table_helpers.h validity_problem), its
// integers before they are narrowed: a store edited by hand or damaged never turns them into a
// noise estimate or a verdict. (Its times and bandwidths were checked when the row was first
// read or measured.)
class StoredRow {
 public:
  StoredRow(const Statement& q, std::string where) : q_(q), where_(std::move(where)) {}

  int narrow(int column, const char* name, int64_t low) const {
    const int64_t v = q_.column_int(column);
    if (v < low || v > std::numeric_limits<int>::max()) {
      fail(name, fmt::format("expected a whole number from {} to {}, got {}", low,
                             std::numeric_limits<int>::max(), v));
    }
    return static_cast<int>(v);
  }
  uint64_t count(int column, const char* name) const {
    const int64_t v = q_.column_int(column);
    if (v < 0) fail(name, fmt::format("expected a whole number from 0 to {}, got {}", kMaxCount, v));
    return static_cast<uint64_t>(v);
  }
  int64_t wrong(int column) const {
    if (q_.column_is_null(column)) return -1;
    const int64_t v = q_.column_int(column);
    if (v < 0) fail("wrong", fmt::format("expected a count of wrong elements from 0 (or NULL: not checked), got {}", v));
    return v;
  }
  double share(int column) const {
    const double v = q_.column_double(column);
    if (!(v >= 0 && v <= 1)) fail("straggler_share", fmt::format("expected a fraction from 0 to 1, got {}", v));
    return v;
  }
  void check(const comm::Row& r) const {
    if (const auto problem = validity_problem(r)) {
      fail(kFieldColumns[static_cast<size_t>(problem->field)], problem->what);
    }
  }

 private:
  [[noreturn]] void fail(const char* column, const std::string& what) const {
    throw Error(fmt::format("{}: {}: {}", where_, column, what));
  }
  const Statement& q_;
  std::string where_;
};

// `version`: the store's schema; a version-1 store read without migrating has no busbw_spread.
// `where`: "plumb.db: baseline 3", for errors.
std::vector<comm::Row> load_rows(Database& db, int64_t id, int version, const std::string& where) {
  Statement q = db.prepare(fmt::format(
      "SELECT seq, layer, grp, group_ranks, collective, dtype, op, root, requested_bytes, bytes,"
      " count, time_us, algbw_gbps, busbw_gbps, wrong, p50_us, p99_us, max_us, straggler_rank,"
      " straggler_share, {} FROM comm_results WHERE baseline_id = ? ORDER BY seq",
      version >= 2 ? "busbw_spread" : "NULL"));
  q.bind(1, id);
  std::vector<comm::Row> rows;
  while (q.step()) {
    comm::Row r;
    r.layer = q.column_text(1);
    r.group = q.column_text(2);
    r.collective = q.column_text(4);
    r.dtype = q.column_text(5);
    r.op = q.column_text(6);
    const StoredRow stored(q, fmt::format("{}, result {} ({}@{})", where, q.column_int(0),
                                          r.collective, r.layer));
    r.group_ranks = stored.narrow(3, "group_ranks", 0);
    r.root = stored.narrow(7, "root", -1);
    r.requested_bytes = stored.count(8, "requested_bytes");
    r.bytes = stored.count(9, "bytes");
    r.count = stored.count(10, "count");
    r.time_us = q.column_double(11);
    r.algbw_gbps = q.column_double(12);
    r.busbw_gbps = q.column_double(13);
    r.wrong = stored.wrong(14);
    r.p50_us = double_or_nan(q, 15);
    r.p99_us = double_or_nan(q, 16);
    r.max_us = double_or_nan(q, 17);
    r.straggler = stored.narrow(18, "straggler_rank", -1);
    r.straggler_share = stored.share(19);
    r.busbw_spread = double_or_nan(q, 20);
    stored.check(r);
    rows.push_back(std::move(r));
  }
  return rows;
}

// The validity column (schema 5), checked field by field.
Validity load_validity(const Statement& q, int column, const std::string& where) {
  if (q.column_is_null(column)) return {};
  std::string problem;
  const nlohmann::json issues = parse_json_or_discarded(q.column_text(column), problem);
  if (issues.is_discarded()) throw Error(fmt::format("{}: validity: {}", where, problem));
  return validity_from_json(issues, where, "validity");
}

}  // namespace

std::string default_store_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/plumb/plumb.db";
  }
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    const passwd* user = getpwuid(getuid());
    home = user != nullptr && user->pw_dir != nullptr && *user->pw_dir ? user->pw_dir : nullptr;
  }
  if (home == nullptr) {
    throw Error("cannot place the store: XDG_DATA_HOME and HOME are unset and the user has no "
                "home folder; give --db FILE");
  }
  return std::string(home) + "/.local/share/plumb/plumb.db";
}

namespace {

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

// SQLite needs to create the -shm file beside a WAL store even to read it; in a folder this user
// cannot write, the file is read as immutable (no other writer can be changing it from here).
std::unique_ptr<Database> open_database(const std::string& path, StoreMode mode) {
  if (mode == StoreMode::kReadWrite) {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    return std::make_unique<Database>(path);
  }
  check_readable(path);
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  const bool folder_writable = access(parent.c_str(), W_OK) == 0;
  return std::make_unique<Database>(path, folder_writable ? ReadOnly::kShared : ReadOnly::kImmutable);
}

}  // namespace

Store::Store(const std::string& path, StoreMode mode) {
  db_ = open_database(path, mode);
  version_ = schema_version();
  refuse_foreign(version_);
  if (mode == StoreMode::kReadOnly) {
    refuse_newer(version_);
    return;
  }
  // WAL: readers never wait for the writer. synchronous=NORMAL: a commit survives a crash of
  // plumb (what the killed-writer test checks); a power cut may lose the last commits, not
  // corrupt the file. 64 MiB of page cache keeps a large import from spilling mid-transaction.
  db_->exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; "
            "PRAGMA cache_size = -65536;");
  migrate();
  version_ = kStoreSchemaVersion;
}

// PRAGMA user_version; a file that is not SQLite fails here with a message saying so.
int Store::schema_version() {
  try {
    Statement q = db_->prepare("PRAGMA user_version");
    q.step();
    return static_cast<int>(q.column_int(0));
  } catch (const Error&) {
    throw Error(fmt::format("{}: not a plumb store (not an SQLite database, or unreadable)",
                            db_->path()));
  }
}

// plumb stamps user_version on its stores; an unstamped file with tables belongs to someone else
// and gets none of plumb's tables added to it.
void Store::refuse_foreign(int version) {
  if (version != 0) return;
  Statement q = db_->prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name LIMIT 4");
  std::vector<std::string> tables;
  while (q.step()) tables.push_back(q.column_text(0));
  if (tables.empty()) return;
  throw Error(fmt::format("{}: an SQLite database, but not a plumb store (it has tables of its "
                          "own: {}); give --db a plumb store or a new file",
                          db_->path(), join(tables, ", ")));
}

void Store::refuse_newer(int version) const {
  if (version <= kStoreSchemaVersion) return;
  throw Error(fmt::format("{}: the store has schema version {}, newer than this plumb's {}; "
                          "use a newer plumb",
                          db_->path(), version, kStoreSchemaVersion));
}

void Store::migrate() {
  Transaction t(*db_);
  const int version = schema_version();
  refuse_newer(version);
  for (int v = version; v < kStoreSchemaVersion; ++v) {
    db_->exec(kMigrations[static_cast<size_t>(v)]);
  }
  if (version != kStoreSchemaVersion) {
    db_->exec(fmt::format("PRAGMA user_version = {}", kStoreSchemaVersion));
  }
  t.commit();
}

int64_t Store::save(const Record& record) { return save_all({record}).front(); }

std::vector<int64_t> Store::save_all(const std::vector<Record>& records) {
  Batch batch(*this);
  std::vector<int64_t> ids;
  ids.reserve(records.size());
  for (const Record& record : records) ids.push_back(batch.add(record));
  batch.commit();
  return ids;
}

Store::Batch::Batch(Store& store)
    : db_(*store.db_),
      transaction_(std::make_unique<Transaction>(db_)),
      insert_(std::make_unique<Statement>(db_.prepare(
          "INSERT INTO baselines (created, label, hosts, source, topo, env, comm, validity, "
          "memory, missing, serve) VALUES (?,?,?,?,?,?,?,?,?,?,?)"))),
      insert_row_(std::make_unique<Statement>(db_.prepare(
          "INSERT INTO comm_results VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"))),
      insert_step_(std::make_unique<Statement>(db_.prepare(
          "INSERT INTO step_records (baseline_id, ranks, steps, record) VALUES (?,?,?,?)"))),
      insert_recovery_(std::make_unique<Statement>(db_.prepare(
          "INSERT INTO recovery_records (baseline_id, failures, downtime_median, record) "
          "VALUES (?,?,?,?)"))) {}

Store::Batch::~Batch() = default;

int64_t Store::Batch::add(const Record& record) {
  Statement& insert = *insert_;
  // Bound text is not copied: keep it alive until step().
  const std::string hosts = json_text(record.hosts);
  const std::array<const nlohmann::json*, 3> parts = {&record.topo, &record.env, &record.comm};
  std::array<std::string, 6> texts;
  insert.bind(1, record.created).bind(2, record.label).bind(3, hosts).bind(4, record.source);
  for (size_t i = 0; i < parts.size(); ++i) {
    const int column = 5 + static_cast<int>(i);
    if (parts[i]->is_null()) {
      insert.bind_null(column);
    } else {
      texts[i] = json_text(*parts[i]);
      insert.bind(column, texts[i]);
    }
  }
  const std::string validity = json_text(validity_json(record.validity));
  if (record.validity.empty()) {
    insert.bind_null(8);
  } else {
    insert.bind(8, validity);
  }
  // The memory part, the missing parts and the serving part: NULL when not taken / none missing.
  const std::array<const nlohmann::json*, 3> set_parts = {&record.memory, &record.missing,
                                                          &record.serve};
  for (size_t i = 0; i < set_parts.size(); ++i) {
    const int column = 9 + static_cast<int>(i);
    const bool none = set_parts[i]->is_null() || (set_parts[i]->is_object() && set_parts[i]->empty());
    if (none) {
      insert.bind_null(column);
    } else {
      texts[3 + i] = json_text(*set_parts[i]);
      insert.bind(column, texts[3 + i]);
    }
  }
  insert.step();
  insert.reset();
  const int64_t id = db_.last_insert_id();
  insert_rows(*insert_row_, id, record.rows);
  insert_step(*insert_step_, id, record.step);
  insert_recovery(*insert_recovery_, id, record.recovery);
  return id;
}

void Store::Batch::commit() {
  insert_.reset();
  insert_row_.reset();
  insert_step_.reset();
  insert_recovery_.reset();
  transaction_->commit();
}

namespace {

// The parts a set's `missing` object names ({"step": "no traces ...", ...}), by name.
std::vector<std::string> missing_parts(const nlohmann::json& missing) {
  std::vector<std::string> parts;
  if (!missing.is_object()) return parts;
  for (auto it = missing.begin(); it != missing.end(); ++it) parts.push_back(it.key());
  return parts;
}

// A line of plumb list from Store::list's query (its columns in order).
Entry entry_of(const Statement& q, const std::string& path) {
  Entry e;
  e.id = q.column_int(0);
  e.created = q.column_text(1);
  e.label = q.column_text(2);
  e.hosts = hosts_of(q.column_text(3));
  e.source = q.column_text(4);
  e.rows = q.column_int(5);
  e.step = !q.column_is_null(6);
  e.step_ranks = q.column_int(6);
  e.step_steps = q.column_int(7);
  e.recovery = !q.column_is_null(8);
  e.recovery_failures = q.column_int(9);
  e.recovery_downtime_median = double_or_nan(q, 10);
  e.wrong_rows = q.column_int(11);
  e.validity = load_validity(q, 12, fmt::format("{}: baseline {}", path, e.id));
  e.topo = q.column_int(13) != 0;
  e.env = q.column_int(14) != 0;
  e.comm = q.column_int(15) != 0 || e.rows > 0;
  e.memory = q.column_int(16) != 0;
  e.missing = missing_parts(json_or_null(q, 17));
  e.serve = !q.column_is_null(18);
  e.serve_runs = q.column_int(18);
  return e;
}

}  // namespace

std::vector<Entry> Store::list(int limit) {
  if (version_ == 0) return {};  // an empty file opened read-only: no tables yet
  // A store older than version 3 (read without migrating) has no step records, older than 4 no
  // recovery records.
  Statement q = db_->prepare(fmt::format(
      "SELECT b.id, b.created, b.label, b.hosts, b.source,"
      " (SELECT COUNT(*) FROM comm_results r WHERE r.baseline_id = b.id), {}, {},"
      " (SELECT COUNT(*) FROM comm_results r WHERE r.baseline_id = b.id AND r.wrong > 0), {},"
      " b.topo IS NOT NULL, b.env IS NOT NULL, b.comm IS NOT NULL, {}, {}"
      " FROM baselines b {} {} ORDER BY b.id DESC LIMIT ?",
      version_ >= 3 ? "s.ranks, s.steps" : "NULL, NULL",
      version_ >= 4 ? "v.baseline_id, v.failures, v.downtime_median" : "NULL, NULL, NULL",
      version_ >= 5 ? "b.validity" : "NULL",
      version_ >= 6 ? "b.memory IS NOT NULL, b.missing" : "0, NULL",
      version_ >= 8 ? "json_array_length(b.serve, '$.runs')" : "NULL",
      version_ >= 3 ? "LEFT JOIN step_records s ON s.baseline_id = b.id" : "",
      version_ >= 4 ? "LEFT JOIN recovery_records v ON v.baseline_id = b.id" : ""));
  q.bind(1, static_cast<int64_t>(limit));
  std::vector<Entry> entries;
  while (q.step()) {
    entries.push_back(entry_of(q, db_->path()));
  }
  return entries;
}

Record Store::load(int64_t id) {
  if (version_ == 0) throw Error(fmt::format("{}: no baseline with id {}", db_->path(), id));
  Statement q = db_->prepare(fmt::format(
      "SELECT id, created, label, hosts, source, topo, env, comm, {}, {}, {} FROM baselines "
      "WHERE id = ?",
      version_ >= 5 ? "validity" : "NULL", version_ >= 6 ? "memory, missing" : "NULL, NULL",
      version_ >= 8 ? "serve" : "NULL"));
  q.bind(1, id);
  if (!q.step()) throw Error(fmt::format("{}: no baseline with id {}", db_->path(), id));
  Record r;
  r.id = q.column_int(0);
  r.created = q.column_text(1);
  r.label = q.column_text(2);
  r.hosts = hosts_of(q.column_text(3));
  r.source = q.column_text(4);
  r.topo = json_or_null(q, 5);
  r.env = json_or_null(q, 6);
  r.comm = json_or_null(q, 7);
  const std::string where = fmt::format("{}: baseline {}", db_->path(), id);
  r.validity = load_validity(q, 8, where);
  check_rounds_setting(r.comm, where, "comm");
  r.rows = load_rows(*db_, id, version_, where);
  r.step = load_step(*db_, id, version_);
  r.recovery = load_recovery(*db_, id, version_);
  r.memory = json_or_null(q, 9);
  r.missing = json_or_null(q, 10);
  r.serve = json_or_null(q, 11);
  return r;
}

int64_t Store::resolve(const std::string& text) {
  if (text == "latest") {
    if (version_ == 0) throw Error(fmt::format("{}: the store holds no baseline yet", db_->path()));
    Statement q = db_->prepare("SELECT MAX(id) FROM baselines");
    q.step();
    if (q.column_is_null(0)) throw Error(fmt::format("{}: the store holds no baseline yet", db_->path()));
    return q.column_int(0);
  }
  size_t used = 0;
  int64_t id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || id <= 0) {
    throw Error(fmt::format("'{}' is not a baseline id: expected a positive number or 'latest'", text));
  }
  return id;
}

}  // namespace plumb::baseline
