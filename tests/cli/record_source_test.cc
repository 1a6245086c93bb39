#include "cli/record_source.h"

#include <gtest/gtest.h>

#include <sstream>

#include "comm/result.h"
#include "common/error.h"
#include "report/comm_reporter.h"
#include "support/subprocess.h"

namespace plumb::cli {
namespace {

// Two ranks, one allreduce size: what plumb comm writes, partial and finished.
comm::Result two_ranks() {
  comm::Result res;
  res.created = "2026-12-02T10:00:00Z";
  res.backend = "mpi";
  res.ranks = 2;
  res.hosts = {"h0"};
  res.settings = {1 << 20, 1 << 20, 2, 0, 20, 5, true, "float32", "sum", 0};
  res.layers = {{"world", {{"world", {0, 1}}}, ""}};
  comm::Row r;
  r.layer = r.group = "world";
  r.group_ranks = 2;
  r.collective = "allreduce";
  r.dtype = "float32";
  r.op = "sum";
  r.requested_bytes = r.bytes = 1 << 20;
  r.count = r.bytes / 4;
  r.time_us = 100.0;
  r.algbw_gbps = static_cast<double>(r.bytes) / 1e9 / (r.time_us * 1e-6);
  r.busbw_gbps = r.algbw_gbps;
  r.p50_us = r.p99_us = r.max_us = r.time_us;
  res.rows = {r};
  return res;
}

// The partial file plumb comm writes beside --json while it measures ("complete": false) is not
// a result: plumb diff, report, plan --calibrate and step --baseline refuse it, naming the file.
TEST(LoadRecord, APartialPlumbCommFileIsRefused) {
  const std::string dir = test::temp_dir("record-source-partial");
  const std::string partial = dir + "/out.json.partial";
  comm::Result context = two_ranks();
  const std::vector<comm::Row> rows = context.rows;
  context.rows.clear();
  report::CommJsonStream stream("--json", partial);
  stream.begin(context);
  stream.rows(rows, 1);
  try {
    load_record(partial, "");
    FAIL() << "a partial file was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_EQ(std::string(e.what()),
              partial + ": says \"complete\": false: the partial file of a plumb comm sweep that "
                        "did not finish (the rows it measured, no summary), which no command "
                        "takes as a result; use the --json file a finished sweep writes");
  }
}

TEST(LoadRecord, TheFinishedFileIsARecord) {
  const std::string path = test::temp_dir("record-source-finished") + "/out.json";
  std::ostringstream finished;
  report::CommJsonReporter().report(two_ranks(), finished);
  test::write_file(path, finished.str());
  const baseline::Record record = load_record(path, "");
  ASSERT_EQ(record.rows.size(), 1u);
  EXPECT_EQ(record.rows[0].busbw_gbps, two_ranks().rows[0].busbw_gbps);
  EXPECT_EQ(record.comm["complete"], true);
}

}  // namespace
}  // namespace plumb::cli
