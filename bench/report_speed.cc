// bench/report_speed: how fast `plumb report` writes the HTML report of two large baselines.
//
// Builds two baselines of 10,000 result rows each (2 layers × 4 collectives × 25 sizes × 50
// groups: a 400-GPU sweep; B 20% slower on one collective) and their diff, then times, in the
// same run:
//   * the physical floor: memcpy of as many bytes as the page has, and fwrite of them to a file;
//   * baseline::diff (what `plumb report A B` computes before rendering);
//   * report::write_html_report into memory (an ostringstream) and into a file;
//   * the whole of `plumb report a.json b.json`: read both plumb.baseline/1 files, diff, write.
// Target (the report issue): the report for 10,000 rows written in under 1 s. Median of the runs.
//
//   build-release/bench/report_speed [--runs N]
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "baseline/diff.h"
#include "baseline/record_json.h"
#include "baseline/store.h"
#include "common/stats.h"
#include "report/baseline_reporter.h"
#include "report/html_report.h"

namespace {

constexpr int kLayers = 2;
constexpr int kCollectives = 4;
constexpr int kSizes = 25;  // 8 B .. 128 MiB, ×2
constexpr int kGroups = 50;
constexpr double kTargetMs = 1000;

template <class Fn>
double millis(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

plumb::comm::Row make_row(const char* layer, int group, const char* coll, uint64_t bytes,
                          double busbw) {
  plumb::comm::Row r;
  r.layer = layer;
  r.group = fmt::format("{}-{:02}", layer, group);
  r.group_ranks = 8;
  r.collective = coll;
  r.dtype = "bfloat16";
  r.op = "sum";
  r.requested_bytes = r.bytes = bytes;
  r.count = bytes / 2;
  r.busbw_gbps = busbw;
  r.algbw_gbps = busbw / 1.75;
  r.time_us = static_cast<double>(bytes) / (r.algbw_gbps * 1e3) + 5;
  r.p50_us = r.time_us;
  r.p99_us = r.time_us * (1.1 + 0.002 * group);
  r.max_us = r.p99_us * 1.2;
  r.wrong = 0;
  r.straggler = group * 8;
  r.straggler_share = 0.3;
  return r;
}

plumb::baseline::Record make_record(int64_t id, double slow) {
  static const char* kLayerNames[kLayers] = {"node", "spine"};
  static const char* kCollNames[kCollectives] = {"allreduce", "allgather", "reducescatter",
                                                 "alltoall"};
  plumb::baseline::Record r;
  r.id = id;
  r.label = id == 1 ? "before" : "after";
  r.created = "2026-12-02T10:00:00Z";
  r.source = "bench";
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"nccl", id == 1 ? "2.18.3" : "2.19.1"}}}};
  for (const char* layer : kLayerNames) {
    for (int c = 0; c < kCollectives; ++c) {
      for (int s = 0; s < kSizes; ++s) {
        const uint64_t bytes = uint64_t{8} << s;
        const double peak = (layer[0] == 'n' ? 180.0 : 45.0) * (c == 3 ? slow : 1.0);
        for (int g = 0; g < kGroups; ++g) {
          const double bw = peak * bytes / (bytes + 4e6) * (1 - 0.001 * g);
          r.rows.push_back(make_row(layer, g, kCollNames[c], bytes, bw));
        }
      }
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 7;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::stoi(argv[++i]);
  }
  const plumb::baseline::Record a = make_record(1, 1.0);
  const plumb::baseline::Record b = make_record(2, 0.8);
  const std::string path =
      (std::filesystem::temp_directory_path() / "plumb-report-bench.html").string();
  const std::string json_a = path + ".a.json";
  const std::string json_b = path + ".b.json";
  std::ofstream(json_a) << plumb::report::baseline_json(a).dump();
  std::ofstream(json_b) << plumb::report::baseline_json(b).dump();
  std::vector<double> copy, fwrite_ms, diff_ms, memory, file, whole;
  size_t page_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    plumb::baseline::Diff d;
    diff_ms.push_back(millis([&] { d = plumb::baseline::diff(a, b, {0.10}); }));
    std::string page;
    memory.push_back(millis([&] {
      std::ostringstream out;
      plumb::report::write_html_report(a, &b, &d, out);
      page = out.str();
    }));
    page_bytes = page.size();
    file.push_back(millis([&] {
      std::ofstream out(path, std::ios::binary);
      plumb::report::write_html_report(a, &b, &d, out);
    }));
    whole.push_back(millis([&] {
      const plumb::baseline::Record ra = plumb::baseline::read_record_file(json_a);
      const plumb::baseline::Record rb = plumb::baseline::read_record_file(json_b);
      const plumb::baseline::Diff rd = plumb::baseline::diff(ra, rb, {0.10});
      std::ofstream out(path, std::ios::binary);
      plumb::report::write_html_report(ra, &rb, &rd, out);
    }));
    std::string target(page.size(), '\0');
    copy.push_back(millis([&] { std::memcpy(target.data(), page.data(), page.size()); }));
    if (target[0] != '<') return 1;
    fwrite_ms.push_back(millis([&] {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      std::fwrite(page.data(), 1, page.size(), f);
      std::fclose(f);
    }));
  }
  for (const std::string& p : {path, json_a, json_b}) std::filesystem::remove(p);
  const double mb = static_cast<double>(page_bytes) / 1e6;
  const double report_ms = plumb::percentile(file, 50);
  fmt::print(
      "# bench/report_speed: 2 baselines × {} rows ({} layers × {} collectives × {} sizes × "
      "{} groups) and their diff; median of {} runs\n",
      a.rows.size(), kLayers, kCollectives, kSizes, kGroups, runs);
  const double fwrite_median = plumb::percentile(fwrite_ms, 50);
  fmt::print("  memcpy of the page (floor)             {:9.3f} ms\n", plumb::percentile(copy, 50));
  fmt::print("  fwrite of the page to a file           {:9.3f} ms\n", fwrite_median);
  fmt::print("  baseline::diff                         {:9.3f} ms\n",
             plumb::percentile(diff_ms, 50));
  fmt::print("  report to memory                       {:9.3f} ms\n",
             plumb::percentile(memory, 50));
  fmt::print("  report to a file                       {:9.3f} ms  ({:.1f}x the fwrite)\n",
             report_ms, report_ms / fwrite_median);
  fmt::print(
      "  plumb report a.json b.json (read both, {:9.3f} ms\n"
      "    diff, write to a file)\n",
      plumb::percentile(whole, 50));
  fmt::print(
      "report {} rows: {:.1f} ms (median of {}), {:.2f} MB, target {:.0f} ms: {} "
      "(ratio {:.3f})\n",
      a.rows.size(), report_ms, runs, mb, kTargetMs,
      report_ms < kTargetMs ? "within target" : "ABOVE TARGET", report_ms / kTargetMs);
  return 0;
}
