#include "baseline/store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "baseline/recovery_store.h"
#include "baseline/record_kind.h"
#include "common/error.h"
#include "supervise/recovery_json.h"
#include "support/postgres.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

// What makes a current store one of schema 5 or older: the columns migration 6 added.
// What schemas 6 (the baseline set's columns) and 7 (check records) added: dropped to make an
// older store from a current one.
// Schema 8 (the serving record's column) and 9 (write keys, their unique indexes first) likewise.
const std::string kDropWriteKeys =
    "DROP INDEX baselines_write_key; DROP INDEX check_records_write_key; "
    "ALTER TABLE baselines DROP COLUMN write_key; ALTER TABLE check_records DROP COLUMN write_key; ";
const std::string kDropServeColumn = kDropWriteKeys + "ALTER TABLE baselines DROP COLUMN serve; ";
const std::string kDropCheckRecords = kDropServeColumn + "DROP TABLE check_records; ";
const std::string kDropSetColumns =
    kDropCheckRecords + "ALTER TABLE baselines DROP COLUMN memory; ALTER TABLE baselines DROP COLUMN missing; ";

// The store's suite runs on both backends: each test on a store of its own, a new SQLite file or
// a new database on the test binary's PostgreSQL server (support/postgres.h).
enum class Backend { kSqlite, kPostgres };

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres && test::Postgres::get() == nullptr) {
      GTEST_SKIP() << test::Postgres::why();
    }
  }
  bool postgres() const { return GetParam() == Backend::kPostgres; }
  // A new, empty store: an SQLite file (its folder not yet made) or a PostgreSQL database.
  std::string location(const std::string& name) {
    if (!postgres()) return test::temp_dir(name) + "/plumb.db";
    db_ = test::Postgres::get()->create_database(name);
    return test::Postgres::get()->url(db_);
  }
  // Runs `sql` on the store at `where` (as a user editing it by hand would).
  void exec(const std::string& where, const std::string& sql) {
    if (postgres()) {
      test::Postgres::get()->psql(db_, sql);
    } else {
      Database(where).exec(sql);
    }
  }
  // The statement that stamps schema version `v`.
  std::string stamp(int v) const {
    return postgres() ? "UPDATE plumb_schema SET version = " + std::to_string(v) + ";"
                      : "PRAGMA user_version = " + std::to_string(v) + ";";
  }
  // The schema version the store at `where` is stamped with.
  int64_t stored_version(const std::string& where) const {
    if (postgres()) {
      return std::stoll(test::Postgres::get()->query(db_, "SELECT version FROM plumb_schema"));
    }
    Statement v = Database(where).prepare("PRAGMA user_version");
    v.step();
    return v.column_int(0);
  }

 private:
  std::string db_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& backend) {
                           return backend.param == Backend::kSqlite ? "Sqlite" : "Postgres";
                         });

Record sample(const std::string& label, int rows) {
  Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = label;
  r.hosts = {"node0", "node1"};
  r.source = "plumb baseline";
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"nccl", "2.18.3"}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"ranks", 8}};
  for (int i = 0; i < rows; ++i) {
    comm::Row row;
    row.layer = "node";
    row.group = "node" + std::to_string(i % 2);
    row.group_ranks = 2;
    row.collective = "allreduce";
    row.dtype = "float32";
    row.op = "sum";
    row.requested_bytes = row.bytes = 1024u << i;
    row.count = row.bytes / 4;
    row.time_us = 10.5 * (i + 1);
    row.algbw_gbps = 1.25;
    row.busbw_gbps = 1.25;
    row.wrong = i == 0 ? -1 : 0;
    row.p50_us = 10;
    row.p99_us = 20;
    row.max_us = 30;
    row.straggler = 1;
    row.straggler_share = 0.6;
    r.rows.push_back(row);
  }
  return r;
}

TEST_P(StoreTest, SaveLoadListResolve) {
  const std::string path = location("store");  // folder created on open
  Store store(path);
  const int64_t a = store.save(sample("first", 3));
  const int64_t b = store.save(sample("second", 5));
  EXPECT_EQ(b, a + 1);
  const Record back = store.load(a);
  EXPECT_EQ(back.label, "first");
  EXPECT_EQ(back.hosts, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(back.env["versions"]["nccl"], "2.18.3");
  EXPECT_TRUE(back.topo.is_null());
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_EQ(back.rows[2].bytes, 4096u);
  EXPECT_DOUBLE_EQ(back.rows[2].time_us, 31.5);
  EXPECT_EQ(back.rows[0].wrong, -1);  // not checked survives as NULL
  EXPECT_EQ(back.rows[1].group, "node1");
  const auto entries = store.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, b);  // newest first
  EXPECT_EQ(entries[0].rows, 5);
  EXPECT_EQ(store.resolve("latest"), b);
  EXPECT_EQ(store.resolve(std::to_string(a)), a);
}

TEST_P(StoreTest, ClearErrors) {
  const std::string path = location("store-errors");
  Store store(path);
  try {
    store.resolve("latest");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": the store holds no baseline yet");
  }
  try {
    store.resolve("12x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "'12x' is not a baseline id: expected a positive number or 'latest'");
  }
  try {
    store.load(42);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": no baseline with id 42");
  }
}

TEST_P(StoreTest, RefusesAStoreFromANewerPlumb) {
  const std::string path = location("store-newer");
  { Store create(path); }
  exec(path, stamp(99));
  try {
    Store store(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ": the store has schema version 99, newer than this "
                                            "plumb's 9; use a newer plumb");
  }
}

// A store written by the first schema (no busbw_spread) opens, migrates and keeps its rows.
TEST(Store, MigratesAVersionOneStore) {
  const std::string path = test::temp_dir("store-v1") + "/plumb.db";
  int64_t id = 0;
  {
    Store store(path);
    Record r;
    r.created = "2026-12-01T00:00:00Z";
    r.hosts = {"h"};
    r.source = "test";
    comm::Row row;
    row.layer = "world";
    row.group = "world";
    row.collective = "allreduce";
    row.time_us = 10;  // a row that can have been measured: the store checks it on reading
    row.p50_us = row.p99_us = row.max_us = std::nan("");
    row.busbw_gbps = 7.5;
    row.busbw_spread = 0.25;
    r.rows = {row};
    id = store.save(r);
  }
  {
    Database db(path);
    db.exec(kDropSetColumns + "ALTER TABLE baselines DROP COLUMN validity; DROP TABLE recovery_records; DROP TABLE step_records; "
            "ALTER TABLE comm_results DROP COLUMN busbw_spread; PRAGMA user_version = 1;");
  }
  Store store(path);
  const Record back = store.load(id);
  ASSERT_EQ(back.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(back.rows[0].busbw_gbps, 7.5);
  EXPECT_TRUE(std::isnan(back.rows[0].busbw_spread));
  Database db(path);
  Statement v = db.prepare("PRAGMA user_version");
  v.step();
  EXPECT_EQ(v.column_int(0), kStoreSchemaVersion);
}

// A plumb.step/1 record of `ranks` ranks × `steps` steps (only the fields the store counts).
nlohmann::json step_record(int ranks, int steps) {
  nlohmann::json list = nlohmann::json::array();
  for (int r = 0; r < ranks; ++r) {
    nlohmann::json s = nlohmann::json::array();
    for (int i = 0; i < steps; ++i) s.push_back({{"step", 10 + i}, {"step_time_us", 1000.5 + r}});
    list.push_back({{"rank", r}, {"steps", s}});
  }
  return {{"schema", "plumb.step/1"}, {"world_size", ranks}, {"ranks", list},
          {"collectives", nlohmann::json::array()}, {"stragglers", nlohmann::json::array()}};
}

Record step_only(int ranks, int steps) {
  Record r;
  r.created = "2026-12-03T10:00:00Z";
  r.label = "step";
  r.hosts = {"node0"};
  r.source = "plumb step traces/";
  r.step = step_record(ranks, steps);
  return r;
}

// What plumb step --save stores: a record with only a step record (no topo, env, comm, rows).
TEST_P(StoreTest, AStepRecordSavesLoadsAndLists) {
  Store store(location("store-step"));
  const int64_t comm = store.save(sample("comm", 2));
  const int64_t step = store.save(step_only(4, 3));
  const Record back = store.load(step);
  EXPECT_EQ(back.step, step_record(4, 3));
  EXPECT_EQ(back.source, "plumb step traces/");
  EXPECT_EQ(back.label, "step");
  EXPECT_EQ(back.hosts, std::vector<std::string>{"node0"});
  EXPECT_TRUE(back.rows.empty());
  EXPECT_TRUE(back.comm.is_null());
  EXPECT_TRUE(back.env.is_null());
  EXPECT_TRUE(store.load(comm).step.is_null());
  const auto entries = store.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].id, step);
  EXPECT_TRUE(entries[0].step);
  EXPECT_EQ(entries[0].step_ranks, 4);
  EXPECT_EQ(entries[0].step_steps, 3);
  EXPECT_EQ(entries[0].rows, 0);
  EXPECT_FALSE(entries[1].step);
  EXPECT_EQ(entries[1].rows, 2);
}

// A store of schema 2 (before step records) opens read-only as it is, and migrates on a write
// open keeping its records; then it takes step records.
TEST(Store, MigratesAVersionTwoStore) {
  const std::string path = test::temp_dir("store-v2") + "/plumb.db";
  int64_t id = 0;
  {
    Store store(path);
    id = store.save(sample("old", 3));
  }
  {
    Database db(path);
    db.exec(kDropSetColumns + "ALTER TABLE baselines DROP COLUMN validity; DROP TABLE recovery_records; "
            "DROP TABLE step_records; PRAGMA user_version = 2;");
  }
  {
    Store reader(path, StoreMode::kReadOnly);
    const Record old = reader.load(id);
    EXPECT_EQ(old.rows.size(), 3u);
    EXPECT_TRUE(old.step.is_null());
    ASSERT_EQ(reader.list().size(), 1u);
    EXPECT_FALSE(reader.list()[0].step);
  }
  {
    Database db(path);
    Statement v = db.prepare("PRAGMA user_version");
    v.step();
    EXPECT_EQ(v.column_int(0), 2);  // reading changed nothing
  }
  Store store(path);
  const Record back = store.load(id);
  EXPECT_EQ(back.label, "old");
  ASSERT_EQ(back.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(back.rows[2].time_us, 31.5);
  EXPECT_TRUE(back.step.is_null());
  const int64_t step = store.save(step_only(2, 5));
  EXPECT_EQ(store.load(step).step, step_record(2, 5));
  EXPECT_EQ(store.list()[0].step_steps, 5);
  Database db(path);
  Statement v = db.prepare("PRAGMA user_version");
  v.step();
  EXPECT_EQ(v.column_int(0), kStoreSchemaVersion);
}

// A recovery baseline of two failures (downtime 90 and 400 s; a hang whose link check failed),
// as plumb run --save stores it.
supervise::RecoveryBaseline two_failures() {
  supervise::RecoveryBaseline b;
  b.command = {"torchrun", "train.py"};
  b.host = "gpu-001";
  b.started = "2026-12-03T10:00:00Z";
  b.wall_seconds = 1800;
  b.attempts = 3;
  b.result = "finished";
  b.failures_by_kind = {{"exit", 1}, {"hang", 1}};
  supervise::Recovery crash;
  crash.attempt = 1;
  crash.kind = "exit";
  crash.detail = "exit 3";
  crash.detect_seconds = 0.5;
  crash.steps = {{"reset-device", 20, true, ""}};
  crash.downtime_seconds = 90;
  crash.steps_lost = 50;
  supervise::Recovery hang = crash;
  hang.attempt = 2;
  hang.kind = "hang";
  hang.downtime_seconds = 400;
  b.recoveries = {crash, hang};
  return b;
}

// plumb run --save: a record with only a recovery record, listed with its failures and median
// downtime ((90 + 400) / 2 = 245 s).
TEST_P(StoreTest, ARecoveryRecordSavesLoadsAndLists) {
  const std::string path = location("store-recovery");
  const int64_t comm = Store(path).save(sample("comm", 2));
  const int64_t id = save_recovery(two_failures(), path, "drill");
  EXPECT_EQ(id, comm + 1);
  Store store(path, StoreMode::kReadOnly);
  const Record back = store.load(id);
  EXPECT_EQ(back.recovery, supervise::recovery_to_json(two_failures()));
  EXPECT_EQ(back.label, "drill");
  EXPECT_EQ(back.source, "plumb run torchrun train.py");
  EXPECT_EQ(back.hosts, std::vector<std::string>{"gpu-001"});
  EXPECT_TRUE(back.step.is_null());
  EXPECT_TRUE(back.rows.empty());
  EXPECT_TRUE(store.load(comm).recovery.is_null());
  const auto entries = store.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_TRUE(entries[0].recovery);
  EXPECT_EQ(entries[0].recovery_failures, 2);
  EXPECT_EQ(entries[0].recovery_downtime_median, 245);
  EXPECT_FALSE(entries[0].step);
  EXPECT_FALSE(entries[1].recovery);
  EXPECT_EQ(entries[1].rows, 2);
}

// A store of schema 3 (before recovery records) reads as it is without being changed, then
// migrates on a write open keeping its step and comm records, and takes recovery records.
TEST(Store, MigratesAVersionThreeStore) {
  const std::string path = test::temp_dir("store-v3") + "/plumb.db";
  int64_t comm = 0;
  int64_t step = 0;
  {
    Store store(path);
    comm = store.save(sample("old", 3));
    step = store.save(step_only(2, 4));
  }
  {
    Database db(path);
    db.exec(kDropSetColumns + "ALTER TABLE baselines DROP COLUMN validity; DROP TABLE recovery_records; "
            "PRAGMA user_version = 3;");
  }
  const auto version = [&] {
    Database db(path);
    Statement v = db.prepare("PRAGMA user_version");
    v.step();
    return v.column_int(0);
  };
  {
    Store reader(path, StoreMode::kReadOnly);
    EXPECT_TRUE(reader.load(step).recovery.is_null());
    EXPECT_EQ(reader.load(step).step, step_record(2, 4));
    ASSERT_EQ(reader.list().size(), 2u);
    EXPECT_FALSE(reader.list()[0].recovery);
    EXPECT_TRUE(reader.list()[0].step);
  }
  EXPECT_EQ(version(), 3);  // reading changed nothing
  const int64_t id = save_recovery(two_failures(), path, "");
  EXPECT_EQ(version(), kStoreSchemaVersion);
  Store store(path);
  EXPECT_EQ(store.load(comm).rows.size(), 3u);
  EXPECT_EQ(store.load(step).step, step_record(2, 4));
  EXPECT_EQ(store.load(id).recovery["totals"]["failures"], 2);
  EXPECT_EQ(store.list()[0].recovery_failures, 2);
}

// Issue 28: what a record's source said about its own results is stored (schema 5), listed and
// loaded back.
TEST_P(StoreTest, KeepsValidity) {
  const std::string path = location("store-validity");
  Store store(path);
  Record r = sample("cut", 3);
  r.rows[2].wrong = 12;
  r.validity.push_back({IssueKind::kWrongResults, "run.log:30",
                        "nccl-tests says '# Out of bounds values : 12 FAILED'", 0, 0, {}, 0});
  r.validity.push_back(incomplete_sweep("run.log:22", "the test ends without its summary",
                                        SweepPlan{1024, 1 << 20, 2, 0}, 3, 4096));
  const int64_t id = store.save(r);
  store.save(sample("fine", 2));
  const Record back = store.load(id);
  ASSERT_EQ(back.validity.size(), 2u);
  EXPECT_EQ(issue_text(back.validity[1]), issue_text(r.validity[1]));
  EXPECT_EQ(back.validity[1].missing_count, 8u);
  const std::vector<Entry> entries = store.list();
  EXPECT_EQ(entries[1].wrong_rows, 1);
  EXPECT_EQ(summarize_validity(entries[1].validity, entries[1].wrong_rows).marks,
            (std::vector<std::string>{"WRONG RESULTS", "INCOMPLETE: sweep ended at 4 KiB of 1 MiB"}));
  EXPECT_TRUE(entries[0].validity.empty());
  EXPECT_EQ(entries[0].wrong_rows, 0);
}

// A version-4 store (no validity column): read as it is, its records valid unless their rows
// count wrong elements; migrated when written to.
TEST(Store, MigratesAVersionFourStore) {
  const std::string path = test::temp_dir("store-v4") + "/plumb.db";
  int64_t id = 0;
  {
    Store store(path);
    Record r = sample("old", 3);
    r.rows[1].wrong = 5;
    id = store.save(r);
  }
  {
    Database db(path);
    db.exec(kDropSetColumns + "ALTER TABLE baselines DROP COLUMN validity; PRAGMA user_version = 4;");
  }
  {
    Store reader(path, StoreMode::kReadOnly);
    EXPECT_TRUE(reader.load(id).validity.empty());
    EXPECT_EQ(reader.list()[0].wrong_rows, 1);
    EXPECT_EQ(summarize_validity({}, reader.load(id).rows).marks,
              (std::vector<std::string>{"WRONG RESULTS"}));
  }
  Store store(path);
  Record r = sample("new", 1);
  r.validity.push_back({IssueKind::kFailedCheck, "x.log:3", "y", 0, 0, {}, 0});
  const int64_t fresh = store.save(r);
  EXPECT_EQ(store.load(fresh).validity.size(), 1u);
  EXPECT_TRUE(store.load(id).validity.empty());
}

// Issue 29: a baseline set keeps its memory part and the reasons of the parts it could not take.
TEST_P(StoreTest, ABaselineSetKeepsItsMemoryAndMissingParts) {
  const std::string path = location("store-set");
  Store store(path);
  Record r = sample("set", 2);
  r.source = "plumb baseline --workload";
  r.memory = {{"ranks", nlohmann::json::array({{{"rank", "0"}, {"settled_bytes", 1.5e8}}})},
              {"worst", {{"rank", "0"}}}};
  r.missing = {{"recovery", "skipped (--skip recovery)"}};
  const int64_t id = store.save(r);
  const int64_t plain = store.save(sample("plain", 1));
  const Record back = store.load(id);
  EXPECT_EQ(back.memory, r.memory);
  EXPECT_EQ(back.missing, r.missing);
  EXPECT_TRUE(store.load(plain).memory.is_null());
  EXPECT_TRUE(store.load(plain).missing.is_null());
  EXPECT_EQ(stored_version(path), kStoreSchemaVersion);
}

// plumb list's parts column: which of the six parts each record holds, for sets (with the parts
// their `missing` names) and for the records of one kind alike.
TEST_P(StoreTest, ListSaysWhichPartsEachRecordHolds) {
  const std::string path = location("store-list-parts");
  Store store(path);
  Record set = sample("set", 2);
  set.source = "plumb baseline --workload";
  set.topo = {{"schema", "plumb.topo/1"}, {"hosts", nlohmann::json::array()}};
  set.step = {{"schema", "plumb.step/1"}, {"ranks", nlohmann::json::array()}};
  set.memory = {{"ranks", nlohmann::json::array()}};
  set.missing = {{"recovery", "skipped (--skip recovery)"}, {"comm", "x"}};
  store.save(set);
  Record step;
  step.source = "plumb step";
  step.step = set.step;
  store.save(step);
  store.save(sample("comm", 1));
  const auto entries = store.list();
  ASSERT_EQ(entries.size(), 3u);
  const Entry& comm = entries[0];
  EXPECT_TRUE(comm.env && comm.comm);
  EXPECT_FALSE(comm.topo || comm.memory || comm.step || comm.recovery);
  EXPECT_TRUE(comm.missing.empty());
  EXPECT_TRUE(entries[1].step);
  EXPECT_FALSE(entries[1].topo || entries[1].env || entries[1].comm || entries[1].memory);
  const Entry& s = entries[2];
  EXPECT_TRUE(s.topo && s.env && s.comm && s.step && s.memory);
  EXPECT_FALSE(s.recovery);
  EXPECT_EQ(s.missing, (std::vector<std::string>{"comm", "recovery"}));  // by name
}

// A version-5 store (no memory or missing column): read as it is, migrated when written to.
TEST_P(StoreTest, MigratesAVersionFiveStore) {
  const std::string path = location("store-v5");
  int64_t id = 0;
  {
    Store store(path);
    id = store.save(sample("old", 2));
  }
  exec(path, kDropSetColumns + stamp(5));
  {
    Store reader(path, StoreMode::kReadOnly);
    EXPECT_TRUE(reader.load(id).memory.is_null());
    EXPECT_EQ(reader.load(id).rows.size(), 2u);
    const auto entries = reader.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_FALSE(entries[0].memory);
    EXPECT_TRUE(entries[0].missing.empty());
    EXPECT_TRUE(entries[0].comm && entries[0].env);
  }
  Store store(path);
  Record r = sample("new", 1);
  r.memory = {{"ranks", nlohmann::json::array()}};
  EXPECT_EQ(store.load(store.save(r)).memory, r.memory);
  EXPECT_TRUE(store.load(id).memory.is_null());
}

// Issue 28: spreads and counts no run can have, written into a store by hand or damage, are
// refused on reading with the record, the result and the column — never turned into a verdict.
TEST_P(StoreTest, RefusesImpossibleStoredFigures) {
  int n = 0;
  const auto damaged = [&](const std::string& sql) {
    const std::string path = location("store-damaged-" + std::to_string(n++));
    {
      Store store(path);
      store.save(sample("x", 2));
    }
    exec(path, sql);
    try {
      Store(path, StoreMode::kReadOnly).load(1);
    } catch (const Error& e) {
      return std::string(e.what()).substr(path.size());
    }
    return std::string("no error");
  };
  const std::string at = ": baseline 1, result 1 (allreduce@node): ";
  EXPECT_EQ(damaged("UPDATE comm_results SET busbw_spread = -5 WHERE seq = 1"),
            at + "busbw_spread: expected a relative spread from 0 to 1000 (the rounds' median "
                 "absolute deviation over their median; none when measured once), got -5");
  EXPECT_EQ(damaged("UPDATE comm_results SET busbw_spread = 1e300 WHERE seq = 1"),
            at + "busbw_spread: expected a relative spread from 0 to 1000 (the rounds' median "
                 "absolute deviation over their median; none when measured once), got 1e+300");
  EXPECT_EQ(damaged("UPDATE comm_results SET wrong = -3 WHERE seq = 1"),
            at + "wrong: expected a count of wrong elements from 0 (or NULL: not checked), got -3");
  EXPECT_EQ(damaged("UPDATE comm_results SET group_ranks = 10000000000 WHERE seq = 1"),
            at + "group_ranks: expected a whole number from 0 to 2147483647, got 10000000000");
  EXPECT_EQ(damaged("UPDATE comm_results SET straggler_share = 2 WHERE seq = 1"),
            at + "straggler_share: expected a fraction from 0 to 1, got 2");
  EXPECT_EQ(damaged("UPDATE baselines SET comm = '{\"settings\": {\"rounds\": -5}}'"),
            ": baseline 1: comm.settings.rounds: expected a whole number from 1 to 100, "
                   "got -5");
  EXPECT_EQ(damaged("UPDATE baselines SET validity = '[{\"kind\": \"bad\"}]'"),
            ": baseline 1: validity[0].kind: expected one of wrong-results, "
                   "failed-check, incomplete, got \"bad\"");
}

// plumb import stores each test as it is parsed; a bad line later in the file undoes them all.
TEST_P(StoreTest, BatchWithoutCommitLeavesNothing) {
  const std::string path = location("store-batch");
  Store store(path);
  Record r;
  r.created = "2026-12-02T00:00:00Z";
  r.source = "test";
  {
    Store::Batch batch(store);
    EXPECT_EQ(batch.add(r), 1);
    EXPECT_EQ(batch.add(r), 2);
  }  // an exception from the parser would leave the scope here
  EXPECT_TRUE(store.list().empty());
  Store::Batch batch(store);
  const int64_t id = batch.add(r);
  batch.commit();
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.list()[0].id, id);
}

TEST(Store, NotADatabase) {
  const std::string path = test::temp_dir("store-garbage") + "/plumb.db";
  test::write_file(path, std::string(4096, 'x'));
  EXPECT_THROW(Store store(path), Error);
}

// Two writers at once and a third killed with SIGKILL in the middle of its writes: the store
// stays readable, passes SQLite's integrity check, and holds every committed record whole.
TEST_P(StoreTest, ConcurrentWritersAndAKilledOne) {
  const std::string path = location("store-concurrent");
  { Store init(path); }
  constexpr int kPerWriter = 40;
  auto writer = [&](const std::string& label, int count) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        Store store(path);
        for (int i = 0; i < count; ++i) store.save(sample(label, 50));
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    return pid;
  };
  const pid_t a = writer("a", kPerWriter);
  const pid_t b = writer("b", kPerWriter);
  const pid_t victim = writer("victim", 100000);
  // Killed once it has committed (a fixed wait was too short on a loaded machine), mid-write.
  const auto victim_committed = [&] {
    for (const Entry& e : Store(path, StoreMode::kReadOnly).list(5)) {
      if (e.label == "victim") return true;
    }
    return false;
  };
  for (int tries = 0; tries < 3000 && !victim_committed(); ++tries) usleep(10 * 1000);
  usleep(50 * 1000);
  kill(victim, SIGKILL);
  int status = 0;
  status = test::wait_status(victim);
  EXPECT_TRUE(WIFSIGNALED(status));
  status = test::wait_status(a);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  status = test::wait_status(b);
  EXPECT_EQ(WEXITSTATUS(status), 0);

  Store store(path);
  if (!postgres()) {
    Database check(path);
    Statement integrity = check.prepare("PRAGMA integrity_check");
    ASSERT_TRUE(integrity.step());
    EXPECT_EQ(integrity.column_text(0), "ok");
  }
  std::map<std::string, int> per_label;
  for (const Entry& e : store.list(1000000)) {
    ++per_label[e.label];
    EXPECT_EQ(e.rows, 50) << "record " << e.id << " of " << e.label << " is not whole";
  }
  EXPECT_EQ(per_label["a"], kPerWriter);
  EXPECT_EQ(per_label["b"], kPerWriter);
  EXPECT_GT(per_label["victim"], 0) << "the killed writer committed nothing before the kill";
}

CheckEntry check_pass(const std::string& host, const std::string& kind, std::vector<std::string> failing) {
  CheckEntry e;
  e.created = "2026-12-07T00:00:00Z";
  e.host = host;
  e.kind = kind;
  e.status = failing.empty() ? "ok" : "critical";
  e.failing = std::move(failing);
  e.record = {{"schema", "plumb.check/1"}};
  return e;
}

// Schema 7: plumb check's passes, the newest n of each host, by kind.
TEST_P(StoreTest, KeepsCheckPassesAndGivesEachHostsNewest) {
  const std::string path = location("store-checks");
  Store store(path);
  EXPECT_EQ(store.save_check(check_pass("node7", "node", {"pcie.link"})), 1);
  store.save_check(check_pass("node8", "node", {}));
  store.save_check(check_pass("node7", "burn-in", {"burn_in.busbw"}));
  store.save_check(check_pass("node7", "node", {"pcie.link", "host.irqbalance"}));
  const std::vector<CheckEntry> all = store.recent_checks(10);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].id, 4);
  EXPECT_EQ(all[0].failing, (std::vector<std::string>{"pcie.link", "host.irqbalance"}));
  const std::vector<CheckEntry> node7 = store.recent_checks(1, "node7", "node");
  ASSERT_EQ(node7.size(), 1u);
  EXPECT_EQ(node7[0].id, 4);
  EXPECT_EQ(store.recent_checks(1, "", "node").size(), 2u);  // one per host
  EXPECT_EQ(store.recent_checks(5, "", "burn-in")[0].failing[0], "burn_in.busbw");
}

// PostgreSQL refuses text that is not UTF-8 and libpq cuts text at a NUL; SQLite keeps both.
// A label, host or source of such bytes is stored as U+FFFD on both, and reads back the same.
TEST_P(StoreTest, TextThatIsNotUtf8ReadsBackTheSameOnBothBackends) {
  using namespace std::string_literals;
  Store store(location("store-utf8"));
  Record r = sample("run \xff\xfe of 2026", 1);
  r.source = "nccl-tests a\0b.log"s;
  r.hosts = {"node\xc3"};
  const Record back = store.load(store.save(r));
  EXPECT_EQ(back.label, "run \xEF\xBF\xBD\xEF\xBF\xBD of 2026");
  EXPECT_EQ(back.source, "nccl-tests a\xEF\xBF\xBD" "b.log");
  EXPECT_EQ(back.hosts, std::vector<std::string>{"node\xEF\xBF\xBD"});
  CheckEntry pass = check_pass("node\xff", "node", {"pcie\xfe"});
  store.save_check(pass);
  const std::vector<CheckEntry> checks = store.recent_checks(1);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].host, "node\xEF\xBF\xBD");
  EXPECT_EQ(checks[0].failing, std::vector<std::string>{"pcie\xEF\xBF\xBD"});
}

TEST_P(StoreTest, MigratesAVersionSixStoreToCheckRecords) {
  const std::string path = location("store-v6");
  int64_t id = 0;
  {
    Store store(path);
    id = store.save(sample("six", 2));
  }
  exec(path, kDropCheckRecords + stamp(6));
  EXPECT_TRUE(Store(path, StoreMode::kReadOnly).recent_checks(5).empty());  // read as it is
  Store store(path);
  EXPECT_EQ(store.load(id).label, "six");
  store.save_check(check_pass("node7", "node", {}));
  EXPECT_EQ(store.recent_checks(5).size(), 1u);
}

// Issue 31: a serving record (plumb serve --store) is kept whole, listed with its runs and
// exported; a version-7 store is read as it is and migrated when written to.
TEST_P(StoreTest, AServingRecordSavesLoadsListsAndMigrates) {
  const std::string path = location("store-v7");
  int64_t old_id = 0;
  {
    Store store(path);
    old_id = store.save(sample("seven", 1));
  }
  exec(path, kDropServeColumn + stamp(7));
  {
    Store reader(path, StoreMode::kReadOnly);
    EXPECT_TRUE(reader.load(old_id).serve.is_null());
    EXPECT_FALSE(reader.list()[0].serve);
  }
  Store store(path);
  Record r;
  r.created = "2026-12-07T04:00:00Z";
  r.source = "plumb serve bench";
  r.serve = {{"schema", "plumb.serve/1"},
             {"runs", nlohmann::json::array({{{"concurrency", 1}}, {{"concurrency", 2}}})}};
  const int64_t id = store.save(r);
  EXPECT_EQ(store.load(id).serve, r.serve);
  EXPECT_EQ(kind_of(store.load(id)), RecordKind::kServe);
  EXPECT_TRUE(store.load(old_id).serve.is_null());
  const auto entries = store.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_TRUE(entries[0].serve);
  EXPECT_EQ(entries[0].serve_runs, 2);
  EXPECT_FALSE(entries[0].comm || entries[0].step);
  EXPECT_FALSE(entries[1].serve);
  EXPECT_EQ(stored_version(path), kStoreSchemaVersion);
}

// Issue 33: a write key per record. A save retried after its commit was lost runs the same
// transaction again with the same key: it finds the record and stores nothing. Here the lost
// commit is a save that succeeded, and the retry the same Record saved again.
TEST_P(StoreTest, ASaveRetriedAfterALostCommitStoresOnce) {
  const std::string path = location("store-write-key");
  Store store(path);
  store.save(sample("other", 1));
  Record r = sample("retried", 2);
  r.write_key = new_write_key();
  const int64_t id = store.save(r);
  EXPECT_EQ(store.save(r), id);
  EXPECT_EQ(store.save_all({r, sample("new", 1)}), (std::vector<int64_t>{id, id + 1}));
  EXPECT_EQ(store.list().size(), 3u);
  EXPECT_EQ(store.load(id).write_key, r.write_key);
  EXPECT_EQ(store.load(id).rows.size(), 2u);
  EXPECT_EQ(store.load(1).write_key.size(), 32u);  // made at save
  EXPECT_NE(store.load(1).write_key, store.load(id + 1).write_key);

  CheckEntry pass = check_pass("node7", "node", {});
  pass.write_key = new_write_key();
  const int64_t check = store.save_check(pass);
  EXPECT_EQ(store.save_check(pass), check);
  EXPECT_EQ(store.recent_checks(10).size(), 1u);
  EXPECT_EQ(store.load_check(check).write_key, pass.write_key);
}

// Eight writers of one record (one key) at once end with one record: on PostgreSQL the losers of
// the race meet the unique index (23505), are retried, and find the winner's record.
TEST_P(StoreTest, WritersOfOneKeyAtOnceStoreOnce) {
  const std::string path = location("store-one-key");
  { Store(path).save(sample("first", 1)); }
  Record r = sample("raced", 20);
  r.write_key = new_write_key();
  constexpr int kWriters = 8;
  constexpr int kFailed = 100;
  std::vector<pid_t> pids;
  for (int i = 0; i < kWriters; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        Store store(path);
        _exit(static_cast<int>(store.save(r)));
      } catch (...) {
        _exit(kFailed);
      }
    }
    pids.push_back(pid);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    status = test::wait_status(pid);
    EXPECT_EQ(WEXITSTATUS(status), 2);  // every writer got the one record's id
  }
  Store store(path);
  EXPECT_EQ(store.list().size(), 2u);
  EXPECT_EQ(store.load(2).rows.size(), 20u);
}

// A version-8 store (no write keys): read as it is, its records without keys; migrated when
// written to, every record given a key of its own.
TEST_P(StoreTest, MigratesAVersionEightStoreToWriteKeys) {
  const std::string path = location("store-v8");
  {
    Store store(path);
    store.save(sample("a", 1));
    store.save(sample("b", 1));
    store.save_check(check_pass("node7", "node", {}));
  }
  exec(path, kDropWriteKeys + stamp(8));
  {
    Store reader(path, StoreMode::kReadOnly);
    EXPECT_EQ(reader.version(), 8);
    EXPECT_TRUE(reader.load(1).write_key.empty());
    EXPECT_FALSE(reader.baseline_with_key("x").has_value());
    EXPECT_TRUE(reader.load_check(1).write_key.empty());
  }
  Store store(path);
  EXPECT_EQ(stored_version(path), 9);
  const std::string a = store.load(1).write_key;
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, store.load(2).write_key);
  EXPECT_EQ(store.load_check(1).write_key.size(), 32u);
  EXPECT_EQ(store.baseline_with_key(a), 1);
  Record again = sample("a", 1);
  again.write_key = a;
  EXPECT_EQ(store.save(again), 1);  // the migrated key is a key like any other
  EXPECT_EQ(store.ids().size(), 2u);
}

}  // namespace
}  // namespace plumb::baseline
