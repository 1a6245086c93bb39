// The trace formats `plumb step` reads, as a table, and the expansion of PATH arguments into one
// input per rank. Adding a format is one entry in trace_formats() (readers.cc) and its reader.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "step/trace.h"

namespace plumb::step {

struct ReadOptions {
  // Regular expression (RE2, common/regex.h) a host annotation's whole name must match to be a
  // step; its first capture group is the step number. Default: PyTorch's `ProfilerStep#N`.
  std::string step_regex = "ProfilerStep#(\\d+)";
};

struct TraceFormat {
  std::string_view name;  // "kineto", "ascend-text", "ascend-db"
  // True when `path` is an input of this format: a trace file, or an Ascend `*_ascend_pt`
  // directory (one holding ASCEND_PROFILER_OUTPUT/).
  bool (*accepts)(const std::filesystem::path& path);
  // Reads one rank. Bad input throws plumb::Error naming the file (and byte offset, line, row or
  // event); a device event whose times cannot be true is dropped and counted in
  // RankTrace::dropped (docs/step.md, "Damaged input").
  RankTrace (*read)(const std::filesystem::path& path, const ReadOptions& options);
};

// Kineto first, then Ascend text, then Ascend SQLite (text wins when a directory holds both).
std::span<const TraceFormat> trace_formats();

struct TraceInput {
  std::filesystem::path path;
  const TraceFormat* format = nullptr;
};

// PATH arguments → one input per rank: a trace file; a directory of per-rank trace files
// (*.json, *.json.gz, *.pt.trace.json[.gz]); an Ascend `*_ascend_pt` directory; or a directory of
// those. A path that is none of these throws plumb::Error naming it and what was expected.
std::vector<TraceInput> find_trace_inputs(const std::vector<std::string>& paths);

// Reads every input with up to `jobs` threads (one file per thread at a time, so the peak memory
// is about `jobs` × the largest file). `on_done(i, trace)` runs after input i was read (for a
// progress line), on the reading thread. The first error stops the others and is rethrown.
std::vector<RankTrace> read_traces(const std::vector<TraceInput>& inputs,
                                   const ReadOptions& options, int jobs,
                                   const std::function<void(size_t, const RankTrace&)>& on_done);

// The readers (one file each).
RankTrace read_kineto(const std::filesystem::path& path, const ReadOptions& options);
RankTrace read_ascend_text(const std::filesystem::path& dir, const ReadOptions& options);
RankTrace read_ascend_db(const std::filesystem::path& dir, const ReadOptions& options);

// The rank a file name says: "rank-3", "rank_3", "rank3", "rank3_ascend_pt" (case-insensitive);
// -1 when it says none.
int rank_from_file_name(std::string_view file_name);

}  // namespace plumb::step
