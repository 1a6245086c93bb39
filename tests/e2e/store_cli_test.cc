// plumb list / show / export on a store written through the library.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baseline/record_json.h"
#include "baseline/recovery_store.h"
#include "baseline/store.h"
#include "common/json.h"
#include "supervise/recovery_json.h"
#include "support/set_record.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kPlumb = PLUMB_BIN;

std::string make_store() {
  const std::string path = test::temp_dir("store-cli") + "/plumb.db";
  baseline::Store store(path);
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = "before-upgrade";
  r.hosts = {"gpu-001", "gpu-002"};
  r.source = "plumb baseline";
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"nccl", "2.18.3"}, {"cann", nullptr}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "nccl"}, {"ranks", 16}};
  for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{1} << 24}) {
    comm::Row row;
    row.layer = "world";
    row.group = "world";
    row.group_ranks = 16;
    row.collective = "allreduce";
    row.dtype = "bfloat16";
    row.op = "sum";
    row.requested_bytes = row.bytes = bytes;
    row.count = bytes / 2;
    row.time_us = static_cast<double>(bytes) / 100e3;  // 100 GB/s algbw
    row.algbw_gbps = 100;
    row.busbw_gbps = 187.5;
    row.wrong = 0;
    r.rows.push_back(row);
  }
  store.save(r);
  r.label = "after-upgrade";
  store.save(r);
  return path;
}

// plumb list -n 1 and plumb show of the recovery record of ARecoveryRecordListShowExport.
const std::string kRecoveryListText =
    "    id  created               label             parts                           "
    "     holds                   source              hosts\n"
    "     3  2026-12-03T12:00:00Z  drill             recovery                        "
    "     recovery 2 failures, down 90.0 s  plumb run torchrun train.py  gpu-001\n";
const std::string kRecoveryShowText =
    "# baseline 3 · 2026-12-03T12:00:00Z · plumb run torchrun train.py · drill\n"
    "# hosts: gpu-001\n"
    "# recovery record: 2 attempt(s), 2 failure(s) (exit 1, hang 1), gave_up after "
    "1800.5 s\n"
    "failure 1: exit (exit 3) in attempt 1\n"
    "  detect 0.05 s; recovery 21.75 s: clear-cache 1.50 s, reset-device 20.25 s; "
    "backoff 5.00 s; downtime 90.00 s\n"
    "  steps lost 50 (last step 150, checkpoint 100, first step after 101); resumed "
    "after the checkpoint: yes\n"
    "failure 2: hang (no progress for 300 s) in attempt 2\n"
    "  detect 300.50 s; recovery 10.00 s: link-check 10.00 s FAILED (device 3: link "
    "status: DOWN); backoff 0.00 s; downtime -\n"
    "  steps lost - (last step 260, checkpoint -, first step after -); resumed after the "
    "checkpoint: unknown\n"
    "detect median 150.28 s, max 300.50 s; recovery median 15.88 s, max 21.75 s; "
    "downtime median 90.00 s, max 90.00 s; steps lost 50\n"
    "# plumb export 3 for the whole record\n";

TEST(StoreCli, ListShowExport) {
  const std::string db = make_store();
  test::Run list = test::run_command(kPlumb + " list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "    id  created               label             parts                           "
            "     holds                   source              hosts\n"
"     2  2026-12-02T10:00:00Z  after-upgrade     env comm                        "
            "     comm 2 rows             plumb baseline      gpu-001,gpu-002\n     1  2026-1"
            "2-02T10:00:00Z  before-upgrade    env comm                             comm 2 ro"
            "ws             plumb baseline      gpu-001,gpu-002\n");

  test::Run show = test::run_command(kPlumb + " show 1 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out,
            "# baseline 1 · 2026-12-02T10:00:00Z · plumb baseline · before-upgrade\n"
            "# hosts: gpu-001, gpu-002\n"
            "# nccl           2.18.3\n"
            "allreduce @ world: avg busbw 187.50 GB/s over 2 size(s) ≥ 1 MiB (slowest group world: "
            "187.50 GB/s)\n"
            "# 2 result row(s); plumb export 1 for all of them\n");

  test::Run exported = test::run_command(kPlumb + " export latest --db " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["schema"], "plumb.baseline/1");
  EXPECT_EQ(j["id"], 2);
  EXPECT_EQ(j["label"], "after-upgrade");
  EXPECT_EQ(j["comm"]["backend"], "nccl");
  ASSERT_EQ(j["comm"]["results"].size(), 2u);
  EXPECT_EQ(j["comm"]["results"][1]["bytes"], 1 << 24);
  EXPECT_EQ(j["comm"]["results"][1]["busbw_gbps"], 187.5);
  EXPECT_TRUE(j["env"]["versions"]["cann"].is_null());
}

// What plumb step --save stores: a record with only a step record, written here through the
// library (the step command is not needed to test the store commands).
TEST(StoreCli, AStepRecordListShowExport) {
  const std::string db = make_store();
  nlohmann::json ranks = nlohmann::json::array();
  for (int rank = 0; rank < 4; ++rank) {
    nlohmann::json steps = nlohmann::json::array();
    for (int step = 5; step < 8; ++step) {
      steps.push_back({{"step", step}, {"step_time_us", 1000.0 * step + rank},
                       {"compute_us", 700.0}, {"communication_us", 400.0},
                       {"exposed_communication_us", 100.0 + rank}, {"overlapped_us", 300.0},
                       {"memory_us", 0.0}, {"idle_us", 0.0}});
    }
    ranks.push_back({{"rank", rank}, {"steps", steps}});
  }
  baseline::Record r;
  r.created = "2026-12-03T11:00:00Z";
  r.label = "fsdp";
  r.hosts = {"gpu-001"};
  r.source = "plumb step traces/";
  r.step = {{"schema", "plumb.step/1"}, {"world_size", 8}, {"ranks", ranks},
            {"collectives", {{{"step", 5}, {"kind", "reducescatter"}, {"busbw_gbps", 42.5}}}},
            {"stragglers", {{{"step", -1}, {"rank", 3}, {"waited_on_us", 12.5}}}}};
  EXPECT_EQ(baseline::Store(db).save(r), 3);

  test::Run list = test::run_command(kPlumb + " list -n 1 --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "    id  created               label             parts                           "
            "     holds                   source              hosts\n"
"     3  2026-12-03T11:00:00Z  fsdp              step                            "
            "     step 4 ranks × 3 steps  plumb step traces/  gpu-001\n");

  test::Run show = test::run_command(kPlumb + " show 3 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out,
            "# baseline 3 · 2026-12-03T11:00:00Z · plumb step traces/ · fsdp\n"
            "# hosts: gpu-001\n"
            "# step record: 4 rank(s) × 3 step(s), world size 8\n"
            "step time: 6003.0 us (median over the steps of the slowest rank)\n"
            "exposed communication: 103.0 us (median over the steps of the slowest rank)\n"
            "compute: 700.0 us (median over the steps of the slowest rank)\n"
            "reducescatter: busbw 42.50 GB/s (median over 1 instance(s))\n"
            "straggler over the trace: rank 3 (the others waited 12.5 us on it)\n"
            "# plumb export 3 for the whole record\n");

  test::Run exported = test::run_command(kPlumb + " export 3 --db " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["schema"], "plumb.baseline/1");
  EXPECT_EQ(j["step"], r.step);
  // No comm part but the empty one plumb.baseline/1 readers expect: no results, no settings.
  EXPECT_EQ(j["comm"], nlohmann::json({{"results", nlohmann::json::array()}}));
  // and the export reads back as the same step record (plumb diff and plumb report read files so).
  const baseline::Record back = baseline::record_from_json(j, "export.json");
  EXPECT_EQ(back.step, r.step);
  EXPECT_TRUE(back.rows.empty());
  EXPECT_EQ(back.id, 3);
  // A comm record's export has no step.
  EXPECT_FALSE(nlohmann::json::parse(test::run_command(kPlumb + " export 1 --db " + db).out)
                   .contains("step"));
}

// The holds column: counts in the singular when one, a record holding both kinds says both, and
// one that measured nothing says so.
TEST(StoreCli, ListSaysWhatEachRecordHolds) {
  const std::string db = test::temp_dir("store-cli-holds") + "/plumb.db";
  baseline::Store store(db);
  baseline::Record comm;
  comm.created = "2026-12-03T11:00:00Z";
  comm.source = "plumb comm";
  comm.rows.resize(1);
  comm.rows[0].layer = comm.rows[0].group = "world";
  comm.rows[0].collective = "allreduce";
  baseline::Record step = comm;
  step.rows.clear();
  step.source = "plumb step";
  const nlohmann::json one_step = {{"step", 4}, {"step_time_us", 1000.0}};
  step.step = {{"schema", "plumb.step/1"}, {"world_size", 1},
               {"ranks", {{{"rank", 0}, {"steps", {one_step}}}}}};
  baseline::Record both = step;
  both.rows = comm.rows;
  baseline::Record empty = comm;
  empty.rows.clear();
  for (const baseline::Record* r : {&comm, &step, &both, &empty}) store.save(*r);

  test::Run list = test::run_command(kPlumb + " list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "    id  created               label             parts                           "
            "     holds                   source              hosts\n"
"     4  2026-12-03T11:00:00Z  -                 -                               "
            "     comm 0 rows             plumb comm\n     3  2026-12-03T11:00:00Z  -        "
            "         comm step                            comm 1 row · step 1 rank × 1 step "
            " plumb step\n     2  2026-12-03T11:00:00Z  -                 step               "
            "                  step 1 rank × 1 step    plumb step\n     1  2026-12-03T11:00:0"
            "0Z  -                 comm                                 comm 1 row           "
            "   plumb comm\n");
}

// What plumb run --save stores, written here through the library: a crash recovered in full, then
// a hang whose link check failed and after which the job never progressed (it gave up).
TEST(StoreCli, ARecoveryRecordListShowExport) {
  const std::string db = make_store();
  supervise::RecoveryBaseline b;
  b.command = {"torchrun", "train.py"};
  b.host = "gpu-001";
  b.wall_seconds = 1800.5;
  b.attempts = 2;
  b.result = "gave_up";
  b.failures_by_kind = {{"exit", 1}, {"hang", 1}};
  supervise::Recovery crash;
  crash.attempt = 1;
  crash.kind = "exit";
  crash.detail = "exit 3";
  crash.detect_seconds = 0.05;
  crash.steps = {{"clear-cache", 1.5, true, ""}, {"reset-device", 20.25, true, "reset 8 devices"}};
  crash.backoff_seconds = 5;
  crash.restart_to_first_step_seconds = 63.2;
  crash.downtime_seconds = 90;
  crash.last_step = 150;
  crash.checkpoint_step = 100;
  crash.first_step_after = 101;
  crash.steps_lost = 50;
  crash.resumed_after_checkpoint = true;
  supervise::Recovery hang;
  hang.attempt = 2;
  hang.kind = "hang";
  hang.detail = "no progress for 300 s";
  hang.detect_seconds = 300.5;
  hang.steps = {{"link-check", 10, false, "device 3: link status: DOWN"}};
  hang.last_step = 260;
  b.recoveries = {crash, hang};
  baseline::Record r = baseline::recovery_record(b, "drill");
  r.created = "2026-12-03T12:00:00Z";
  EXPECT_EQ(baseline::Store(db).save(r), 3);

  test::Run list = test::run_command(kPlumb + " list -n 1 --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, kRecoveryListText);

  test::Run show = test::run_command(kPlumb + " show 3 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out, kRecoveryShowText);

  test::Run exported = test::run_command(kPlumb + " export 3 --db " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["recovery"], supervise::recovery_to_json(b));
  EXPECT_FALSE(j.contains("step"));
  const baseline::Record back = baseline::record_from_json(j, "export.json");
  EXPECT_EQ(back.recovery, r.recovery);
  // A comm record's export has no recovery.
  EXPECT_FALSE(nlohmann::json::parse(test::run_command(kPlumb + " export 1 --db " + db).out)
                   .contains("recovery"));
  // Commands that draw comm measurements refuse it in one line.
  test::Run report = test::run_command(kPlumb + " report 3 --db " + db);
  EXPECT_EQ(report.exit_code, 2);
  EXPECT_EQ(report.err.rfind("plumb: error: baseline 3 holds a recovery record (plumb run), not "
                             "comm measurements: ", 0), 0u) << report.err;
}

TEST(StoreCli, Errors) {
  const std::string dir = test::temp_dir("store-cli-errors");
  {
    baseline::Store created(dir + "/plumb.db");  // what plumb import of an empty log leaves
  }
  test::Run empty = test::run_command(kPlumb + " show --db " + dir + "/plumb.db");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "plumb: error: " + dir + "/plumb.db: the store holds no baseline yet\n");
  test::Run missing = test::run_command(kPlumb + " show --db " + dir + "/missing.db");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "plumb: error: " + dir + "/missing.db: no store there (plumb baseline "
                         "and plumb import create one; --db names another)\n");
  test::Run bad = test::run_command(kPlumb + " export abc --db " + dir + "/plumb.db");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "plumb: error: 'abc' is not a baseline id: expected a positive number or "
                     "'latest'\n");
  test::write_file(dir + "/garbage.db", std::string(4096, 'x'));
  test::Run garbage = test::run_command(kPlumb + " list --db " + dir + "/garbage.db");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_EQ(garbage.err, "plumb: error: " + dir +
                             "/garbage.db: not a plumb store (not an SQLite database, or "
                             "unreadable)\n");
}

// Issue 29: baseline sets beside older records. plumb list names the parts each holds (a set's
// missing part marked "-"), plumb show prints a section per part, the missing one with its reason.
TEST(StoreCli, BaselineSetsListAndShow) {
  const std::string db = make_store();  // 1, 2: comm baselines
  baseline::Store store(db);
  EXPECT_EQ(store.save(test::full_set("clean")), 3);
  EXPECT_EQ(store.save(test::set_without_recovery("no-drill")), 4);
  test::Run list = test::run_command(kPlumb + " list -n 2 --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "    id  created               label             parts                           "
            "     holds                   source              hosts\n"
            "     4  2026-12-03T12:00:00Z  no-drill          topo env comm step memory -recovery "
            "-serve  comm 2 rows · step 2 ranks × 2 steps  plumb baseline --workload  gpu-001\n"
            "     3  2026-12-03T12:00:00Z  clean             topo env comm step memory recovery "
            "serve  comm 2 rows · step 2 ranks × 2 steps · recovery 2 failures, down 25.4 s · "
            "serve 3 runs  plumb baseline --workload  gpu-001\n");

  test::Run show = test::run_command(kPlumb + " show 4 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  // The whole text is checked in tests/report/set_reporter_test.cc; here its sections in order.
  size_t at = 0;
  for (const char* heading : {"## topology\n", "## versions\n", "## communication\n",
                              "## model step\n", "## memory\n", "## recovery\n",
                              "## serving\n"}) {
    const size_t next = show.out.find(heading, at);
    ASSERT_NE(next, std::string::npos) << heading << show.out;
    at = next;
  }
  EXPECT_NE(show.out.find("## recovery\nrecovery: missing — --skip recovery: the drill was not "
                          "run\n## serving\nserving: missing — not asked for: no --serve-url\n"
                          "# plumb export 4 for the whole set; plumb report 4 for its page\n"),
            std::string::npos)
      << show.out;
  test::Run full = test::run_command(kPlumb + " show 3 --db " + db);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_NE(full.out.find("## recovery\n# recovery record: 3 attempt(s), 2 failure(s) (hang 1, "
                          "signal 1), finished after 600.0 s; a drill of 2 fault(s)\n"),
            std::string::npos)
      << full.out;
  EXPECT_EQ(full.out.find("missing"), std::string::npos) << full.out;

  // A set that skipped comm claims no "comm 0 rows" among what it holds.
  baseline::Record memory_only = test::set_without_recovery("memory-only");
  memory_only.rows.clear();
  memory_only.comm = nullptr;
  memory_only.step = nullptr;
  memory_only.missing["comm"] = "skipped (--skip comm)";
  memory_only.missing["step"] = "skipped (--skip model)";
  EXPECT_EQ(store.save(memory_only), 5);
  test::Run short_list = test::run_command(kPlumb + " list -n 1 --db " + db);
  ASSERT_EQ(short_list.exit_code, 0) << short_list.err;
  EXPECT_EQ(short_list.out.substr(short_list.out.find('\n') + 1),
            "     5  2026-12-03T12:00:00Z  memory-only       topo env -comm -step memory -recovery"
            " -serve                          plumb baseline --workload  gpu-001\n");
}

}  // namespace
}  // namespace plumb

namespace plumb {
namespace {

TEST(ImportCli, NcclTestsLogsIntoTheStore) {
  const std::string db = test::temp_dir("import-cli") + "/plumb.db";
  const std::string logs = std::string(PLUMB_TEST_FIXTURES) + "/nccl-tests/";
  test::Run two = test::run_command(std::string(PLUMB_BIN) + " import " + logs +
                                    "alltoall_sendrecv_4ranks_2nodes_mid2025.log --label cluster00 --db " + db);
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out, "1\n2\n");  // one record per test in the file
  EXPECT_NE(two.err.find("plumb: imported sendrecv (10 rows, 4 ranks) from "), std::string::npos)
      << two.err;
  test::Run exported = test::run_command(std::string(PLUMB_BIN) + " export 2 --db " + db);
  const auto j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["label"], "cluster00");
  EXPECT_EQ(j["hosts"], nlohmann::json({"cnode4-007", "cnode4-012"}));
  EXPECT_EQ(j["comm"]["imported"]["line"], 28);
  EXPECT_EQ(j["comm"]["results"][0]["collective"], "sendrecv");
  EXPECT_TRUE(j["comm"]["results"][0]["p50_us"].is_null());  // unknown, not 0

  test::Run nameless = test::run_command(std::string(PLUMB_BIN) + " import " + logs +
                                         "all_gather_12xV100_pre2.13_failed.log --db " + db);
  EXPECT_EQ(nameless.exit_code, 2);
  EXPECT_EQ(nameless.err, "plumb: error: " + logs +
                              "all_gather_12xV100_pre2.13_failed.log:20: the log does not name its "
                              "collective (nccl-tests before 2.13 prints no 'Collective test "
                              "starting' line); pass --collective\n");
  test::Run named = test::run_command(std::string(PLUMB_BIN) + " import " + logs +
                                      "all_gather_12xV100_pre2.13_failed.log --collective all_gather --db " + db);
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out, "3\n");
}

// Issue 28: a log that says its results are wrong, or that was cut short, is imported with a
// warning naming the line, and list, show and export mark the record.
TEST(ImportCli, WrongResultsAndACutLogAreKeptMarkedAndWarned) {
  const std::string dir = test::temp_dir("import-validity");
  const std::string db = dir + "/plumb.db";
  const std::string log = test::read_file(std::string(PLUMB_TEST_FIXTURES) +
                                          "/nccl-tests/all_reduce_8xH100_v2.17.8.log");
  // Out-of-bounds, and cut after the third of its ten sizes (line 22).
  std::string cut = log.substr(0, log.find("   268435456"));
  cut.replace(cut.find("       0   182.88"), 8, "       9");
  test::write_file(dir + "/cut.log", cut);
  const test::Run imported =
      test::run_command(std::string(PLUMB_BIN) + " import " + dir + "/cut.log --db " + db);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.out, "1\n");
  EXPECT_EQ(imported.err,
            "plumb: warning: " + dir + "/cut.log:20: wrong results: 1 of 3 rows have wrong "
            "elements in the out-of-place half, the first at 32 MiB (#wrong 9)\n"
            "plumb: warning: " + dir + "/cut.log:22: incomplete: the test ends without "
            "nccl-tests' '# Avg bus bandwidth' line (the run stopped before its summary): the "
            "sweep ended at 128 MiB of 16 GiB; missing 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 "
            "GiB, 16 GiB (7 sizes)\n"
            "plumb: imported allreduce (3 rows, 8 ranks) from " + dir + "/cut.log:2 as baseline "
            "1, marked WRONG RESULTS · INCOMPLETE: sweep ended at 128 MiB of 16 GiB\n");

  const test::Run list = test::run_command(std::string(PLUMB_BIN) + " list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("comm 3 rows · WRONG RESULTS · INCOMPLETE: sweep ended at 128 MiB of "
                          "16 GiB  " + dir + "/cut.log:2 (nccl-tests 2.17.8)"),
            std::string::npos) << list.out;
  const test::Run show = test::run_command(std::string(PLUMB_BIN) + " show 1 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const size_t second = show.out.find('\n') + 1;
  EXPECT_EQ(show.out.substr(second, show.out.find("# hosts") - second),
            "WRONG RESULTS · INCOMPLETE: sweep ended at 128 MiB of 16 GiB\n"
            "  " + dir + "/cut.log:20: wrong results: 1 of 3 rows have wrong elements in the "
            "out-of-place half, the first at 32 MiB (#wrong 9)\n"
            "  " + dir + "/cut.log:22: incomplete: the test ends without nccl-tests' '# Avg bus "
            "bandwidth' line (the run stopped before its summary): the sweep ended at 128 MiB of "
            "16 GiB; missing 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB, 16 GiB (7 sizes)\n");
  const test::Run exported = test::run_command(std::string(PLUMB_BIN) + " export 1 --db " + db);
  const auto j = parse_json(exported.out, "plumb export");
  EXPECT_EQ(j["validity"]["valid"], false);
  EXPECT_EQ(j["validity"]["wrong_rows"], 1);
  EXPECT_EQ(j["validity"]["issues"][1]["kind"], "incomplete");
  EXPECT_EQ(j["validity"]["issues"][1]["missing_count"], 7);
}

// Three logs of one test make one record, the logs' spread its noise (docs/import.md).
TEST(ImportCli, SeveralLogsOfOneTestMakeOneRecord) {
  const std::string dir = test::temp_dir("import-logs");
  const std::string db = dir + "/plumb.db";
  const std::string log = test::read_file(std::string(PLUMB_TEST_FIXTURES) +
                                          "/nccl-tests/all_reduce_8xH100_v2.17.8.log");
  std::string files;
  for (const std::string busbw : {"321.10", "288.99", "385.32"}) {
    std::string copy = log;
    copy.replace(copy.find("321.10"), 6, busbw);
    const std::string path = dir + "/run" + busbw + ".log";
    test::write_file(path, copy);
    files += " " + path;
  }
  const test::Run r = test::run_command(std::string(PLUMB_BIN) + " import" + files + " --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(r.err, "plumb: imported allreduce (10 rows, 8 ranks) from " + dir +
                       "/run321.10.log:2 and 2 more log(s) as baseline 1\n");
  const auto j = parse_json(
      test::run_command(std::string(PLUMB_BIN) + " export 1 --db " + db).out, "plumb export");
  EXPECT_EQ(j["comm"]["settings"]["rounds"], 3);
  EXPECT_EQ(j["comm"]["imported"]["files"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["comm"]["results"][0]["busbw_gbps"].get<double>(), 321.10);
  EXPECT_NEAR(j["comm"]["results"][0]["busbw_spread"].get<double>(), 32.11 / 321.10, 1e-9);
  EXPECT_TRUE(j["comm"]["results"][1]["busbw_spread"].get<double>() == 0);  // the logs agree
  const test::Run other = test::run_command(
      std::string(PLUMB_BIN) + " import" + files + " " + std::string(PLUMB_TEST_FIXTURES) +
      "/nccl-tests/alltoall_sendrecv_4ranks_2nodes_mid2025.log --db " + db);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(other.err, "plumb: error: " + std::string(PLUMB_TEST_FIXTURES) +
                           "/nccl-tests/alltoall_sendrecv_4ranks_2nodes_mid2025.log: 2 test(s) "
                           "where " + dir + "/run321.10.log has 1: several logs make one record "
                           "only of the same test\n");
}

}  // namespace
}  // namespace plumb
