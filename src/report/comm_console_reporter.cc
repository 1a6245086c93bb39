#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "comm/dtype.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/comm_reporter.h"

namespace plumb::report {
namespace {

using comm::Row;

// nccl-tests prints fewer decimals as times grow, keeping columns 7–8 wide.
std::string format_time(double us) {
  if (std::isnan(us)) return "N/A";
  if (us < 1000.0) return fmt::format("{:.2f}", us);
  if (us < 100000.0) return fmt::format("{:.1f}", us);
  return fmt::format("{:.0f}", us);
}

std::string type_column(const std::string& dtype) {
  for (const comm::DataTypeInfo& t : comm::all_data_types()) {
    if (t.name == dtype) return std::string(t.short_name);
  }
  return dtype;
}

// The rows of one (layer, collective, requested size): one per group.
struct SizeRows {
  std::vector<const Row*> groups;

  const Row& slowest() const {
    return **std::max_element(groups.begin(), groups.end(),
                              [](const Row* a, const Row* b) { return a->time_us < b->time_us; });
  }
  double spread() const {  // (slowest − fastest) / slowest time, = 1 − worst/best bandwidth
    const double slow = slowest().time_us;
    double fast = slow;
    for (const Row* r : groups) fast = std::min(fast, r->time_us);
    return slow > 0 ? (slow - fast) / slow : 0.0;
  }
  int64_t wrong() const {
    int64_t total = 0;
    for (const Row* r : groups) {
      if (r->wrong < 0) return -1;
      total += r->wrong;
    }
    return total;
  }
};

void print_header(const comm::Result& result, std::ostream& out) {
  std::set<std::string> hosts(result.hosts.begin(), result.hosts.end());
  const comm::SweepSettings& s = result.settings;
  fmt::print(out, "# plumb comm · backend {} · {} ranks on {} host{} · {} {} · {} iters, {} warm-up "
                  "· check {}\n",
             result.backend, result.ranks, hosts.size(), hosts.size() == 1 ? "" : "s", s.dtype,
             s.op, s.iters, s.warmup, s.check ? "on" : "off");
  for (const comm::Layer& layer : result.layers) {
    if (!layer.skipped.empty()) {
      fmt::print(out, "# layer {:<6} skipped: {}\n", layer.name, layer.skipped);
      continue;
    }
    size_t fewest = layer.groups.front().ranks.size();
    size_t most = fewest;
    for (const comm::Group& g : layer.groups) {
      fewest = std::min(fewest, g.ranks.size());
      most = std::max(most, g.ranks.size());
    }
    fmt::print(out, "# layer {:<6} {} group{} of {} ranks\n", layer.name, layer.groups.size(),
               layer.groups.size() == 1 ? "" : "s",
               fewest == most ? std::to_string(most) : fmt::format("{}–{}", fewest, most));
  }
}

void print_table_header(const std::string& layer, const std::string& collective, size_t groups,
                        std::ostream& out) {
  fmt::print(out, "#\n# {} · layer {}{}\n", collective, layer,
             groups > 1 ? fmt::format(" · slowest of {} groups per size", groups) : "");
  fmt::print(out, "#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}  "
                  "{:<16} {:>6}  {}\n",
             "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "p50",
             "p99", "max", "slowest group", "spread", "straggler");
  fmt::print(out, "#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
             "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)",
             "(us)");
}

void print_row(const SizeRows& rows, std::ostream& out) {
  const Row& r = rows.slowest();
  const int64_t wrong = rows.wrong();
  const std::string spread =
      rows.groups.size() > 1 ? fmt::format("{:.1f}%", rows.spread() * 100.0) : "-";
  const std::string straggler =
      r.straggler < 0 ? "-" : fmt::format("rank {} ({:.0f}%)", r.straggler, r.straggler_share * 100.0);
  fmt::print(out, "{:>12} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7.2f} {:>7.2f} {:>7} {:>8} {:>8} "
                  "{:>8}  {:<16} {:>6}  {}\n",
             r.bytes, r.count, type_column(r.dtype), r.op, r.root, format_time(r.time_us),
             r.algbw_gbps, r.busbw_gbps, wrong < 0 ? "N/A" : std::to_string(wrong),
             format_time(r.p50_us), format_time(r.p99_us), format_time(r.max_us), r.group, spread,
             straggler);
}

void print_summary(const comm::Summary& s, std::ostream& out) {
  if (s.sizes == 0) {
    fmt::print(out, "# {} @ {}: no size ≥ {} measured, no average busbw\n", s.collective, s.layer,
               format_bytes(comm::kSummaryMinBytes));
    return;
  }
  fmt::print(out, "# {} @ {}: avg busbw {:.2f} GB/s over {} size{} ≥ {}", s.collective, s.layer,
             s.avg_busbw_gbps, s.sizes, s.sizes == 1 ? "" : "s",
             format_bytes(comm::kSummaryMinBytes));
  if (s.slowest_group != s.layer) {
    fmt::print(out, " (slowest group {}: {:.2f} GB/s, spread {:.1f}%)", s.slowest_group,
               s.slowest_busbw_gbps, s.spread * 100.0);
  }
  fmt::print(out, "\n");
}

}  // namespace

void CommConsoleReporter::report(const comm::Result& result, std::ostream& out) const {
  print_header(result, out);
  const std::vector<comm::Summary> summaries = comm::summarize(result);
  size_t next_summary = 0;
  for (size_t i = 0; i < result.rows.size();) {
    const Row& first = result.rows[i];
    // Rows of one (layer, collective), grouped by requested size.
    std::vector<SizeRows> sizes;
    std::set<std::string> groups;
    size_t j = i;
    for (; j < result.rows.size() && result.rows[j].layer == first.layer &&
           result.rows[j].collective == first.collective;
         ++j) {
      const Row& r = result.rows[j];
      if (sizes.empty() || sizes.back().groups.front()->requested_bytes != r.requested_bytes) {
        sizes.push_back({});
      }
      sizes.back().groups.push_back(&r);
      groups.insert(r.group);
    }
    print_table_header(first.layer, first.collective, groups.size(), out);
    for (const SizeRows& s : sizes) print_row(s, out);
    if (next_summary < summaries.size()) print_summary(summaries[next_summary++], out);
    i = j;
  }
  if (!result.settings.check) {
    fmt::print(out, "#\n# Out of bounds values : not checked (--check 0)\n");
    return;
  }
  const int64_t wrong = comm::total_wrong(result);
  fmt::print(out, "#\n# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
}

}  // namespace plumb::report
