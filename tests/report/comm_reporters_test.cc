#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <vector>

#include "comm/result.h"
#include "comm/rounds.h"
#include "report/comm_reporter.h"
#include "support/subprocess.h"

namespace plumb::report {
namespace {

using comm::Row;

Row make_row(std::string layer, std::string group, int ranks, std::string coll, uint64_t bytes,
             double time_us, double busbw_factor, int straggler) {
  Row r;
  r.layer = std::move(layer);
  r.group = std::move(group);
  r.group_ranks = ranks;
  r.collective = std::move(coll);
  r.dtype = "float32";
  r.op = r.collective == "allgather" ? "none" : "sum";
  r.requested_bytes = bytes;
  r.bytes = bytes;
  r.count = bytes / 4 / (r.collective == "allgather" ? ranks : 1);
  r.time_us = time_us;
  r.algbw_gbps = static_cast<double>(bytes) / 1e9 / (time_us * 1e-6);
  r.busbw_gbps = r.algbw_gbps * busbw_factor;
  r.wrong = 0;
  r.p50_us = time_us * 0.98;
  r.p99_us = time_us * 1.5;
  r.max_us = time_us * 2;
  r.straggler = straggler;
  r.straggler_share = 0.45;
  return r;
}

// A hand-made result: 4 ranks, 2 nodes; world and node layers; two sizes.
comm::Result sample() {
  comm::Result res;
  res.created = "2026-12-02T10:00:00Z";
  res.backend = "mpi";
  res.ranks = 4;
  res.hosts = {"h0", "h1"};
  res.env = {{"NCCL_ALGO", "Ring"}};
  res.settings = {1024, 4 * 1024 * 1024, 4096, 0, 20, 5, true, "float32", "sum", 0};
  res.placement.racks = {"rack0"};
  res.placement.nodes = {{"h0", 0, 0}, {"h1", 0, 1}};
  res.placement.ranks = {{"h0", 0, 0}, {"h0", 0, 1}, {"h1", 1, 0}, {"h1", 1, 1}};
  res.layers = {{"world", {{"world", {0, 1, 2, 3}}}, ""},
                {"node", {{"h0", {0, 1}}, {"h1", {2, 3}}}, ""},
                {"rail", {}, "every group has a single rank"}};
  res.rows = {
      make_row("world", "world", 4, "allreduce", 1024, 12.5, 1.5, 2),
      make_row("world", "world", 4, "allreduce", 4194304, 2500.0, 1.5, 3),
      make_row("node", "h0", 2, "allgather", 1024, 8.0, 0.5, 1),
      make_row("node", "h1", 2, "allgather", 1024, 10.0, 0.5, 3),
      make_row("node", "h0", 2, "allgather", 4194304, 800.0, 0.5, 0),
      make_row("node", "h1", 2, "allgather", 4194304, 1000.0, 0.5, 2),
  };
  res.rows[3].wrong = 2;
  return res;
}

// Compares with tests/fixtures/golden/<name>. After an intended change of format, rerun with
// PLUMB_UPDATE_GOLDEN=1 to rewrite the file, and review its diff.
void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(PLUMB_TEST_FIXTURES) + "/golden/" + name;
  if (std::getenv("PLUMB_UPDATE_GOLDEN")) test::write_file(path, actual);
  EXPECT_EQ(actual, test::read_file(path)) << "golden file " << path;
}

TEST(CommConsoleReporter, Golden) {
  std::ostringstream out;
  CommConsoleReporter().report(sample(), out);
  expect_golden("comm_console.txt", out.str());
}

TEST(CommCsvReporter, Golden) {
  std::ostringstream out;
  CommCsvReporter().report(sample(), out);
  expect_golden("comm.csv", out.str());
}

TEST(CommJsonReporter, SchemaAndFields) {
  std::ostringstream out;
  CommJsonReporter().report(sample(), out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "plumb.comm/1");
  EXPECT_EQ(j["created"], "2026-12-02T10:00:00Z");
  EXPECT_EQ(j["backend"], "mpi");
  EXPECT_EQ(j["ranks"], 4);
  EXPECT_EQ(j["hosts"], nlohmann::json({"h0", "h1"}));
  EXPECT_EQ(j["env"]["NCCL_ALGO"], "Ring");
  ASSERT_EQ(j["results"].size(), 6u);
  const auto& row = j["results"][5];
  for (const char* key : {"layer", "group", "collective", "dtype", "op", "bytes", "count",
                          "time_us", "algbw_gbps", "busbw_gbps", "wrong", "p50_us", "p99_us",
                          "max_us"}) {
    EXPECT_TRUE(row.contains(key)) << key;
  }
  EXPECT_EQ(row["group"], "h1");
  EXPECT_EQ(row["wrong"], 0);
  EXPECT_EQ(j["layers"][2]["skipped"], "every group has a single rank");
  EXPECT_EQ(j["placement"]["ranks"][2]["node"], "h1");
  // Round trip of a row through JSON.
  EXPECT_EQ(row.get<Row>().time_us, 1000.0);
}

// Average over sizes ≥ 1 MiB only: allgather@node has one such size; groups 800 us and 1000 us.
TEST(Summary, AveragesOnlyLargeSizesPerGroup) {
  const auto summaries = comm::summarize(sample());
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].layer, "world");
  EXPECT_EQ(summaries[0].sizes, 1);
  EXPECT_NEAR(summaries[0].avg_busbw_gbps, 4194304 / 1e9 / 2500e-6 * 1.5, 1e-9);
  const double fast = 4194304 / 1e9 / 800e-6 * 0.5;
  const double slow = 4194304 / 1e9 / 1000e-6 * 0.5;
  EXPECT_EQ(summaries[1].slowest_group, "h1");
  EXPECT_NEAR(summaries[1].avg_busbw_gbps, (fast + slow) / 2, 1e-9);
  EXPECT_NEAR(summaries[1].slowest_busbw_gbps, slow, 1e-9);
  EXPECT_NEAR(summaries[1].spread, 0.2, 1e-12);
  EXPECT_EQ(comm::total_wrong(sample()), 2);
}

// A 1 MiB allgather on 3 ranks measures 1048572 bytes: it still counts as a 1 MiB size.
TEST(Summary, UsesTheRequestedSize) {
  comm::Result res;
  res.rows = {make_row("world", "world", 3, "allgather", 1048572, 100.0, 2.0 / 3, 0)};
  res.rows[0].requested_bytes = 1048576;
  const auto summaries = comm::summarize(res);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].sizes, 1);
}

// The rows of `result` a size at a time, as run_sweep hands them over.
std::vector<std::vector<Row>> by_size(const comm::Result& result) {
  std::vector<std::vector<Row>> sizes;
  for (const Row& r : result.rows) {
    if (sizes.empty() || sizes.back().front().layer != r.layer ||
        sizes.back().front().collective != r.collective ||
        sizes.back().front().requested_bytes != r.requested_bytes) {
      sizes.emplace_back();
    }
    sizes.back().push_back(r);
  }
  return sizes;
}

comm::Result without_rows(comm::Result result) {
  result.rows.clear();
  return result;
}

// Streamed a size at a time, one round prints exactly what the whole-result reporter prints.
TEST(CommConsoleStream, OneRoundPrintsTheSameTablesAsItGoes) {
  std::ostringstream whole;
  CommConsoleReporter().report(sample(), whole);
  std::ostringstream streamed;
  CommConsoleStream stream(streamed);
  stream.begin(without_rows(sample()));
  const auto sizes = by_size(sample());
  stream.rows(sizes[0], 1);
  // The first line is out before the next size is measured; no summary until the table ends.
  EXPECT_NE(streamed.str().find("\n        1024           256     float     sum"),
            std::string::npos) << streamed.str();
  EXPECT_EQ(streamed.str().find("# allreduce @ world: avg busbw"), std::string::npos);
  for (size_t i = 1; i < sizes.size(); ++i) stream.rows(sizes[i], 1);
  stream.end(sample());
  EXPECT_EQ(streamed.str(), whole.str());
}

// With rounds, each round's lines as measured (no average: one round's is not the result), then
// the combined tables with their summaries.
// The second round is 10% slower everywhere: combined, each size keeps the lower middle round
// (the slower) and its rounds± is |1 - 0.9| / 0.9 = 11.1% (comm/rounds.h).
TEST(CommConsoleStream, RoundsThenTheCombinedTables) {
  comm::Result res = sample();
  res.settings.rounds = 2;
  comm::Result second = res;
  for (comm::Row& r : second.rows) {
    r.time_us /= 0.9;
    r.algbw_gbps *= 0.9;
    r.busbw_gbps *= 0.9;
  }
  std::ostringstream out;
  CommConsoleStream stream(out);
  stream.begin(without_rows(res));
  for (const auto& size : by_size(res)) stream.rows(size, 1);
  for (const auto& size : by_size(second)) stream.rows(size, 2);
  comm::Result combined = res;
  std::vector<comm::Row> all = res.rows;
  all.insert(all.end(), second.rows.begin(), second.rows.end());
  combined.rows = comm::combine_rounds(all);
  stream.end(combined);
  const std::string text = out.str();
  const std::string tables = text.substr(text.find("rounds combined"));
  EXPECT_NE(tables.find("20.0%    11.1%  rank"), std::string::npos) << tables;
  expect_golden("comm_console_rounds.txt", text);
}

// The partial JSON is valid between any two sizes: complete false, the rows so far, no summary.
TEST(CommJsonStream, ValidJsonAfterEverySizeMarkedIncomplete) {
  const std::string path = test::temp_dir("comm-json-stream") + "/out.json";
  CommJsonStream stream("--json", path);
  stream.begin(without_rows(sample()));
  auto doc = nlohmann::json::parse(test::read_file(path));
  EXPECT_EQ(doc["schema"], "plumb.comm/1");
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["results"], nlohmann::json::array());
  EXPECT_EQ(doc["notes"], nlohmann::json::array({kPartialJsonNote}));
  EXPECT_FALSE(doc.contains("summary"));
  EXPECT_EQ(doc["layers"].size(), 3u);
  size_t rows = 0;
  for (const auto& size : by_size(sample())) {
    stream.rows(size, 1);
    rows += size.size();
    doc = nlohmann::json::parse(test::read_file(path));
    EXPECT_EQ(doc["results"].size(), rows);
  }
  EXPECT_EQ(doc["results"][5].get<Row>().time_us, 1000.0);
  EXPECT_EQ(doc["results"][5]["group"], "h1");
  // The finished document says complete.
  std::ostringstream finished;
  CommJsonReporter().report(sample(), finished);
  EXPECT_EQ(nlohmann::json::parse(finished.str())["complete"], true);
}

TEST(CommCsvStream, TheHeaderThenEachSizesRowsAppended) {
  const std::string path = test::temp_dir("comm-csv-stream") + "/out.csv";
  CommCsvStream stream("--csv", path);
  stream.begin(without_rows(sample()));
  EXPECT_EQ(test::read_file(path), comm_csv_header());
  for (const auto& size : by_size(sample())) stream.rows(size, 1);
  std::ostringstream whole;
  CommCsvReporter().report(sample(), whole);
  EXPECT_EQ(test::read_file(path), whole.str());
}

}  // namespace
}  // namespace plumb::report
