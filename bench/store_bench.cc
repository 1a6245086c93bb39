// bench/store_bench: the store's write rate and its read latency, SQLite and PostgreSQL (issue 33).
//
// Writes: records per second from 1 writer and from 32 (threads, a connection each, one
// transaction per record, as 32 nodes' `plumb check --store` or baselines would), against the
// floor of the same backend measured in the same run: one transaction per record inserting the
// record's JSON as one row of one table (what no store can do with less). Alternated floor, plumb,
// floor, plumb... --runs times, each on a new store; the figure is the median of per-run ratios.
//
// Reads: `plumb list`, `plumb show ID` and `plumb diff A B` (the real commands, a process each, as
// a user runs them) on a store of --records records (100,000 by default), against the backend's
// own client giving the same rows (sqlite3 / psql: a process each, the same SELECTs), alternated
// the same way.
//
// PostgreSQL: a throwaway server (tests/support/pg_cluster.sh) in a folder of its own, with
// fsync on (the tests' servers run without it); SQLite: files in the temporary folder, the
// store's own settings (WAL, synchronous=NORMAL).
//
//   build-release/bench/store_bench [--records N] [--writes N] [--runs N] [--smoke]
#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "baseline/store.h"
#include "baseline/store_postgres.h"
#include "baseline/store_url.h"
#include "common/stats.h"
#include "report/baseline_reporter.h"

namespace {

using plumb::baseline::Record;
using plumb::baseline::Store;

constexpr int kManyWriters = 32;
constexpr int kRowsPerRecord = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status != 0 && WEXITSTATUS(status) != 1) {  // plumb diff exits 1 on a regression
    fmt::print(stderr, "store_bench: `{}` exited with {}\n", command, status);
    std::exit(1);
  }
  return status;
}

double timed(const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  run(command + " >/dev/null");
  return seconds_since(start);
}

// A comm baseline of one layer's sweep, as plumb baseline stores it: 16 result rows, its env.
Record sample(int i) {
  Record r;
  r.created = fmt::format("2026-12-07T{:02}:{:02}:{:02}Z", i / 3600 % 24, i / 60 % 60, i % 60);
  r.label = fmt::format("bench-{}", i);
  r.hosts = {"node0", "node1"};
  r.source = "plumb baseline";
  r.env = {{"schema", "plumb.env/1"},
           {"versions", {{"nccl", "2.21.5"}, {"cuda", "12.4"}, {"driver", "550.54.15"}}},
           {"settings", {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}, {"NCCL_SOCKET_IFNAME", "eth0"}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"ranks", 16}, {"iters", 20}};
  for (int k = 0; k < kRowsPerRecord; ++k) {
    plumb::comm::Row row;
    row.layer = "node";
    row.group = "node0";
    row.group_ranks = 8;
    row.collective = k % 2 ? "allgather" : "allreduce";
    row.dtype = "float32";
    row.op = "sum";
    row.requested_bytes = row.bytes = uint64_t{1024} << (k / 2);
    row.count = row.bytes / 4;
    row.time_us = 10.0 + k + i % 7;
    row.algbw_gbps = row.busbw_gbps = 100.0 + k;
    row.wrong = 0;
    row.p50_us = row.time_us;
    row.p99_us = row.time_us * 1.2;
    row.max_us = row.time_us * 1.5;
    row.straggler = 3;
    row.straggler_share = 0.2;
    row.busbw_spread = 0.01;
    r.rows.push_back(row);
  }
  return r;
}

// One backend: how to make a new empty store, and its own client's command line.
struct Backend {
  std::string name;
  std::function<std::string(const std::string&)> new_store;  // hint -> location
  std::function<std::string(const std::string&, const std::string&)> client;  // location, SQL
};

std::string temp_root() {
  static const std::string root = fmt::format("/tmp/plumb-store-bench-{}", getpid());
  return root;
}

Backend sqlite_backend() {
  return {"SQLite",
          [](const std::string& hint) {
            static int n = 0;
            return fmt::format("{}/{}-{}.db", temp_root(), hint, n++);
          },
          [](const std::string& db, const std::string& sql) {
            return fmt::format("sqlite3 -readonly {} \"{}\"", db, sql);
          }};
}

const std::string kPgScript = PLUMB_SOURCE_DIR "/tests/support/pg_cluster.sh";

std::string pg_dir() { return temp_root() + "/pg"; }

std::string psql(const std::string& db) {
  return fmt::format("psql -h {} -U postgres -d {} -qAtX -v ON_ERROR_STOP=1", pg_dir(), db);
}

Backend postgres_backend() {
  return {"PostgreSQL",
          [](const std::string& hint) {
            static int n = 0;
            const std::string db = fmt::format("{}_{}", hint, n++);
            run(fmt::format("{} -c 'CREATE DATABASE {}'", psql("postgres"), db));
            return fmt::format("postgresql://postgres@/{}?host={}", db, pg_dir());
          },
          [](const std::string& url, const std::string& sql) {
            const std::string db = url.substr(url.find("@/") + 2, url.find('?') - url.find("@/") - 2);
            return fmt::format("{} -c \"{}\"", psql(db), sql);
          }};
}

// The floor: one transaction per record, the record's JSON as one row of one table.
double floor_seconds(const std::string& location, int writers, int per_writer) {
  const std::string payload = plumb::report::baseline_json(sample(0)).dump();
  {
    Store create(location);  // the store's own settings (journal, schema), then one more table
  }
  auto open = [&] {
    return plumb::baseline::is_postgres_url(location)
               ? plumb::baseline::open_postgres(location, plumb::baseline::OpenFor::kWriting)
               : plumb::baseline::open_sqlite(location, plumb::baseline::OpenFor::kWriting);
  };
  open()->exec("CREATE TABLE floor (payload TEXT NOT NULL)");
  std::vector<std::unique_ptr<plumb::baseline::Connection>> connections;
  for (int w = 0; w < writers; ++w) {
    connections.push_back(open());
    if (!connections.back()->sql().open_writer.empty()) {
      connections.back()->exec(connections.back()->sql().open_writer);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      plumb::baseline::Connection& db = *connections[static_cast<size_t>(w)];
      for (int i = 0; i < per_writer; ++i) {
        plumb::baseline::WriteTransaction t(db);
        plumb::baseline::Query q = db.prepare("INSERT INTO floor (payload) VALUES (?)");
        q.bind(1, std::string_view(payload));
        q.step();
        t.commit();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return seconds_since(start);
}

// plumb: Store::save, one record per transaction, each writer with a store (connection) of its own.
double plumb_seconds(const std::string& location, int writers, int per_writer) {
  std::vector<std::unique_ptr<Store>> stores;
  for (int w = 0; w < writers; ++w) stores.push_back(std::make_unique<Store>(location));
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < per_writer; ++i) stores[static_cast<size_t>(w)]->save(sample(w * per_writer + i));
    });
  }
  for (std::thread& t : threads) t.join();
  return seconds_since(start);
}

void time_writes(const Backend& b, int writers, int records, int runs) {
  const int per_writer = std::max(1, records / writers);
  const double total = static_cast<double>(per_writer) * writers;
  std::vector<double> floor_rates, plumb_rates, ratios;
  for (int r = 0; r < runs; ++r) {
    const double f = total / floor_seconds(b.new_store("floor"), writers, per_writer);
    const double p = total / plumb_seconds(b.new_store("plumb"), writers, per_writer);
    floor_rates.push_back(f);
    plumb_rates.push_back(p);
    ratios.push_back(p / f);
  }
  fmt::print("write {:<10} {:>2} writer(s) × {:>4} records: plumb {:>7.0f} records/s, floor (one "
             "row per transaction) {:>7.0f}/s · ratio {:.2f} (median of {} per-run ratios; plumb "
             "{:.0f}–{:.0f}/s)\n",
             b.name, writers, per_writer, plumb::median(plumb_rates), plumb::median(floor_rates),
             plumb::median(ratios), runs, *std::min_element(plumb_rates.begin(), plumb_rates.end()),
             *std::max_element(plumb_rates.begin(), plumb_rates.end()));
}

// A store of `records` records, written 1,000 per transaction.
std::string filled_store(const Backend& b, int records) {
  const std::string location = b.new_store("read");
  Store store(location);
  const auto start = std::chrono::steady_clock::now();
  for (int done = 0; done < records;) {
    Store::Batch batch(store);
    for (int i = 0; i < 1000 && done < records; ++i, ++done) batch.add(sample(done));
    batch.commit();
  }
  fmt::print("read  {:<10} a store of {} records ({} result rows) filled in {:.1f} s\n", b.name,
             records, static_cast<int64_t>(records) * kRowsPerRecord, seconds_since(start));
  return location;
}

// Each command of plumb against the client's SELECTs of the same rows, alternated.
void time_reads(const Backend& b, int records, int runs) {
  const std::string db = filled_store(b, records);
  const int a = records / 2;
  const int c = a + 1;
  const std::string one = "SELECT * FROM baselines WHERE id = {0}; SELECT * FROM comm_results "
                          "WHERE baseline_id = {0} ORDER BY seq;";
  struct Case {
    std::string what, plumb, peer;
  };
  const std::vector<Case> cases = {
      {"list", fmt::format("{} list --db '{}'", PLUMB_BINARY, db),
       b.client(db, "SELECT b.id, b.created, b.label, b.hosts, b.source, (SELECT COUNT(*) FROM "
                    "comm_results r WHERE r.baseline_id = b.id) FROM baselines b ORDER BY b.id "
                    "DESC LIMIT 50")},
      {"show", fmt::format("{} show {} --db '{}'", PLUMB_BINARY, a, db),
       b.client(db, fmt::format(fmt::runtime(one), a))},
      {"diff", fmt::format("{} diff {} {} --db '{}'", PLUMB_BINARY, a, c, db),
       b.client(db, fmt::format(fmt::runtime(one), a) + fmt::format(fmt::runtime(one), c))},
  };
  for (const Case& k : cases) {
    std::vector<double> plumb_s, peer_s, ratios;
    for (int r = 0; r < runs; ++r) {
      peer_s.push_back(timed(k.peer));
      plumb_s.push_back(timed(k.plumb));
      ratios.push_back(plumb_s.back() / peer_s.back());
    }
    fmt::print("read  {:<10} plumb {:<4} at {} records: {:>6.1f} ms, {} of the same rows {:>6.1f} "
               "ms · ratio {:.2f} (median of {} per-run ratios)\n",
               b.name, k.what, records, 1e3 * plumb::median(plumb_s),
               b.name == "SQLite" ? "sqlite3" : "psql", 1e3 * plumb::median(peer_s),
               plumb::median(ratios), runs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int records = 100000;
  int writes = 3200;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    const bool value = i + 1 < argc;
    if (std::strcmp(argv[i], "--records") == 0 && value) records = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--writes") == 0 && value) writes = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--runs") == 0 && value) runs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--smoke") == 0) records = 200, writes = 64, runs = 1;
  }
  std::filesystem::create_directories(temp_root());
  // fsync on: the tests' servers go without it, a real store does not.
  run(fmt::format("PLUMB_PG_OPTIONS='-c fsync=on -c synchronous_commit=on' {} start {} >/dev/null",
                  kPgScript, pg_dir()));
  for (const Backend& b : {sqlite_backend(), postgres_backend()}) {
    time_writes(b, 1, writes / 4, runs);
    time_writes(b, kManyWriters, writes, runs);
    time_reads(b, records, runs);
  }
  run(fmt::format("{} stop {}", kPgScript, pg_dir()));
  std::filesystem::remove_all(temp_root());
  return 0;
}
