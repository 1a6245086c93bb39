// Issue 33: plumb store copy (baseline/store_copy.h) between SQLite and PostgreSQL, and plumb store
// check (baseline/store_integrity.h) on both. Each test on stores of its own: a new SQLite file or
// a new database on the test binary's PostgreSQL server (support/postgres.h).
#include "baseline/store_copy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "baseline/store.h"
#include "baseline/store_integrity.h"
#include "common/error.h"
#include "common/sqlite.h"
#include "support/postgres.h"
#include "support/set_record.h"
#include "support/step_record.h"
#include "support/subprocess.h"

namespace plumb::baseline {
namespace {

enum class Backend { kSqlite, kPostgres };

// A new, empty store of one backend, and SQL run on it as a user editing it by hand would.
struct TestStore {
  Backend backend;
  std::string location;
  std::string db;  // PostgreSQL: the database

  TestStore(Backend b, const std::string& name) : backend(b) {
    if (b == Backend::kSqlite) {
      location = test::temp_dir(name) + "/plumb.db";
    } else {
      db = test::Postgres::get()->create_database(name);
      location = test::Postgres::get()->url(db);
    }
  }
  void exec(const std::string& sql) const {
    if (backend == Backend::kPostgres) {
      test::Postgres::get()->psql(db, sql);
    } else {
      Database(location).exec(sql);
    }
  }
};

bool needs_postgres(std::initializer_list<Backend> backends) {
  for (const Backend b : backends) {
    if (b == Backend::kPostgres) return true;
  }
  return false;
}

std::string backend_name(Backend b) { return b == Backend::kSqlite ? "Sqlite" : "Postgres"; }

// A comm record with what its source said about it, and a row whose tail was not known.
Record comm_record(const std::string& label, double busbw) {
  Record r = test::comm_record(label, busbw, "nccl-tests all_reduce_perf.log");
  r.rows[0].p99_us = std::nan("");
  r.rows[1].wrong = 3;
  r.validity.push_back({IssueKind::kWrongResults, "run.log:30",
                        "nccl-tests says '# Out of bounds values : 3 FAILED'", 0, 0, {}, 0});
  return r;
}

Record recovery_record() {
  Record r;
  r.created = "2026-12-03T12:00:00Z";
  r.label = "drill";
  r.hosts = {"gpu-001"};
  r.source = "plumb run torchrun train.py";
  r.recovery = supervise::recovery_to_json(test::set_recovery());
  return r;
}

Record serve_record() {
  Record r;
  r.created = "2026-12-07T04:00:00Z";
  r.label = "vllm";
  r.source = "plumb serve bench";
  r.serve = test::serve_part();
  return r;
}

// One record of every kind: comm (with validity), step, recovery, a whole set, a set with
// missing parts, a serving record.
std::vector<Record> every_kind() {
  return {comm_record("before", 2.5), test::step_only_record(), recovery_record(),
          test::full_set("clean"), test::set_without_recovery("no-drill"), serve_record(),
          comm_record("after", 2.0)};
}

CheckEntry check_pass(const std::string& host, std::vector<std::string> failing) {
  CheckEntry e;
  e.created = "2026-12-04T08:00:00Z";
  e.host = host;
  e.kind = "node";
  e.status = failing.empty() ? "ok" : "critical";
  e.failing = std::move(failing);
  e.record = {{"schema", "plumb.check/1"}, {"host", host}};
  return e;
}

// Field by field; an unknown double (NaN) equals an unknown one.
void expect_same_double(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what;
  } else {
    EXPECT_DOUBLE_EQ(a, b) << what;
  }
}

void expect_same(const Record& a, const Record& b) {
  const std::string who = "baseline " + std::to_string(a.id) + " " + a.label;
  EXPECT_EQ(a.created, b.created) << who;
  EXPECT_EQ(a.label, b.label) << who;
  EXPECT_EQ(a.hosts, b.hosts) << who;
  EXPECT_EQ(a.source, b.source) << who;
  EXPECT_EQ(a.write_key, b.write_key) << who;
  EXPECT_EQ(a.topo, b.topo) << who;
  EXPECT_EQ(a.env, b.env) << who;
  EXPECT_EQ(a.comm, b.comm) << who;
  EXPECT_EQ(a.step, b.step) << who;
  EXPECT_EQ(a.recovery, b.recovery) << who;
  EXPECT_EQ(a.memory, b.memory) << who;
  EXPECT_EQ(a.serve, b.serve) << who;
  EXPECT_EQ(a.missing, b.missing) << who;
  EXPECT_EQ(validity_json(a.validity), validity_json(b.validity)) << who;
  ASSERT_EQ(a.rows.size(), b.rows.size()) << who;
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const comm::Row& x = a.rows[i];
    const comm::Row& y = b.rows[i];
    const std::string row = who + " row " + std::to_string(i);
    EXPECT_EQ(std::tie(x.layer, x.group, x.group_ranks, x.collective, x.dtype, x.op, x.root,
                       x.requested_bytes, x.bytes, x.count, x.wrong, x.straggler),
              std::tie(y.layer, y.group, y.group_ranks, y.collective, y.dtype, y.op, y.root,
                       y.requested_bytes, y.bytes, y.count, y.wrong, y.straggler))
        << row;
    for (const auto& [p, q] : {std::pair{x.time_us, y.time_us}, {x.algbw_gbps, y.algbw_gbps},
                               {x.busbw_gbps, y.busbw_gbps}, {x.p50_us, y.p50_us},
                               {x.p99_us, y.p99_us}, {x.max_us, y.max_us},
                               {x.straggler_share, y.straggler_share},
                               {x.busbw_spread, y.busbw_spread}}) {
      expect_same_double(p, q, row);
    }
  }
}

// Copies between two backends (the test's name says which: SqliteToPostgres...).
class StoreCopyTest : public ::testing::TestWithParam<std::pair<Backend, Backend>> {
 protected:
  void SetUp() override {
    if (needs_postgres({GetParam().first, GetParam().second}) && test::Postgres::get() == nullptr) {
      GTEST_SKIP() << test::Postgres::why();
    }
  }
  TestStore from(const std::string& name) const { return {GetParam().first, name + "-from"}; }
  TestStore to(const std::string& name) const { return {GetParam().second, name + "-to"}; }
};

INSTANTIATE_TEST_SUITE_P(
    Backends, StoreCopyTest,
    ::testing::Values(std::pair{Backend::kSqlite, Backend::kPostgres},
                      std::pair{Backend::kPostgres, Backend::kSqlite},
                      std::pair{Backend::kSqlite, Backend::kSqlite},
                      std::pair{Backend::kPostgres, Backend::kPostgres}),
    [](const ::testing::TestParamInfo<std::pair<Backend, Backend>>& p) {
      return backend_name(p.param.first) + "To" + backend_name(p.param.second);
    });

// Into an empty store: every kind round-trips equal field by field, under the same ids; the
// check passes too. Copied again, and back, nothing new is stored.
TEST_P(StoreCopyTest, EveryKindRoundTripsUnderItsIdsAndOnlyOnce) {
  const TestStore a = from("every-kind");
  const TestStore b = to("every-kind");
  std::vector<int64_t> ids;
  {
    Store store(a.location);
    for (const Record& r : every_kind()) ids.push_back(store.save(r));
    store.save_check(check_pass("node7", {"pcie.link"}));
    store.save_check(check_pass("node8", {}));
  }
  const CopyResult first = copy_store(a.location, b.location);
  EXPECT_EQ(first.copied, 7);
  EXPECT_EQ(first.already, 0);
  EXPECT_EQ(first.checks_copied, 2);
  EXPECT_TRUE(first.moved.empty());
  EXPECT_TRUE(first.moved_checks.empty());
  {
    Store source(a.location, StoreMode::kReadOnly);
    Store copy(b.location, StoreMode::kReadOnly);
    EXPECT_EQ(copy.ids(), ids);
    for (const int64_t id : ids) expect_same(source.load(id), copy.load(id));
    for (const int64_t id : source.check_ids()) {
      const CheckEntry x = source.load_check(id);
      const CheckEntry y = copy.load_check(id);
      EXPECT_EQ(std::tie(x.id, x.created, x.host, x.kind, x.status, x.failing, x.record, x.write_key),
                std::tie(y.id, y.created, y.host, y.kind, y.status, y.failing, y.record, y.write_key));
    }
  }
  const CopyResult again = copy_store(a.location, b.location);
  EXPECT_EQ(again.copied, 0);
  EXPECT_EQ(again.already, 7);
  EXPECT_EQ(again.checks_copied, 0);
  EXPECT_EQ(again.checks_already, 2);
  const CopyResult back = copy_store(b.location, a.location);
  EXPECT_EQ(back.copied + back.checks_copied, 0);
  EXPECT_EQ(Store(a.location, StoreMode::kReadOnly).ids().size(), 7u);
  EXPECT_EQ(Store(b.location, StoreMode::kReadOnly).check_ids().size(), 2u);
}

// Into a store that has records: new ids from it, and the moves said; a record of its own that
// the source has too (the same write key) is not stored twice.
TEST_P(StoreCopyTest, IntoAStoreWithRecordsGivesNewIds) {
  const TestStore a = from("new-ids");
  const TestStore b = to("new-ids");
  Record shared = comm_record("shared", 2.5);
  shared.write_key = new_write_key();
  {
    Store store(a.location);
    store.save(comm_record("one", 2.5));
    store.save(shared);
    store.save(comm_record("three", 2.5));
  }
  {
    Store store(b.location);
    store.save(serve_record());
    store.save(serve_record());
    EXPECT_EQ(store.save(shared), 3);
    store.save_check(check_pass("node1", {}));
  }
  Store(a.location).save_check(check_pass("node7", {}));
  const CopyResult r = copy_store(a.location, b.location);
  EXPECT_EQ(r.copied, 2);
  EXPECT_EQ(r.already, 1);
  EXPECT_EQ(r.checks_copied, 1);
  ASSERT_EQ(r.moved.size(), 3u);  // 2 is there already, as 3
  EXPECT_EQ(std::pair(r.moved[0].from, r.moved[0].to), std::pair(int64_t{1}, int64_t{4}));
  EXPECT_EQ(std::pair(r.moved[1].from, r.moved[1].to), std::pair(int64_t{2}, int64_t{3}));
  EXPECT_EQ(std::pair(r.moved[2].from, r.moved[2].to), std::pair(int64_t{3}, int64_t{5}));
  ASSERT_EQ(r.moved_checks.size(), 1u);
  EXPECT_EQ(r.moved_checks[0].to, 2);
  Store copy(b.location, StoreMode::kReadOnly);
  EXPECT_EQ(copy.load(4).label, "one");
  EXPECT_EQ(copy.load(5).label, "three");
  EXPECT_EQ(copy.ids().size(), 5u);
}

// Ids kept into an empty store continue from there: the next record saved gets the next id.
TEST_P(StoreCopyTest, KeptIdsAreFollowedByNewOnes) {
  const TestStore a = from("gaps");
  const TestStore b = to("gaps");
  {
    Store store(a.location);
    for (int i = 0; i < 3; ++i) store.save(comm_record("r" + std::to_string(i), 2.5));
  }
  a.exec("DELETE FROM baselines WHERE id = 2;");
  copy_store(a.location, b.location);
  Store copy(b.location);
  EXPECT_EQ(copy.ids(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(copy.save(comm_record("next", 2.5)), 4);
  EXPECT_EQ(copy.save_check(check_pass("node1", {})), 1);
}

TEST_P(StoreCopyTest, BadInput) {
  const TestStore a = from("bad");
  const TestStore b = to("bad");
  EXPECT_EQ(test::error_message([&] { copy_store(a.location, b.location); }),
            a.location + ": no store there (plumb baseline and plumb import create one; --db "
                         "names another)");
  { Store create(a.location); }
  EXPECT_EQ(test::error_message([&] { copy_store(a.location, a.location); }),
            a.location + ": plumb store copy needs two stores, and FROM and TO name the same one");
}

// plumb store check on each backend.
class StoreCheckTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres && test::Postgres::get() == nullptr) {
      GTEST_SKIP() << test::Postgres::why();
    }
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreCheckTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& b) {
                           return backend_name(b.param);
                         });

// The checks' lines, as plumb store check prints them (without the store's name).
std::vector<std::string> lines(const std::vector<StoreCheck>& checks) {
  std::vector<std::string> out;
  for (const StoreCheck& c : checks) {
    if (c.problems.empty()) out.push_back(c.name + ": " + c.fine);
    for (const std::string& p : c.problems) out.push_back(c.name + ": " + p);
  }
  return out;
}

std::vector<std::string> with_sqlite(Backend b, std::vector<std::string> sqlite,
                                     std::vector<std::string> rest) {
  std::vector<std::string> out = {rest[0]};
  if (b == Backend::kSqlite) out.insert(out.end(), sqlite.begin(), sqlite.end());
  out.insert(out.end(), rest.begin() + 1, rest.end());
  return out;
}

TEST_P(StoreCheckTest, AGoodStore) {
  const TestStore s(GetParam(), "check-good");
  {
    Store store(s.location);
    for (const Record& r : every_kind()) store.save(r);
    store.save_check(check_pass("node7", {"pcie.link"}));
  }
  Store store(s.location, StoreMode::kReadOnly);
  EXPECT_EQ(lines(check_store_integrity(store)),
            with_sqlite(GetParam(), {"sqlite integrity_check: ok", "sqlite foreign_key_check: ok"},
                        {"schema: ok (version 9)", "rows of missing baselines: ok",
                         "records load: ok (7 baselines, 1 check passes)", "write keys: ok"}));
}

// An orphan row, a part that is not JSON, a result no run can have, a check pass whose record
// is not JSON, a record without a write key: each named, all in one pass.
TEST_P(StoreCheckTest, ADamagedStore) {
  const TestStore s(GetParam(), "check-damaged");
  {
    Store store(s.location);
    for (const Record& r : every_kind()) store.save(r);
    store.save_check(check_pass("node7", {}));
  }
  // An orphan: on PostgreSQL only with the foreign key dropped, as a hand-made copy might have.
  s.exec(std::string(GetParam() == Backend::kPostgres ? "ALTER TABLE comm_results DROP CONSTRAINT comm_results_baseline_id_fkey; "
                        : "") +
         "INSERT INTO comm_results SELECT 42, seq, layer, grp, group_ranks, collective, dtype, op, "
         "root, requested_bytes, bytes, count, time_us, algbw_gbps, busbw_gbps, wrong, p50_us, "
         "p99_us, max_us, straggler_rank, straggler_share, busbw_spread FROM comm_results "
         "WHERE baseline_id = 1 AND seq = 0; "
         "UPDATE baselines SET env = '{not json' WHERE id = 2; "
         "UPDATE comm_results SET straggler_share = 7 WHERE baseline_id = 7 AND seq = 1; "
         "UPDATE check_records SET record = 'garbage' WHERE id = 1; "
         "UPDATE baselines SET write_key = NULL WHERE id = 3;");
  Store store(s.location, StoreMode::kReadOnly);
  const std::vector<std::string> got = lines(check_store_integrity(store));
  const std::vector<std::string> want = with_sqlite(
      GetParam(),
      {"sqlite integrity_check: ok",
       "sqlite foreign_key_check: comm_results: a row refers to a baselines row that is not there"},
      {"schema: ok (version 9)",
       "rows of missing baselines: comm_results: 1 row(s) of baseline 42, which is not in the store",
       "records load: baseline 2: env: not JSON",
       "records load: baseline 7, result 1 (allreduce@world): straggler_share: expected a "
       "fraction from 0 to 1, got 7",
       "records load: check pass 1: record: ",  // then the JSON parser's words
       "write keys: baseline 3: no write key"});
  ASSERT_EQ(got.size(), want.size()) << ::testing::PrintToString(got);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].ends_with(": ")) {
      EXPECT_EQ(got[i].rfind(want[i], 0), 0u) << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]);
    }
  }
}

// A store older than this plumb: read as it is, said, not failed.
TEST_P(StoreCheckTest, AnOlderStore) {
  const TestStore s(GetParam(), "check-older");
  { Store(s.location).save(comm_record("old", 2.5)); }
  s.exec("DROP INDEX baselines_write_key; DROP INDEX check_records_write_key; "
         "ALTER TABLE baselines DROP COLUMN write_key; "
         "ALTER TABLE check_records DROP COLUMN write_key; " +
         std::string(GetParam() == Backend::kPostgres ? "UPDATE plumb_schema SET version = 8;"
                                                       : "PRAGMA user_version = 8;"));
  Store store(s.location, StoreMode::kReadOnly);
  const std::vector<std::string> got = lines(check_store_integrity(store));
  EXPECT_EQ(got.front(), "schema: schema 8, this plumb writes 9: a writing command migrates it");
  EXPECT_EQ(got.back(), "write keys: none before schema 9");
}

}  // namespace
}  // namespace plumb::baseline
