// Reporters for comm::Result: each one format, each writing to a stream it is handed, so the same
// result can go to the screen and to files at once (google/benchmark's BenchmarkReporter shape).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "comm/result.h"
#include "common/partial_file.h"

namespace plumb::report {

class CommReporter {
 public:
  virtual ~CommReporter() = default;
  virtual void report(const comm::Result& result, std::ostream& out) const = 0;
};

// nccl-tests-style tables, one per (layer, collective), showing per size the slowest group, the
// spread across groups and the tail (p50/p99/max), then the average busbw over sizes ≥ 1 MiB.
class CommConsoleReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// JSON, schema plumb.comm/1: every group's row, the placement, the environment, the summary.
class CommJsonReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// CSV: a header, then one line per row (every group), the JSON row's fields as columns.
class CommCsvReporter final : public CommReporter {
 public:
  void report(const comm::Result& result, std::ostream& out) const override;
};

// The JSON document itself (also used by baseline storage).
nlohmann::json comm_result_json(const comm::Result& result);

// The CSV header line and one row's line (CommCsvReporter's format).
std::string comm_csv_header();
std::string comm_csv_row(const comm::Row& row);

// A reporter that writes while the sweep measures, so that a sweep killed midway (srun, sbatch's
// time limit, a closed tee) leaves every row it measured: plumb comm and plumb baseline hand each
// size's rows over as soon as rank 0 has them.
class CommStreamReporter {
 public:
  virtual ~CommStreamReporter() = default;
  // Before the first row. `context` is the Result without rows (backend, ranks, hosts, settings,
  // placement, layers, environment).
  virtual void begin(const comm::Result& context) = 0;
  // The rows of one size, every group's, as measured; `round` counts from 1 to settings.rounds.
  virtual void rows(const std::vector<comm::Row>& rows, int round) = 0;
  // The finished result (rounds combined, notes).
  virtual void end(const comm::Result& result) = 0;
};

// CommConsoleReporter's tables a line per size as measured, each write flushed. With --rounds,
// each round's lines (no summary: one round's average is not the result), then the combined
// tables with their summaries. `before_write` runs before each write (to erase a progress line).
class CommConsoleStream final : public CommStreamReporter {
 public:
  explicit CommConsoleStream(std::ostream& out, std::function<void()> before_write = {});
  ~CommConsoleStream() override;
  void begin(const comm::Result& context) override;
  void rows(const std::vector<comm::Row>& rows, int round) override;
  void end(const comm::Result& result) override;

 private:
  struct Tables;
  void write(const std::function<void()>& print);
  std::ostream& out_;
  std::function<void()> before_write_;
  std::unique_ptr<Tables> tables_;
  int rounds_ = 1;
};

// The note a partial plumb.comm/1 file carries in notes[] (with "complete": false).
inline constexpr const char* kPartialJsonNote =
    "incomplete: the rows measured before this sweep stopped, in the order measured (with "
    "--rounds every round's own rows, not yet combined); no summary";

// plumb.comm/1 written as the sweep goes (docs/outputs.md) to `path` (plumb comm: beside the
// target, partial_path): "complete": false, the context, and results[] closed after every size,
// so the file is valid JSON between sizes. end() writes nothing: the finished document
// (CommJsonReporter, "complete": true) goes to the target through an OutputFile; discard() then
// removes this one.
class CommJsonStream final : public CommStreamReporter {
 public:
  CommJsonStream(std::string option, std::string path);
  void begin(const comm::Result& context) override;
  void rows(const std::vector<comm::Row>& rows, int round) override;
  void end(const comm::Result&) override {}
  void discard() { file_.discard(); }

 private:
  PartialFile file_;
  uint64_t results_end_ = 0;  // where the next row goes: before the closing "\n  ]\n}\n"
  bool first_ = true;
};

// The CSV header at begin, then each row's line appended as measured; a CSV has no place for an
// "incomplete" mark, so its path must say it (partial_path). discard() as CommJsonStream's.
class CommCsvStream final : public CommStreamReporter {
 public:
  CommCsvStream(std::string option, std::string path);
  void begin(const comm::Result& context) override;
  void rows(const std::vector<comm::Row>& rows, int round) override;
  void end(const comm::Result&) override {}
  void discard() { file_.discard(); }

 private:
  PartialFile file_;
};

}  // namespace plumb::report
