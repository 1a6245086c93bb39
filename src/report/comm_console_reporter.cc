#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "comm/dtype.h"
#include "common/strings.h"
#include "common/units.h"
#include "report/comm_reporter.h"
#include "report/comm_summary_text.h"
#include "report/round_spread.h"

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

  // The group a table line shows: the lowest busbw (as the summary's slowest group, plumb diff
  // and the charts pick it), the longest time among equals.
  const Row& slowest() const {
    return **std::min_element(groups.begin(), groups.end(), [](const Row* a, const Row* b) {
      if (a->busbw_gbps != b->busbw_gbps) return a->busbw_gbps < b->busbw_gbps;
      return a->time_us > b->time_us;
    });
  }
  double spread() const {  // (slowest − fastest) / slowest time, = 1 − worst/best bandwidth
    double slow = 0;
    double fast = std::numeric_limits<double>::infinity();
    for (const Row* r : groups) {
      slow = std::max(slow, r->time_us);
      fast = std::min(fast, r->time_us);
    }
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
                  "· check {}{}\n",
             result.backend, result.ranks, hosts.size(), hosts.size() == 1 ? "" : "s", s.dtype,
             s.op, s.iters, s.warmup, s.check ? "on" : "off",
             s.rounds > 1 ? fmt::format(" · {} rounds", s.rounds) : "");
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
  fmt::print(out, "{}\n", kTableGroupsLine);
}

// The rounds' spread column: what a table of rounds combined adds (comm/rounds.h busbw_spread).
constexpr const char* kRoundSpreadTitle = "rounds±";

// A row's busbw spread over the rounds as the HTML report writes it (round_spread.h), with the
// console's "-" when the size was measured once.
std::string round_spread_text(const Row& r) {
  return std::isnan(r.busbw_spread) ? "-" : spread_text(r.busbw_spread);
}

void print_table_header(const std::string& layer, const std::string& collective, size_t groups,
                        const std::string& round, bool round_spread, std::ostream& out) {
  fmt::print(out, "#\n# {} · layer {}{}{}\n", collective, layer,
             groups > 1 ? fmt::format(" · slowest of {} groups per size", groups) : "", round);
  fmt::print(out, "#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}  "
                  "{:<16} {:>6}  {}{}\n",
             "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "p50",
             "p99", "max", "slowest group", "spread",
             round_spread ? fmt::format("{:>7}  ", kRoundSpreadTitle) : "", "straggler");
  fmt::print(out, "#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8}\n",
             "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)",
             "(us)");
}

void print_row(const SizeRows& rows, bool round_spread, std::ostream& out) {
  const Row& r = rows.slowest();
  const int64_t wrong = rows.wrong();
  const std::string spread =
      rows.groups.size() > 1 ? fmt::format("{:.1f}%", rows.spread() * 100.0) : "-";
  const std::string straggler =
      r.straggler < 0 ? "-" : fmt::format("rank {} ({:.0f}%)", r.straggler, r.straggler_share * 100.0);
  fmt::print(out, "{:>12} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7.2f} {:>7.2f} {:>7} {:>8} {:>8} "
                  "{:>8}  {:<16} {:>6}  {}{}\n",
             r.bytes, r.count, type_column(r.dtype), r.op, r.root, format_time(r.time_us),
             r.algbw_gbps, r.busbw_gbps, wrong < 0 ? "N/A" : std::to_string(wrong),
             format_time(r.p50_us), format_time(r.p99_us), format_time(r.max_us), r.group, spread,
             round_spread ? fmt::format("{:>7}  ", round_spread_text(r)) : "", straggler);
}

void print_summary(const comm::Summary& s, std::ostream& out) {
  if (s.sizes == 0) {
    fmt::print(out, "# {} @ {}: no size ≥ {} measured, no average busbw\n", s.collective, s.layer,
               format_bytes(comm::kSummaryMinBytes));
    return;
  }
  fmt::print(out, "# {} @ {}: avg busbw {} GB/s over {} size{} ≥ {}", s.collective, s.layer,
             average_busbw_text(s.avg_busbw_gbps), s.sizes, s.sizes == 1 ? "" : "s",
             format_bytes(comm::kSummaryMinBytes));
  if (s.groups > 1) fmt::print(out, ", mean of {} groups", s.groups);
  if (s.slowest_group != s.layer) {
    fmt::print(out, " (slowest group {}: {} GB/s, spread {:.1f}%)", s.slowest_group,
               average_busbw_text(s.slowest_busbw_gbps), s.spread * 100.0);
  }
  fmt::print(out, "\n");
}

void print_footer(const comm::Result& result, std::ostream& out) {
  if (!result.settings.check) {
    fmt::print(out, "#\n# Out of bounds values : not checked (--check 0)\n");
    return;
  }
  const int64_t wrong = comm::total_wrong(result);
  fmt::print(out, "#\n# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
}

// The tables of one pass over the rows, a size at a time: a new table begins where the layer,
// the collective or the round changes, and a finished table gets its summary line (computed from
// its own rows by comm::summarize) unless the rows are one round of several.
class TableWriter {
 public:
  explicit TableWriter(std::ostream& out) : out_(out) {}

  // round_spread: the rows are rounds combined, and the table shows their spread (rounds±).
  void add(const std::vector<Row>& size_rows, const std::string& round, bool summarize,
           bool round_spread = false) {
    if (size_rows.empty()) return;
    const Row& first = size_rows.front();
    if (block_.empty() || block_.front().layer != first.layer ||
        block_.front().collective != first.collective || round != round_) {
      close();
      round_ = round;
      summarize_ = summarize;
      round_spread_ = round_spread;
      print_table_header(first.layer, first.collective, size_rows.size(), round, round_spread,
                         out_);
    }
    SizeRows rows;
    for (const Row& r : size_rows) rows.groups.push_back(&r);
    print_row(rows, round_spread_, out_);
    block_.insert(block_.end(), size_rows.begin(), size_rows.end());
  }

  void close() {
    if (!block_.empty() && summarize_) {
      for (const comm::Summary& s : comm::summarize(block_)) print_summary(s, out_);
    }
    block_.clear();
  }

 private:
  std::ostream& out_;
  std::vector<Row> block_;
  std::string round_;
  bool summarize_ = true;
  bool round_spread_ = false;
};

// Consecutive rows of one (layer, collective, requested size): the groups of one size.
void for_each_size(const std::vector<Row>& rows,
                   const std::function<void(const std::vector<Row>&)>& fn) {
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].layer == rows[i].layer &&
           rows[j].collective == rows[i].collective &&
           rows[j].requested_bytes == rows[i].requested_bytes) {
      ++j;
    }
    fn(std::vector<Row>(rows.begin() + static_cast<std::ptrdiff_t>(i),
                        rows.begin() + static_cast<std::ptrdiff_t>(j)));
    i = j;
  }
}

void print_tables(const std::vector<Row>& rows, std::ostream& out, bool round_spread = false) {
  TableWriter tables(out);
  for_each_size(rows,
                [&](const std::vector<Row>& size) { tables.add(size, "", true, round_spread); });
  tables.close();
}

}  // namespace

void CommConsoleReporter::report(const comm::Result& result, std::ostream& out) const {
  print_header(result, out);
  print_tables(result.rows, out);
  print_footer(result, out);
}

struct CommConsoleStream::Tables : TableWriter {
  using TableWriter::TableWriter;
};

CommConsoleStream::CommConsoleStream(std::ostream& out, std::function<void()> before_write)
    : out_(out), before_write_(std::move(before_write)), tables_(std::make_unique<Tables>(out)) {}

CommConsoleStream::~CommConsoleStream() = default;

void CommConsoleStream::begin(const comm::Result& context) {
  rounds_ = context.settings.rounds;
  write([&] { print_header(context, out_); });
}

void CommConsoleStream::rows(const std::vector<comm::Row>& rows, int round) {
  const std::string text = rounds_ > 1 ? fmt::format(" · round {}/{}", round, rounds_) : "";
  write([&] { tables_->add(rows, text, rounds_ <= 1); });
}

void CommConsoleStream::end(const comm::Result& result) {
  write([&] {
    tables_->close();
    if (rounds_ > 1) {
      fmt::print(out_, "#\n# the {} rounds combined: per size and group the median round; {}: "
                       "its busbw's median absolute deviation over the rounds, relative to the "
                       "median\n",
                 rounds_, kRoundSpreadTitle);
      print_tables(result.rows, out_, true);
    }
    print_footer(result, out_);
  });
}

// Every write reaches the stream's target at once (std::cout into a pipe or a file is otherwise
// buffered until exit), so a sweep killed by srun, sbatch's time limit or tee's end leaves every
// line it measured.
void CommConsoleStream::write(const std::function<void()>& print) {
  if (before_write_) before_write_();
  print();
  out_.flush();
}

}  // namespace plumb::report
