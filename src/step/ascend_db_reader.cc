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
// Damage (docs/step.md, "Damaged input"): a file shorter than its header states is an Error; a
// time that is NULL or not an integer is an Error naming the table, row and column; a device
// task or HCCL op with a negative start or an end before its start is dropped and counted
// (RankTrace::dropped); a step with such times is an Error.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
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

// The time columns of one table's rows. Each query selects the row's rowid at `rowid`, so that
// a message can name the row.
struct TimeColumns {
  std::string file;  // the database, for messages
  std::string_view table;
  int rowid = 0;

  // An integer of ns (INTEGER, or TEXT of digits as PYTORCH_API writes "1736410576386409710"),
  // exactly; NULL or anything else is an Error naming the table, row and column.
  int64_t ns(const Statement& row, int index, std::string_view column) const {
    if (row.column_is_null(index)) fail(row, fmt::format("{} is NULL", column));
    std::string text = row.column_text(index);
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
      constexpr size_t kShown = 40;
      fail(row, fmt::format("{} is '{}'", column, text.substr(0, kShown)));
    }
    return value;
  }

  // "ascend_pytorch_profiler_0.db TASK row 12", for the notes.
  std::string where(const Statement& row) const {
    return fmt::format("{} {} row {}", fs::path(file).filename().string(), table,
                       row.column_int(rowid));
  }

  [[noreturn]] void fail(const Statement& row, std::string_view what) const {
    throw Error(fmt::format("{}: table {}, row {}: {}, expected an integer of ns", file, table,
                            row.column_int(rowid), what));
  }
};

// SQLite's header states the database's size in pages (offset 28; valid while the change
// counter at 24 equals the version-valid-for number at 92; sqlite.org/fileformat2.html): a file
// shorter than that was cut short, which SQLite itself reports only as "malformed".
void check_not_cut_short(const fs::path& file) {
  constexpr size_t kHeaderBytes = 100;
  constexpr std::string_view kMagic("SQLite format 3\0", 16);
  std::array<unsigned char, kHeaderBytes> header{};
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(header.data()), kHeaderBytes);
  if (in.gcount() < static_cast<std::streamsize>(kHeaderBytes) ||
      std::memcmp(header.data(), kMagic.data(), kMagic.size()) != 0) {
    return;  // not a database at all: open_database() says so
  }
  auto big_endian = [&](size_t at, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; ++i) value = (value << 8) | header[at + i];
    return value;
  };
  constexpr size_t kPageSizeAt = 16, kChangeCounterAt = 24, kPagesAt = 28, kValidForAt = 92;
  constexpr uint64_t kPageSizeOne = 65536;  // a stored page size of 1 means 65536
  uint64_t page_size = big_endian(kPageSizeAt, 2);
  if (page_size == 1) page_size = kPageSizeOne;
  const uint64_t pages = big_endian(kPagesAt, 4);
  if (pages == 0 || big_endian(kChangeCounterAt, 4) != big_endian(kValidForAt, 4)) return;
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (!ec && size < pages * page_size) {
    throw Error(fmt::format("{}: the file is cut short: {} bytes of the {} its header states; "
                            "export the profile again",
                            file.string(), size, pages * page_size));
  }
}

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
  check_not_cut_short(file);
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

// A TASK row (rowid, startNs, endNs, streamId, ...) as a span; dropped and counted when its
// times cannot be true.
void add_task(RankTrace& trace, const TimeColumns& columns, const Statement& row,
              Activity activity) {
  const int64_t start = columns.ns(row, 1, "startNs");
  const int64_t end = columns.ns(row, 2, "endNs");
  auto where = [&] { return columns.where(row); };
  if (start < 0) return drop_event(trace, "a negative startNs", start, where);
  if (end < start) return drop_event(trace, "endNs before startNs", start, where);
  ascend::add_span(trace, start, end, static_cast<uint32_t>(row.column_int(3)), activity);
}

void add_tasks(Database& db, RankTrace& trace) {
  const TimeColumns columns{db.path(), "TASK", 0};
  Statement compute = db.prepare(
      "SELECT t.rowid, t.startNs, t.endNs, t.streamId FROM TASK t "
      "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId");
  while (compute.step()) add_task(trace, columns, compute, Activity::kCompute);
  Statement other = db.prepare(
      "SELECT t.rowid, t.startNs, t.endNs, t.streamId, s.value FROM TASK t "
      "JOIN STRING_IDS s ON s.id = t.taskType "
      "WHERE t.globalTaskId NOT IN (SELECT globalTaskId FROM COMPUTE_TASK_INFO)");
  while (other.step()) {
    std::string type = other.column_text(4);
    if (ascend::is_memory_task(type, type)) add_task(trace, columns, other, Activity::kMemory);
  }
}

// A step's span from a row (rowid, step, startNs, endNs): one whose times cannot be true is an
// Error, since every figure of the step depends on it.
StepSpan step_span(const TimeColumns& columns, const Statement& row, int64_t step) {
  const int64_t start = columns.ns(row, 2, "startNs");
  const int64_t end = columns.ns(row, 3, "endNs");
  if (start < 0 || end < start) {
    throw Error(fmt::format("{}: table {}, row {} (step {}): {}; a step's span must be known",
                            columns.file, columns.table, row.column_int(0), step,
                            start < 0 ? fmt::format("startNs is negative ({})", start)
                                      : fmt::format("endNs {} is before startNs {}", end, start)));
  }
  return StepSpan{step, start, end};
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
    const TimeColumns columns{db.path(), "PYTORCH_API", 0};
    Statement rows = db.prepare("SELECT rowid, name, startNs, endNs FROM PYTORCH_API");
    while (rows.step()) {
      auto found = step_of_name.find(rows.column_int(1));
      if (found == step_of_name.end()) continue;
      trace.steps.push_back(step_span(columns, rows, found->second));
    }
  }
  if (trace.steps.empty() && has_table(db, "STEP_TIME")) {
    require_table(db, "STEP_TIME", {"id", "startNs", "endNs"});
    const TimeColumns columns{db.path(), "STEP_TIME", 0};
    Statement rows = db.prepare("SELECT rowid, id, startNs, endNs FROM STEP_TIME");
    while (rows.step()) trace.steps.push_back(step_span(columns, rows, rows.column_int(1)));
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
  constexpr int kOpRowid = 8;  // the rowid's column in the query below
  if (!has_table(db, "COMMUNICATION_OP")) return;  // a run without communication
  require_table(db, "COMMUNICATION_OP",
                {"opName", "startNs", "endNs", "connectionId", "groupName", "dataType", "count",
                 "opType"});
  const bool dtype_names = has_table(db, "ENUM_HCCL_DATA_TYPE");
  Statement rows = db.prepare(fmt::format(
      "SELECT n.value, g.value, t.value, o.startNs, o.endNs, o.count, {}, o.connectionId, "
      "o.rowid "
      "FROM COMMUNICATION_OP o LEFT JOIN STRING_IDS n ON n.id = o.opName "
      "LEFT JOIN STRING_IDS g ON g.id = o.groupName LEFT JOIN STRING_IDS t ON t.id = o.opType "
      "{} ORDER BY o.startNs",
      dtype_names ? "d.name" : "''",
      dtype_names ? "LEFT JOIN ENUM_HCCL_DATA_TYPE d ON d.id = o.dataType" : ""));
  const std::map<int64_t, int64_t> streams = op_streams(db);
  const std::map<std::string, std::set<int>> linked = read_analysis_db(out);
  const TimeColumns columns{db.path(), "COMMUNICATION_OP", kOpRowid};
  while (rows.step()) {
    const int64_t start = columns.ns(rows, 3, "startNs");
    const int64_t end = columns.ns(rows, 4, "endNs");
    auto where = [&] { return fmt::format("{} ('{}')", columns.where(rows), rows.column_text(0)); };
    if (start < 0) {
      drop_event(trace, "a negative startNs", start, where);
      continue;
    }
    if (end < start) {
      drop_event(trace, "endNs before startNs", start, where);
      continue;
    }
    const std::string comm_name = rows.column_text(1);
    ascend::HcclOp op{rows.column_text(0), rows.column_text(2), start, end,
                      rows.column_is_null(5) ? -1 : rows.column_int(5),
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

std::string db_host_name(Database& db) {
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
  trace.host = db_host_name(db);
  ascend::finish(trace);
  return trace;
}

}  // namespace plumb::step
