#include "baseline/store_integrity.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "common/error.h"

namespace plumb::baseline {
namespace {

// The schemas that added step records and recovery records (store.cc kMigrations).
constexpr int kStepSchema = 3;
constexpr int kRecoverySchema = 4;

// A damaged store may have a problem in every row: a check lists this many, then counts the rest.
constexpr size_t kMaxProblemsShown = 20;

StoreCheck holding(std::string name, std::string fine) {
  StoreCheck c;
  c.name = std::move(name);
  c.fine = std::move(fine);
  return c;
}

void add_problem(StoreCheck& check, std::string problem) {
  if (check.problems.size() < kMaxProblemsShown) {
    check.problems.push_back(std::move(problem));
  } else if (check.problems.size() == kMaxProblemsShown) {
    check.problems.emplace_back("and more, not shown");
  }
}

// An Error of Store::load names the store first: the line names the store once, at the top.
std::string without_store(const std::string& message, const std::string& store) {
  const std::string prefix = store + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

StoreCheck schema(const Store& store) {
  StoreCheck c = holding("schema", fmt::format("ok (version {})", store.version()));
  if (store.version() == 0) {
    c.fine = "empty (no tables yet)";
  } else if (store.version() < kStoreSchemaVersion) {
    c.fine = fmt::format("schema {}, this plumb writes {}: a writing command migrates it",
                         store.version(), kStoreSchemaVersion);
  }
  return c;
}

// PRAGMA integrity_check gives "ok" or a line per problem; foreign_key_check a row per row whose
// parent is missing.
std::vector<StoreCheck> sqlite_checks(Connection& db) {
  StoreCheck integrity = holding("sqlite integrity_check", "ok");
  Query q = db.prepare("PRAGMA integrity_check");
  while (q.step()) {
    if (q.column_text(0) != "ok") add_problem(integrity, q.column_text(0));
  }
  StoreCheck keys = holding("sqlite foreign_key_check", "ok");
  Query f = db.prepare("PRAGMA foreign_key_check");
  while (f.step()) {  // a WITHOUT ROWID table's row has no rowid to name
    add_problem(keys, fmt::format("{}: {} refers to a {} row that is not there", f.column_text(0),
                                  f.column_is_null(1) ? std::string("a row")
                                                      : fmt::format("row {}", f.column_int(1)),
                                  f.column_text(2)));
  }
  return {integrity, keys};
}

StoreCheck orphans(Connection& db, int version) {
  StoreCheck c = holding("rows of missing baselines", "ok");
  std::vector<std::string_view> tables = {"comm_results"};
  if (version >= kStepSchema) tables.push_back("step_records");
  if (version >= kRecoverySchema) tables.push_back("recovery_records");
  for (const std::string_view table : tables) {
    Query q = db.prepare(fmt::format(
        "SELECT baseline_id, COUNT(*) FROM {} WHERE baseline_id NOT IN (SELECT id FROM baselines) "
        "GROUP BY baseline_id ORDER BY baseline_id", table));
    while (q.step()) {
      add_problem(c, fmt::format("{}: {} row(s) of baseline {}, which is not in the store", table,
                                 q.column_int(1), q.column_int(0)));
    }
  }
  return c;
}

// A JSON part that did not parse reads back discarded (store.cc json_or_null).
void check_parts(StoreCheck& c, const Record& r) {
  const std::array<std::pair<const char*, const nlohmann::json*>, 8> parts = {{
      {"topo", &r.topo}, {"env", &r.env}, {"comm", &r.comm}, {"step", &r.step},
      {"recovery", &r.recovery}, {"memory", &r.memory}, {"missing", &r.missing},
      {"serve", &r.serve}}};
  for (const auto& [name, part] : parts) {
    if (part->is_discarded()) add_problem(c, fmt::format("baseline {}: {}: not JSON", r.id, name));
  }
}

StoreCheck loads(Store& store) {
  const std::vector<int64_t> ids = store.ids();
  const std::vector<int64_t> checks = store.check_ids();
  StoreCheck c = holding("records load", fmt::format("ok ({} baselines, {} check passes)",
                                                      ids.size(), checks.size()));
  for (const int64_t id : ids) {
    try {
      check_parts(c, store.load(id));
    } catch (const Error& e) {
      add_problem(c, without_store(e.what(), store.path()));
    }
  }
  for (const int64_t id : checks) {
    try {
      store.load_check(id);
    } catch (const Error& e) {
      add_problem(c, without_store(e.what(), store.path()));
    }
  }
  return c;
}

StoreCheck write_keys(Connection& db, int version) {
  StoreCheck c = holding("write keys", "ok");
  if (version < kWriteKeySchema) {
    c.fine = fmt::format("none before schema {}", kWriteKeySchema);
    return c;
  }
  for (const auto& [table, what] : {std::pair{"baselines", "baseline"},
                                    std::pair{"check_records", "check pass"}}) {
    Query empty = db.prepare(fmt::format(
        "SELECT id FROM {} WHERE write_key IS NULL OR write_key = '' ORDER BY id", table));
    while (empty.step()) add_problem(c, fmt::format("{} {}: no write key", what, empty.column_int(0)));
    Query twice = db.prepare(fmt::format(
        "SELECT MIN(id), MAX(id), COUNT(*) FROM {} WHERE write_key <> '' GROUP BY write_key "
        "HAVING COUNT(*) > 1 ORDER BY MIN(id)", table));
    while (twice.step()) {
      const int64_t more = twice.column_int(2) - 2;
      add_problem(c, fmt::format("{} {} and {}{} share a write key", what, twice.column_int(0),
                                 twice.column_int(1),
                                 more > 0 ? fmt::format(" and {} more", more) : ""));
    }
  }
  return c;
}

}  // namespace

std::vector<StoreCheck> check_store_integrity(Store& store) {
  Connection& db = store.connection();
  const int version = store.version();
  std::vector<StoreCheck> checks = {schema(store)};
  if (db.dialect() == Dialect::kSqlite) {
    for (StoreCheck& c : sqlite_checks(db)) checks.push_back(std::move(c));
  }
  if (version == 0) return checks;  // an empty SQLite file: no tables yet
  checks.push_back(orphans(db, version));
  checks.push_back(loads(store));
  checks.push_back(write_keys(db, version));
  return checks;
}

}  // namespace plumb::baseline
