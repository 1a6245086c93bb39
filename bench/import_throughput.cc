// bench/import_throughput: how fast `plumb import` reads nccl-tests logs.
//
// Builds about 100 MB of nccl-tests text in memory (the fixture logs repeated, as a cluster's
// sweep of many tests in one file would be), then times, in the same run:
//   * the physical floor: one pass of memchr over the same bytes counting lines;
//   * plumb's nccl-tests reader (parse only);
//   * parse + store: every test saved as a record in a fresh SQLite store as soon as it is
//     parsed, all in one transaction (what `plumb import` does).
// Target (issue 3): parse + store at 50 MB/s or more. Median of 5 runs each.
//
//   build-release/bench/import_throughput [--mb N] [--runs N]
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baseline/importers/importer.h"
#include "baseline/store.h"
#include "common/stats.h"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class Fn>
double seconds(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t megabytes = 100;
  int runs = 5;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0) megabytes = std::stoul(argv[++i]);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::stoi(argv[++i]);
  }
  const std::string dir = PLUMB_FIXTURES "/nccl-tests/";
  const std::string unit = read(dir + "all_reduce_8xH100_v2.17.8.log") + "\n" +
                           read(dir + "alltoall_sendrecv_4ranks_2nodes_mid2025.log") + "\n";
  std::string text;
  text.reserve(megabytes * 1000000 + unit.size());
  while (text.size() < megabytes * 1000000) text += unit;
  const double mb = static_cast<double>(text.size()) / 1e6;

  std::vector<double> scan, parse, store;
  size_t tests = 0;
  for (int run = 0; run < runs; ++run) {
    size_t lines = 0;
    scan.push_back(seconds([&] {
      for (const char* p = text.data(); (p = static_cast<const char*>(std::memchr(
                                             p, '\n', text.data() + text.size() - p)));
           ++p) {
        ++lines;
      }
    }));
    std::vector<plumb::baseline::ImportedTest> parsed;
    parse.push_back(seconds([&] {
      parsed = plumb::baseline::nccl_tests_text_importer().parse(text, "bench.log", {});
    }));
    tests = parsed.size();
    const std::string db = std::filesystem::temp_directory_path() / "plumb-import-bench.db";
    std::filesystem::remove(db);
    std::filesystem::remove(db + "-wal");
    std::filesystem::remove(db + "-shm");
    store.push_back(seconds([&] {  // as plumb import: each test stored as soon as it is parsed
      plumb::baseline::Store out(db);
      plumb::baseline::Store::Batch batch(out);
      plumb::baseline::nccl_tests_text_importer().parse_each(
          text, "bench.log", {}, [&](plumb::baseline::ImportedTest&& t) {
            plumb::baseline::Record r;
            r.source = "bench";
            r.hosts = t.hosts;
            r.rows = std::move(t.rows);
            batch.add(r);
          });
      batch.commit();
    }));
    if (lines == 0) return 1;
  }
  const double scan_mbs = mb / plumb::percentile(scan, 50);
  const double parse_mbs = mb / plumb::percentile(parse, 50);
  const double store_mbs = mb / plumb::percentile(store, 50);
  fmt::print("# bench/import_throughput: {:.1f} MB of nccl-tests logs ({} tests), median of {} runs\n",
             mb, tests, runs);
  fmt::print("  memchr line scan (floor)   {:8.1f} MB/s\n", scan_mbs);
  fmt::print("  parse                      {:8.1f} MB/s  ({:.3f} of the scan)\n", parse_mbs,
             parse_mbs / scan_mbs);
  fmt::print("  parse + store (import)     {:8.1f} MB/s  ({:.3f} of the scan)\n", store_mbs,
             store_mbs / scan_mbs);
  fmt::print("# import {:.1f} MB/s (target ≥ 50): {}\n", store_mbs,
             store_mbs >= 50 ? "within target" : "BELOW TARGET");
  return 0;
}
