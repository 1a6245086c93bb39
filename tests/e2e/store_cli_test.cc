// plumb list / show / export on a store written through the library.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "baseline/store.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

const std::string kPlumb = PLUMB_BIN;

std::string make_store() {
  const std::string path = test::temp_dir("store-cli") + "/plumb.db";
  baseline::Store store(path);
  baseline::Record r;
  r.created = "2026-12-02T10:00:00Z";
  r.label = "before-upgrade";
  r.hosts = {"gpu-001", "gpu-002"};
  r.source = "plumb baseline";
  r.env = {{"schema", "plumb.env/1"}, {"versions", {{"nccl", "2.18.3"}, {"cann", nullptr}}}};
  r.comm = {{"schema", "plumb.comm/1"}, {"backend", "nccl"}, {"ranks", 16}};
  for (uint64_t bytes : {uint64_t{1} << 20, uint64_t{1} << 24}) {
    comm::Row row;
    row.layer = "world";
    row.group = "world";
    row.group_ranks = 16;
    row.collective = "allreduce";
    row.dtype = "bfloat16";
    row.op = "sum";
    row.requested_bytes = row.bytes = bytes;
    row.count = bytes / 2;
    row.time_us = static_cast<double>(bytes) / 100e3;  // 100 GB/s algbw
    row.algbw_gbps = 100;
    row.busbw_gbps = 187.5;
    row.wrong = 0;
    r.rows.push_back(row);
  }
  store.save(r);
  r.label = "after-upgrade";
  store.save(r);
  return path;
}

TEST(StoreCli, ListShowExport) {
  const std::string db = make_store();
  test::Run list = test::run_command(kPlumb + " list --db " + db);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out,
            "    id  created               label               rows  source                    hosts\n"
            "     2  2026-12-02T10:00:00Z  after-upgrade          2  plumb baseline            gpu-001,gpu-002\n"
            "     1  2026-12-02T10:00:00Z  before-upgrade         2  plumb baseline            gpu-001,gpu-002\n");

  test::Run show = test::run_command(kPlumb + " show 1 --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out,
            "# baseline 1 · 2026-12-02T10:00:00Z · plumb baseline · before-upgrade\n"
            "# hosts: gpu-001, gpu-002\n"
            "# nccl           2.18.3\n"
            "allreduce @ world: avg busbw 187.50 GB/s over 2 size(s) ≥ 1 MiB (slowest group world: "
            "187.50 GB/s)\n"
            "# 2 result row(s); plumb export 1 for all of them\n");

  test::Run exported = test::run_command(kPlumb + " export latest --db " + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const auto j = nlohmann::json::parse(exported.out);
  EXPECT_EQ(j["schema"], "plumb.baseline/1");
  EXPECT_EQ(j["id"], 2);
  EXPECT_EQ(j["label"], "after-upgrade");
  EXPECT_EQ(j["comm"]["backend"], "nccl");
  ASSERT_EQ(j["comm"]["results"].size(), 2u);
  EXPECT_EQ(j["comm"]["results"][1]["bytes"], 1 << 24);
  EXPECT_EQ(j["comm"]["results"][1]["busbw_gbps"], 187.5);
  EXPECT_TRUE(j["env"]["versions"]["cann"].is_null());
}

TEST(StoreCli, Errors) {
  const std::string dir = test::temp_dir("store-cli-errors");
  test::Run empty = test::run_command(kPlumb + " show --db " + dir + "/plumb.db");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "plumb: error: " + dir + "/plumb.db: the store holds no baseline yet\n");
  test::Run bad = test::run_command(kPlumb + " export abc --db " + dir + "/plumb.db");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "plumb: error: 'abc' is not a baseline id: expected a positive number or "
                     "'latest'\n");
  test::write_file(dir + "/garbage.db", std::string(4096, 'x'));
  test::Run garbage = test::run_command(kPlumb + " list --db " + dir + "/garbage.db");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_EQ(garbage.err, "plumb: error: " + dir + "/garbage.db: file is not a database\n");
}

}  // namespace
}  // namespace plumb
