// The memory figures of plumb.train-events/1 lines (docs/train-events.md), one series per rank:
// what the memory baseline (mem/memory_baseline) is computed from. Each line is read by the
// exporter's reader (exporter/train_events), so a line the exporter calls malformed is malformed
// here too; only the lines with memory.allocated_bytes are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::mem {

struct MemoryPoint {
  int64_t step = 0;
  double allocated = 0;             // memory.allocated_bytes at the step's end
  std::optional<double> reserved;   // memory.reserved_bytes
  std::optional<double> peak;       // memory.peak_bytes
  std::string checkpoint;           // "saved", "loaded" or ""
  size_t line = 0;                  // in the file, from 1

  bool operator==(const MemoryPoint&) const = default;
};

struct RankSeries {
  std::string rank;                 // the line's "rank"; "" when the lines give none
  std::vector<MemoryPoint> points;  // in file order

  bool operator==(const RankSeries&) const = default;
};

struct MemorySeries {
  std::string source;               // the file, for messages and reports
  std::vector<RankSeries> ranks;    // by rank: numerically where both are whole numbers
  size_t lines = 0;                 // plumb.train-events/1 lines read (blank lines not counted)
  size_t without_memory = 0;        // of them, lines with no memory.allocated_bytes
  size_t unmarked_checkpoints = 0;  // "checkpoint" marks on lines without memory (not checkable)
};

// Every malformed line of the whole text is reported at once, one line each, in one plumb::Error
// (exit 2): "events.jsonl:3: 'step' is a string, expected a whole number from 0 to ...". Blank
// lines are skipped. A last line without its newline that does not parse was cut short by a job
// killed while writing it: it is skipped, not an error (plumb stops the job at --steps).
// No line with memory.allocated_bytes is an Error too, naming the file.
MemorySeries parse_memory_series(std::string_view text, const std::string& name);
MemorySeries read_memory_series(const std::string& path);

}  // namespace plumb::mem
