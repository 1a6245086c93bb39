#include "cli/serve_store.h"

#include <gtest/gtest.h>

#include <sstream>

#include "baseline/record_kind.h"
#include "baseline/store.h"
#include "report/serve_reporter.h"
#include "support/subprocess.h"

namespace plumb::cli {
namespace {

TEST(ServeStore, TheHostOfAUrl) {
  EXPECT_EQ(url_host("http://user:secret@node7:8000/v1/completions"), "node7");
  EXPECT_EQ(url_host("https://serve.example.com/v1"), "serve.example.com");
  EXPECT_EQ(url_host("http://[::1]:8000"), "::1");
  EXPECT_EQ(url_host("127.0.0.1:9000"), "127.0.0.1");
}

// --store keeps the result whole: it reads back as the same plumb.serve/1, a serving record.
TEST(ServeStore, AResultIsStoredAsAServingRecord) {
  serve::ServeResult result;
  result.setup.url = "http://node7:8000/v1/completions";
  result.setup.api = "openai-completions";
  serve::ServeRun run;
  run.concurrency = 4;
  run.summary.completed = 10;
  result.runs.push_back(run);
  ServeReportOptions o;
  o.db = test::temp_dir("serve-store") + "/plumb.db";
  o.label = "after-driver";
  std::ostringstream note;
  const int64_t id = store_serve_result(report::serve_json(result), result.setup.url, o,
                                        "plumb serve bench", note);
  EXPECT_EQ(note.str(), "plumb serve bench: stored as baseline 1 in " + o.db + "\n");
  baseline::Store store(o.db, baseline::StoreMode::kReadOnly);
  const baseline::Record r = store.load(id);
  EXPECT_EQ(baseline::kind_of(r), baseline::RecordKind::kServe);
  EXPECT_EQ(r.label, "after-driver");
  EXPECT_EQ(r.hosts, std::vector<std::string>{"node7"});
  EXPECT_EQ(r.serve, report::serve_json(result));
  EXPECT_EQ(report::serve_from_json(r.serve, "x").runs.at(0).concurrency, 4);
  EXPECT_EQ(store.list().at(0).serve_runs, 1);
}

}  // namespace
}  // namespace plumb::cli
