// Issue 10, groups 1, 2, 10 and 11: nothing lost. Outputs on a full disk or a killed run leave the
// previous file as it was; an output that is the store or an input is refused before any work;
// reading commands never create or change a store; imported bytes never drive the terminal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "baseline/store.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

namespace fs = std::filesystem;
using test::run_command;

const std::string kPlumb = PLUMB_BIN;
const std::string kMem = std::string(PLUMB_TEST_FIXTURES) + "/mem/";
const std::string kPlan = " plan --model megatron-1t --hardware h100-sxm --devices 16384 --tp 8 "
                          "--pp 32 --vpp 2 --zero 1";

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

baseline::Record sample_record(const std::string& label, int sizes) {
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = label;
  r.hosts = {"gpu-001"};
  r.source = "plumb baseline";
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "mpi"}, {"ranks", 2}};
  for (int i = 0; i < sizes; ++i) {
    comm::Row row;
    row.layer = row.group = "world";
    row.group_ranks = 2;
    row.collective = "allreduce";
    row.dtype = "float32";
    row.op = "sum";
    row.requested_bytes = row.bytes = uint64_t{1024} << (i % 20);
    row.count = row.bytes / 4;
    row.time_us = 10.0 + i;
    row.algbw_gbps = 5;
    row.busbw_gbps = 5;
    row.wrong = 0;
    r.rows.push_back(row);
  }
  return r;
}

std::string make_store(const std::string& dir, int sizes = 4) {
  const std::string path = dir + "/s.db";
  baseline::Store store(path);
  store.save(sample_record("one", sizes));
  return path;
}

// A 200 KiB tmpfs, or nothing where this machine may not mount (then the test says so).
struct TinyDisk {
  std::string dir;
  bool mounted = false;
  explicit TinyDisk(const std::string& name) : dir(test::temp_dir(name)) {
    mounted = mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=200k") == 0;
  }
  ~TinyDisk() {
    if (mounted) umount2(dir.c_str(), MNT_DETACH);
  }
};

TEST(OutputSafety, EveryJsonOutputOnAFullDeviceFailsLoudly) {
  const std::string dir = test::temp_dir("full-device");
  const std::string db = make_store(dir);
  const std::string cases[] = {
      kPlumb + kPlan + " --json /dev/full",
      kPlumb + " diff 1 1 --db " + db + " --json /dev/full",
      kPlumb + " mem analyze " + kMem + "leak.pickle --json /dev/full",
      kPlumb + " mem replay " + kMem + "leak.pickle --json /dev/full",
      kPlumb + " export 1 --db " + db + " -o /dev/full",
  };
  for (const std::string& c : cases) {
    const test::Run r = run_command(c);
    EXPECT_EQ(r.exit_code, 2) << c << "\n" << r.err;
    EXPECT_NE(r.err.find("/dev/full: writing failed: No space left on device"), std::string::npos)
        << c << "\n" << r.err;
  }
}

TEST(OutputSafety, StandardOutputOnAFullDeviceFailsLoudly) {
  const std::string db = make_store(test::temp_dir("full-stdout"));
  // In a subshell: run_command's own redirection of standard output would come last otherwise.
  const test::Run r = run_command("(" + kPlumb + " export 1 --db " + db + " > /dev/full)");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: standard output: writing failed: No space left on device\n");
  const test::Run plan = run_command("(" + kPlumb + kPlan + " > /dev/full)");
  EXPECT_EQ(plan.exit_code, 2);
}

TEST(OutputSafety, AFullDiskLeavesThePreviousFileAndNoPartialOne) {
  TinyDisk disk("tiny-disk");
  if (!disk.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): " << std::strerror(errno);
  const std::string db = make_store(test::temp_dir("tiny-disk-store"), 2000);
  const std::string target = disk.dir + "/export.json";
  test::write_file(target, "{\"previous\": true}\n");
  const test::Run r = run_command(kPlumb + " export 1 --db " + db + " -o " + target);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: --output " + target +
                       ": writing failed: No space left on device; the previous file, if any, is "
                       "unchanged\n");
  EXPECT_EQ(test::read_file(target), "{\"previous\": true}\n");
  EXPECT_EQ(entries(disk.dir), std::vector<std::string>{"export.json"});
}

// `plumb comm --json F` killed mid-run: F keeps its previous content, and the rows measured are
// in F.partial (docs/outputs.md). SIGTERM also removes the temporary file; SIGKILL cannot be
// caught and leaves it (a dot-file beside F), never F truncated.
TEST(OutputSafety, AKilledCommKeepsThePreviousJson) {
  for (const int signal : {SIGTERM, SIGKILL}) {
    const std::string dir = test::temp_dir("killed-comm-" + std::to_string(signal));
    const std::string json = dir + "/comm.json";
    test::write_file(json, "previous\n");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execl(PLUMB_BIN, PLUMB_BIN, "comm", "-b", "1M", "-e", "64M", "-n", "200", "--rounds", "50",
            "--json", json.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Wait until the temporary output exists: the sweep has started.
    for (int i = 0; i < 200 && entries(dir).size() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(pid, signal);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "signal " << signal;
    EXPECT_EQ(test::read_file(json), "previous\n") << "signal " << signal;
    if (signal == SIGTERM) {
      EXPECT_EQ(entries(dir), (std::vector<std::string>{"comm.json", "comm.json.partial"}));
    }
    EXPECT_NE(test::read_file(json + ".partial").find("\"complete\": false"), std::string::npos);
  }
}

TEST(OutputSafety, AnOutputThatIsTheStoreOrAnInputIsRefusedBeforeAnyWork) {
  const std::string dir = test::temp_dir("overlap");
  const std::string db = make_store(dir);
  const std::string before = test::read_file(db);
  const struct {
    std::string command;
    std::string message;
  } cases[] = {
      {" export 1 --db " + db + " -o " + db,
       "--output " + db + ": is also the store (" + db + ")"},
      {" report 1 --db " + db + " -o " + db, "-o " + db + ": is also the store (" + db + ")"},
      {" diff 1 1 --db " + db + " --json " + db, "--json " + db + ": is also the store (" + db + ")"},
  };
  for (const auto& c : cases) {
    const test::Run r = run_command(kPlumb + c.command);
    EXPECT_EQ(r.exit_code, 2) << c.command;
    EXPECT_EQ(r.err, "plumb: error: " + c.message +
                         "; writing it would destroy what is read: choose another file\n")
        << c.command;
    EXPECT_EQ(test::read_file(db), before) << c.command;
  }
  fs::copy_file(kMem + "leak.pickle", dir + "/x.pickle");
  const std::string trace = test::read_file(dir + "/x.pickle");
  const test::Run own = run_command(kPlumb + " mem report " + dir + "/x.pickle -o " + dir + "/x.pickle");
  EXPECT_EQ(own.exit_code, 2);
  EXPECT_EQ(own.err, "plumb: error: -o " + dir + "/x.pickle: is also the trace FILE (" + dir +
                         "/x.pickle); writing it would destroy what is read: choose another file\n");
  EXPECT_EQ(test::read_file(dir + "/x.pickle"), trace);
  const test::Run twice = run_command(kPlumb + " comm -b 1K -e 1K --json " + dir + "/r --csv " + dir + "/r");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--json " + dir + "/r and --csv " + dir +
                           "/r: the same file for two outputs; give each its own"),
            std::string::npos)
      << twice.err;
}

TEST(StoreReads, AMistypedPathCreatesNothing) {
  const std::string dir = test::temp_dir("store-mistyped");
  const test::Run r = run_command(kPlumb + " list --db " + dir + "/typo/plumb.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + dir + "/typo/plumb.db: no store there (plumb baseline and "
                   "plumb import create one; --db names another)\n");
  EXPECT_TRUE(entries(dir).empty());
}

TEST(StoreReads, AForeignSqliteFileIsRefusedAndLeftAlone) {
  const std::string dir = test::temp_dir("store-foreign");
  const std::string db = dir + "/other.db";
  ASSERT_EQ(run_command("python3 -c \"import sqlite3; c = sqlite3.connect('" + db +
                        "'); c.execute('CREATE TABLE baselines (x)'); c.execute('CREATE TABLE "
                        "metrics (y)'); c.commit()\"")
                .exit_code,
            0);
  const std::string before = test::read_file(db);
  for (const std::string command : {" list", " import /dev/null --format nccl-tests"}) {
    const test::Run r = run_command(kPlumb + command + " --db " + db);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_EQ(r.err, "plumb: error: " + db + ": an SQLite database, but not a plumb store (it has "
                     "tables of its own: baselines, metrics); give --db a plumb store or a new "
                     "file\n")
        << command;
    EXPECT_EQ(test::read_file(db), before) << command;
  }
}

TEST(StoreReads, NotSqliteAtAll) {
  const std::string dir = test::temp_dir("store-garbage");
  test::write_file(dir + "/garbage.db", std::string(4096, 'x'));
  const test::Run r = run_command(kPlumb + " list --db " + dir + "/garbage.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "plumb: error: " + dir +
                       "/garbage.db: not a plumb store (not an SQLite database, or unreadable)\n");
}

// SQLite's reader protocol may leave its -wal and -shm files beside a WAL store; the store itself
// is not written, and nothing else appears.
TEST(StoreReads, ReadingNeverWritesTheStore) {
  const std::string dir = test::temp_dir("store-read-only");
  const std::string db = make_store(dir);
  const std::string bytes = test::read_file(db);
  for (const std::string command : {" list", " show 1", " export 1", " diff 1 1", " report 1 -o -"}) {
    EXPECT_EQ(run_command(kPlumb + command + " --db " + db).exit_code, 0) << command;
  }
  EXPECT_EQ(test::read_file(db), bytes);
  for (const std::string& name : entries(dir)) {
    EXPECT_TRUE(name == "s.db" || name == "s.db-wal" || name == "s.db-shm") << name;
  }
}

TEST(StoreReads, AStoreOnAReadOnlyFileSystemCanBeListed) {
  TinyDisk disk("store-ro-fs");
  if (!disk.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  make_store(disk.dir);
  ASSERT_EQ(mount("tmpfs", disk.dir.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr), 0);
  const test::Run r = run_command(kPlumb + " list --db " + disk.dir + "/s.db");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("     1  2026-12-02T10:00:00Z  one"), std::string::npos) << r.out;
}

TEST(StoreReads, WithoutHomeTheStoreIsNotInTheCurrentFolder) {
  const std::string dir = test::temp_dir("store-no-home");
  const test::Run r = run_command("cd " + dir + " && env -u HOME -u XDG_DATA_HOME " + kPlumb +
                                  " list");
  EXPECT_TRUE(entries(dir).empty());
  EXPECT_EQ(r.err.find(dir), std::string::npos) << r.err;
  if (r.exit_code != 0) {
    EXPECT_NE(r.err.find("/.local/share/plumb/plumb.db"), std::string::npos) << r.err;
  }
}

// Fills a file system until a write fails: what is left for the next writer is (almost) nothing.
void fill(const std::string& dir) {
  std::FILE* f = std::fopen((dir + "/filler").c_str(), "w");
  const std::string block(1024, 'f');
  while (f != nullptr && std::fwrite(block.data(), 1, block.size(), f) == block.size() &&
         std::fflush(f) == 0) {
  }
  if (f != nullptr) std::fclose(f);
}

TEST(StoreWrites, AnImportThatCannotCommitPrintsNoIdAndKeepsTheStore) {
  TinyDisk disk("import-full");
  if (!disk.mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const std::string db = make_store(disk.dir);
  fill(disk.dir);
  const std::string log = std::string(PLUMB_TEST_FIXTURES) +
                          "/nccl-tests/alltoall_sendrecv_4ranks_2nodes_mid2025.log";
  const test::Run r = run_command(kPlumb + " import " + log + " --db " + db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");  // no id of a record that was rolled back
  EXPECT_NE(r.err.find("plumb: error: " + db), std::string::npos) << r.err;
  fs::remove(disk.dir + "/filler");
  const test::Run list = run_command(kPlumb + " list --db " + db);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("     1  2026-12-02T10:00:00Z  one"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("     2  "), std::string::npos) << list.out;
}

TEST(StoreWrites, AnImportOfImpossibleNumbersStoresNothing) {
  const std::string dir = test::temp_dir("import-impossible");
  const std::string db = make_store(dir);
  const std::string bytes = test::read_file(db);
  const std::string log = std::string(PLUMB_TEST_FIXTURES) + "/nccl-tests/all_reduce_8xH100_v2.17.8.log";
  std::string negative = test::read_file(log);
  const size_t at = negative.find("   182.87  183.49");  // the first row's out-of-place time
  ASSERT_NE(at, std::string::npos);
  negative.replace(at, 9, "  -182.87");
  test::write_file(dir + "/negative.log", negative);
  const test::Run bad = run_command(kPlumb + " import " + dir + "/negative.log --db " + db);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find(dir + "/negative.log:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("expected a time above 0"), std::string::npos) << bad.err;
  EXPECT_EQ(test::read_file(db), bytes);
}

TEST(TerminalEscapes, ListShowAndErrorsEscapeImportedBytes) {
  const std::string dir = test::temp_dir("escapes");
  const std::string db = dir + "/s.db";
  {
    baseline::Store store(db);
    baseline::Record r = sample_record("\x1b]0;owned\x07\x1b[2J", 1);
    r.hosts = {"evil\x1b[31mhost"};
    // A C1 control (CSI, as UTF-8) and a byte that is not UTF-8: the store keeps U+FFFD for the
    // second (strings.h valid_utf8_text), the listing escapes the first.
    r.source = "nccl-tests \xc2\x9b\xff.log";
    store.save(r);
  }
  const test::Run list = run_command(kPlumb + " list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.find('\x1b'), std::string::npos);
  EXPECT_NE(list.out.find("\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("evil\\x1b[31mhost"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("nccl-tests \\u009b\xEF\xBF\xBD.log"), std::string::npos) << list.out;
  const test::Run show = run_command(kPlumb + " show 1 --db " + db);
  EXPECT_EQ(show.out.find('\x1b'), std::string::npos) << show.out;
  const test::Run error = run_command(kPlumb + " show $(printf 'x\\033[31m') --db " + db);
  EXPECT_EQ(error.exit_code, 2);
  EXPECT_EQ(error.err, "plumb: error: 'x\\x1b[31m' is not a baseline id: expected a positive "
                       "number or 'latest'\n");
}

}  // namespace
}  // namespace plumb
