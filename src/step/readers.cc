#include "step/readers.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "common/error.h"

namespace plumb::step {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool has_output_file(const fs::path& dir, std::string_view prefix, std::string_view suffix) {
  std::error_code ec;
  fs::path output = dir / "ASCEND_PROFILER_OUTPUT";
  if (!fs::is_directory(output, ec)) return false;
  for (const fs::directory_entry& entry : fs::directory_iterator(output, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix)) return true;
  }
  return false;
}

bool accepts_kineto(const fs::path& path) { return is_file(path); }
bool accepts_ascend_text(const fs::path& dir) {
  return has_output_file(dir, "trace_view", ".json");
}
bool accepts_ascend_db(const fs::path& dir) {
  return has_output_file(dir, "ascend_pytorch_profiler", ".db");
}

constexpr TraceFormat kFormats[] = {
    {"kineto", accepts_kineto, read_kineto},
    {"ascend-text", accepts_ascend_text, read_ascend_text},
    {"ascend-db", accepts_ascend_db, read_ascend_db},
};

// A file in a directory of per-rank traces: what PyTorch's tensorboard_trace_handler and HTA
// name them.
bool looks_like_trace_file(const fs::path& path) {
  std::string name = path.filename().string();
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

const TraceFormat* format_of(const fs::path& path) {
  for (const TraceFormat& format : kFormats) {
    if (format.accepts(path)) return &format;
  }
  return nullptr;
}

// The directory's own entries: trace files and Ascend output directories, sorted by name.
std::vector<TraceInput> inputs_in(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    entries.push_back(entry.path());
  }
  if (ec) throw Error(fmt::format("{}: cannot list the directory: {}", dir.string(), ec.message()));
  std::sort(entries.begin(), entries.end());
  std::vector<TraceInput> out;
  for (const fs::path& path : entries) {
    bool dir_entry = fs::is_directory(path, ec);
    if (!dir_entry && !looks_like_trace_file(path)) continue;
    const TraceFormat* format = format_of(path);
    if (format != nullptr) out.push_back({path, format});
  }
  return out;
}

std::vector<TraceInput> inputs_of(const std::string& arg) {
  fs::path path(arg);
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(fmt::format("{}: no such file or directory", arg));
  if (!fs::is_directory(path, ec)) {
    if (!is_file(path)) throw Error(fmt::format("{}: not a regular file or directory", arg));
    return {{path, &kFormats[0]}};
  }
  if (const TraceFormat* format = format_of(path)) return {{path, format}};
  std::vector<TraceInput> found = inputs_in(path);
  if (found.empty()) {
    throw Error(fmt::format(
        "{}: no traces found: expected *.json or *.json.gz files (one per rank, from "
        "torch.profiler) or *_ascend_pt directories (torch_npu.profiler)",
        arg));
  }
  return found;
}

}  // namespace

std::span<const TraceFormat> trace_formats() { return kFormats; }

std::vector<TraceInput> find_trace_inputs(const std::vector<std::string>& paths) {
  std::vector<TraceInput> out;
  for (const std::string& arg : paths) {
    std::vector<TraceInput> found = inputs_of(arg);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::vector<RankTrace> read_traces(const std::vector<TraceInput>& inputs,
                                   const ReadOptions& options, int jobs,
                                   const std::function<void(size_t, const RankTrace&)>& on_done) {
  if (inputs.empty()) return {};
  std::vector<std::optional<RankTrace>> read(inputs.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;  // of the lowest input index that failed: one message per set
  size_t first_error_index = inputs.size();
  std::mutex lock;
  auto work = [&] {
    for (size_t i = next++; i < inputs.size() && !failed; i = next++) {
      try {
        read[i] = inputs[i].format->read(inputs[i].path, options);
        std::lock_guard<std::mutex> guard(lock);
        if (on_done) on_done(i, *read[i]);
      } catch (...) {
        std::lock_guard<std::mutex> guard(lock);
        failed = true;
        if (i < first_error_index) {
          first_error_index = i;
          first_error = std::current_exception();
        }
      }
    }
  };
  size_t threads = std::clamp<size_t>(static_cast<size_t>(std::max(jobs, 1)), 1, inputs.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (first_error) std::rethrow_exception(first_error);
  std::vector<RankTrace> out;
  out.reserve(read.size());
  for (std::optional<RankTrace>& trace : read) out.push_back(std::move(*trace));
  return out;
}

}  // namespace plumb::step
