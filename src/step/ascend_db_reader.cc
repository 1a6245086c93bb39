// The Ascend PyTorch Profiler SQLite export (docs/step.md, "Ascend"): a `*_ascend_pt` directory
// with profiler_info_N.json and ASCEND_PROFILER_OUTPUT/ holding
//   ascend_pytorch_profiler_N.db  TASK (every device task), COMPUTE_TASK_INFO (the computing
//                                 ones: msprof-analyze's "Computing"), COMMUNICATION_OP (HCCL
//                                 ops with count and data type), PYTORCH_API (ProfilerStep#N)
//                                 or STEP_TIME, STRING_IDS (the names), HOST_INFO;
//   analysis.db                   (optional) the communicator id of each op (CommAnalyzerTime)
//                                 and the ranks of its links (CommAnalyzerMatrix).
// Opened read-only and immutable (nothing is locked or written beside it). A table or column
// that is missing is one Error naming the file and what was expected, never SQLite's text.
#include <fmt/format.h>

#include <charconv>
#include <map>
#include <set>

#include "common/sqlite.h"
#include "common/error.h"
#include "step/ascend_reader.h"

namespace plumb::step {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kExpected =
    "expected torch_npu's SQLite export (ascend_pytorch_profiler_N.db)";

// The columns `table` has; empty when there is no such table. The first query on a file, so a
// file that is not a database fails here, with plumb's words.
std::set<std::string> columns_of(Database& db, std::string_view table) {
  std::set<std::string> columns;
  try {
    Statement info = db.prepare(fmt::format("PRAGMA table_info(\"{}\")", table));
    while (info.step()) columns.insert(info.column_text(1));
  } catch (const Error&) {
    throw Error(fmt::format("{}: not a readable SQLite database; {}", db.path(), kExpected));
  }
  return columns;
}

// Read-only and immutable: nothing is locked or written beside the file. A file SQLite cannot
// open is an Error in plumb's words.
Database open_database(const fs::path& file) {
  try {
    return Database(file.string(), ReadOnly::kImmutable);
  } catch (const Error&) {
    throw Error(fmt::format("{}: cannot be opened as an SQLite database; {}", file.string(),
                            kExpected));
  }
}

bool has_table(Database& db, std::string_view table) { return !columns_of(db, table).empty(); }

void require_table(Database& db, std::string_view table,
                   std::initializer_list<std::string_view> needed) {
  std::set<std::string> columns = columns_of(db, table);
  if (columns.empty()) {
    throw Error(fmt::format("{}: no table {}; {}", db.path(), table, kExpected));
  }
  for (std::string_view column : needed) {
    if (!columns.contains(std::string(column))) {
      throw Error(fmt::format("{}: table {} has no column {}; {}", db.path(), table, column,
                              kExpected));
    }
  }
}

// An integer column that may hold text ("1736410576386409710" in PYTORCH_API), exactly.
int64_t column_ns(const Statement& row, int index) {
  std::string text = row.column_text(index);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

fs::path database_file(const fs::path& out, int rank) {
  fs::path exact = out / fmt::format("ascend_pytorch_profiler_{}.db", rank);
  std::error_code ec;
  if (fs::exists(exact, ec)) return exact;
  for (const auto& entry : fs::directory_iterator(out, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("ascend_pytorch_profiler") && name.ends_with(".db")) return entry.path();
  }
  throw Error(fmt::format("{}: no ascend_pytorch_profiler_N.db; {}", out.string(), kExpected));
}

void add_tasks(Database& db, RankTrace& trace) {
  Statement compute = db.prepare(
      "SELECT t.startNs, t.endNs, t.streamId FROM TASK t "
      "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId");
  while (compute.step()) {
    ascend::add_span(trace, compute.column_int(0), compute.column_int(1),
                     static_cast<uint32_t>(compute.column_int(2)), Activity::kCompute);
  }
  Statement other = db.prepare(
      "SELECT t.startNs, t.endNs, t.streamId, s.value FROM TASK t "
      "JOIN STRING_IDS s ON s.id = t.taskType "
      "WHERE t.globalTaskId NOT IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO)");
  while (other.step()) {
    std::string type = other.column_text(3);
    if (!ascend::is_memory_task(type, type)) continue;
    ascend::add_span(trace, other.column_int(0), other.column_int(1),
                     static_cast<uint32_t>(other.column_int(2)), Activity::kMemory);
  }
}

// Steps from the host annotations named by options.step_regex; STEP_TIME when there are none.
void add_steps(Database& db, const ReadOptions& options, RankTrace& trace) {
  if (has_table(db, "PYTORCH_API")) {
    require_table(db, "PYTORCH_API", {"startNs", "endNs", "name"});
    ascend::StepMatcher matcher(options);
    std::map<int64_t, int64_t> step_of_name;
    Statement names = db.prepare(
        "SELECT id, value FROM STRING_IDS WHERE id IN (SELECT DISTINCT name FROM PYTORCH_API)");
    while (names.step()) {
      if (auto step = matcher.step_of(names.column_text(1))) {
        step_of_name[names.column_int(0)] = *step;
      }
    }
    Statement rows = db.prepare("SELECT name, startNs, endNs FROM PYTORCH_API");
    while (rows.step()) {
      auto found = step_of_name.find(rows.column_int(0));
      if (found == step_of_name.end()) continue;
      trace.steps.push_back(StepSpan{found->second, column_ns(rows, 1), column_ns(rows, 2)});
    }
  }
  if (trace.steps.empty() && has_table(db, "STEP_TIME")) {
    require_table(db, "STEP_TIME", {"id", "startNs", "endNs"});
    Statement rows = db.prepare("SELECT id, startNs, endNs FROM STEP_TIME");
    while (rows.step()) {
      trace.steps.push_back(StepSpan{rows.column_int(0), column_ns(rows, 1), column_ns(rows, 2)});
    }
  }
}

// analysis.db: communicator id → the ranks its collective links name.
std::map<std::string, std::set<int>> read_analysis_db(const fs::path& out) {
  std::map<std::string, std::set<int>> found;
  std::error_code ec;
  if (!fs::exists(out / "analysis.db", ec)) return found;
  Database db = open_database(out / "analysis.db");
  std::set<std::string> matrix = columns_of(db, "CommAnalyzerMatrix");
  if (matrix.contains("src_rank") && matrix.contains("dst_rank") && matrix.contains("type")) {
    Statement rows = db.prepare(
        "SELECT group_name, src_rank, dst_rank FROM CommAnalyzerMatrix WHERE type = 'collective'");
    while (rows.step()) {
      for (int column : {1, 2}) {
        std::string text = rows.column_text(column);
        int rank = -1;
        auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), rank);
        if (err == std::errc() && rank >= 0) found[rows.column_text(0)].insert(rank);
      }
    }
  }
  return found;
}

// The stream of each op's tasks, by the connection id they share with it.
std::map<int64_t, int64_t> op_streams(Database& db) {
  std::map<int64_t, int64_t> stream_of;
  Statement rows = db.prepare(
      "SELECT connectionId, MIN(streamId) FROM TASK "
      "WHERE connectionId IN (SELECT connectionId FROM COMMUNICATION_OP) GROUP BY connectionId");
  while (rows.step()) stream_of[rows.column_int(0)] = rows.column_int(1);
  return stream_of;
}

void add_ops(Database& db, const fs::path& out, const ascend::ParallelGroups& groups,
             RankTrace& trace) {
  if (!has_table(db, "COMMUNICATION_OP")) return;  // a run without communication
  require_table(db, "COMMUNICATION_OP",
                {"opName", "startNs", "endNs", "connectionId", "groupName", "dataType", "count",
                 "opType"});
  const bool dtype_names = has_table(db, "ENUM_HCCL_DATA_TYPE");
  Statement rows = db.prepare(fmt::format(
      "SELECT n.value, g.value, t.value, o.startNs, o.endNs, o.count, {}, o.connectionId "
      "FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS n ON n.id = o.opName "
      "LEFT JOIN STRING_IDS g ON g.id = o.groupName LEFT JOIN STRING_IDS t ON t.id = o.opType "
      "{} ORDER BY o.startNs",
      dtype_names ? "d.name" : "''",
      dtype_names ? "LEFT JOIN ENUM_HCCL_DATA_TYPE d ON d.id = o.dataType" : ""));
  const std::map<int64_t, int64_t> streams = op_streams(db);
  const std::map<std::string, std::set<int>> linked = read_analysis_db(out);
  while (rows.step()) {
    const std::string comm_name = rows.column_text(1);
    ascend::HcclOp op{rows.column_text(0), rows.column_text(2), rows.column_int(3),
                      rows.column_int(4), rows.column_is_null(5) ? -1 : rows.column_int(5),
                      rows.column_text(6), 0,
                      comm_name.empty() ? "" : ascend::hccl_group_id(comm_name), {}};
    auto stream = streams.find(rows.column_int(7));
    if (stream != streams.end()) op.stream = static_cast<uint32_t>(stream->second);
    op.group_ranks = ascend::group_ranks(op.group, groups, linked);
    ascend::add_hccl_op(trace, std::move(op));
  }
}

// META_DATA's parallel_group_info, when the run recorded it.
ascend::ParallelGroups parallel_groups(Database& db) {
  if (!columns_of(db, "META_DATA").contains("value")) return {};
  Statement rows = db.prepare("SELECT value FROM META_DATA WHERE name = 'parallel_group_info'");
  return rows.step() ? ascend::parallel_groups(rows.column_text(0)) : ascend::ParallelGroups{};
}

std::string host_name(Database& db) {
  if (!columns_of(db, "HOST_INFO").contains("hostName")) return "";
  Statement rows = db.prepare("SELECT hostName FROM HOST_INFO LIMIT 1");
  return rows.step() ? rows.column_text(0) : "";
}

}  // namespace

RankTrace read_ascend_db(const fs::path& dir, const ReadOptions& options) {
  RankTrace trace;
  trace.source = dir.string();
  trace.format = "ascend-db";
  fs::path out = ascend::profiler_output(dir);
  trace.rank = ascend::rank_of(dir);
  fs::path file = database_file(out, trace.rank);
  trace.bytes_read = fs::file_size(file);
  Database db = open_database(file);
  require_table(db, "STRING_IDS", {"id", "value"});
  require_table(db, "TASK", {"startNs", "endNs", "globalTaskId", "taskType", "streamId",
                             "connectionId"});
  require_table(db, "COMPUTE_TASK_INFO", {"globalTaskId"});
  add_tasks(db, trace);
  add_steps(db, options, trace);
  const ascend::ParallelGroups groups = parallel_groups(db);
  trace.world_size = groups.world_size;
  add_ops(db, out, groups, trace);
  trace.host = host_name(db);
  ascend::finish(trace);
  return trace;
}

}  // namespace plumb::step
