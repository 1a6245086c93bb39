// Issue 33, "what it must show": plumb store copy from an SQLite store of every record kind into
// PostgreSQL, then plumb diff of two copied records, gives the same output as on the SQLite store;
// no password appears in any output. And plumb store check's lines on a good and a damaged store.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "baseline/store.h"
#include "common/sqlite.h"
#include "supervise/recovery_json.h"
#include "support/postgres.h"
#include "support/set_record.h"
#include "support/step_record.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kPlumb = PLUMB_BIN;

baseline::Record serve_record(const std::string& label, double tpot_scale) {
  baseline::Record r;
  r.created = "2026-12-07T04:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = "plumb serve bench";
  r.serve = test::serve_part(tpot_scale);
  return r;
}

baseline::Record recovery_record() {
  baseline::Record r;
  r.created = "2026-12-03T12:00:00Z";
  r.label = "drill";
  r.hosts = {"gpu-001"};
  r.source = "plumb run torchrun train.py";
  r.recovery = supervise::recovery_to_json(test::set_recovery());
  return r;
}

// Ids 1-10: two of each kind that plumb diff compares, a recovery record, a set with missing parts.
std::string every_kind_store() {
  const std::string path = test::temp_dir("store-copy-cli") + "/plumb.db";
  baseline::Store store(path);
  for (const baseline::Record& r :
       {test::comm_record("before", 2.5), test::comm_record("after", 2.0), test::step_only_record("fsdp"),
        test::step_only_record("fsdp-again"), test::full_set("clean", 8, 2.5),
        test::full_set("slower", 64, 2.0), serve_record("vllm", 1.0), serve_record("vllm-2", 1.5),
        recovery_record(), test::set_without_recovery("no-drill")}) {
    store.save(r);
  }
  baseline::CheckEntry pass;
  pass.created = "2026-12-04T08:00:00Z";
  pass.host = "gpu-001";
  pass.kind = "node";
  pass.status = "ok";
  pass.record = {{"schema", "plumb.check/1"}};
  store.save_check(pass);
  return path;
}

TEST(StoreCopyCli, IntoPostgresThenDiffSaysTheSame) {
  test::Postgres* pg = test::Postgres::get();
  if (pg == nullptr) GTEST_SKIP() << test::Postgres::why();
  const std::string file = every_kind_store();
  const std::string db = pg->create_database("copy-cli");
  const std::string url = pg->url(db, "plumb_pw", test::kPostgresPassword);
  const std::string masked = "postgresql://plumb_pw:***@/" + db + "?host=" + pg->dir();
  const std::vector<test::Run> runs = {
      test::run_command(fmt::format("{} store copy {} '{}'", kPlumb, file, url)),
      test::run_command(fmt::format("{} store copy {} '{}'", kPlumb, file, url)),
      test::run_command(fmt::format("{} store copy '{}' {}", kPlumb, url, file))};
  ASSERT_EQ(runs[0].exit_code, 0) << runs[0].err;
  EXPECT_EQ(runs[0].out, fmt::format("copied 10 records and 1 check passes from {} to {}\n", file,
                                     masked));
  EXPECT_EQ(runs[0].err, "");  // stderr is no terminal: no progress line
  EXPECT_EQ(runs[1].out, fmt::format("copied 0 records (10 already there) and 0 check passes (1 "
                                     "already there) from {} to {}\n", file, masked));
  EXPECT_EQ(runs[2].out, fmt::format("copied 0 records (10 already there) and 0 check passes (1 "
                                     "already there) from {} to {}\n", masked, file));
  std::vector<test::Run> all = runs;
  for (const auto& [a, b] : {std::pair{1, 2}, {3, 4}, {5, 6}, {7, 8}, {2, 1}}) {
    const test::Run on_file = test::run_command(fmt::format("{} diff {} {} --db {}", kPlumb, a, b, file));
    const test::Run on_pg = test::run_command(fmt::format("{} diff {} {} --db '{}'", kPlumb, a, b, url));
    EXPECT_FALSE(on_file.out.empty()) << a << " " << b << ": " << on_file.err;
    EXPECT_EQ(on_pg.out, on_file.out) << "plumb diff " << a << " " << b;
    EXPECT_EQ(on_pg.exit_code, on_file.exit_code) << "plumb diff " << a << " " << b;
    all.push_back(on_pg);
  }
  const test::Run check = test::run_command(fmt::format("{} store check --db '{}'", kPlumb, url));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(check.out, masked + ":\n"
                       "  schema: ok (version 9)\n"
                       "  rows of missing baselines: ok\n"
                       "  records load: ok (10 baselines, 1 check passes)\n"
                       "  write keys: ok\n");
  all.push_back(check);
  for (const test::Run& r : all) {
    EXPECT_EQ(r.out.find(test::kPostgresPassword), std::string::npos) << r.out;
    EXPECT_EQ(r.err.find(test::kPostgresPassword), std::string::npos) << r.err;
  }
}

TEST(StoreCopyCli, BadInputIsOneLineAndExit2) {
  const std::string dir = test::temp_dir("store-copy-bad");
  const test::Run missing = test::run_command(fmt::format("{} store copy {}/none.db {}/to.db", kPlumb, dir, dir));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, fmt::format("plumb: error: {}/none.db: no store there (plumb baseline and "
                                     "plumb import create one; --db names another)\n", dir));
  { baseline::Store create(dir + "/a.db"); }
  const test::Run same = test::run_command(fmt::format("{} store copy {}/a.db {}/./a.db", kPlumb, dir, dir));
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_EQ(same.err, fmt::format("plumb: error: {}/a.db: plumb store copy needs two stores, and "
                                  "FROM and TO name the same one\n", dir));
  const test::Run away = test::run_command(
      fmt::format("{} store copy {}/a.db postgresql://plumb:S3cret-x@127.0.0.1:1/plumb", kPlumb, dir));
  EXPECT_EQ(away.exit_code, 2);
  EXPECT_EQ(away.err, "plumb: error: postgresql://plumb:***@127.0.0.1:1/plumb: cannot connect to "
                      "the store: connection to server at \"127.0.0.1\", port 1 failed: Connection "
                      "refused Is the server running on that host and accepting TCP/IP "
                      "connections?\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/to.db"));
}

TEST(StoreCheckCli, AGoodAndADamagedStore) {
  const std::string file = every_kind_store();
  const test::Run good = test::run_command(fmt::format("{} store check --db {}", kPlumb, file));
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.out, file + ":\n"
                      "  schema: ok (version 9)\n"
                      "  sqlite integrity_check: ok\n"
                      "  sqlite foreign_key_check: ok\n"
                      "  rows of missing baselines: ok\n"
                      "  records load: ok (10 baselines, 1 check passes)\n"
                      "  write keys: ok\n");
  Database(file).exec("DELETE FROM baselines WHERE id = 2; "  // its rows stay: foreign keys off
                      "UPDATE baselines SET topo = 'garbage' WHERE id = 5;");
  const test::Run bad = test::run_command(fmt::format("{} store check --db {}", kPlumb, file));
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_EQ(bad.out, file + ":\n"
                     "  schema: ok (version 9)\n"
                     "  sqlite integrity_check: ok\n"
                     "  sqlite foreign_key_check: comm_results: a row refers to a baselines row "
                     "that is not there\n"
                     "  sqlite foreign_key_check: comm_results: a row refers to a baselines row "
                     "that is not there\n"
                     "  rows of missing baselines: comm_results: 2 row(s) of baseline 2, which is "
                     "not in the store\n"
                     "  records load: baseline 5: topo: not JSON\n"
                     "  write keys: ok\n");
}

}  // namespace
}  // namespace plumb
