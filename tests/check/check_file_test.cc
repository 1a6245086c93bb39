#include "check/check_file.h"

#include <gtest/gtest.h>

#include "check_test_support.h"
#include "support/subprocess.h"

namespace plumb::check {
namespace {

using plumb::test::error_message;

std::string file_with(const std::string& name, const std::string& text) {
  const std::string path = plumb::test::temp_dir(name) + "/site.yaml";
  plumb::test::write_file(path, text);
  return path;
}

TEST(CheckFile, EveryProblemOfTheFileInOneError) {
  const std::string path = file_with("check_file_bad",
                                     "schema: plumb.check-file/2\n"
                                     "settings: {tool_timeout_s: 600}\n"
                                     "checks:\n"
                                     "  host.irqbalanse: {allowed: true}\n"
                                     "  host.hugepages: {page: 4}\n"
                                     "  host.disk: 5\n");
  EXPECT_EQ(error_message([&] { load_check_file(path); }),
            path + ":1: schema: expected 'plumb.check-file/1', got 'plumb.check-file/2'\n" + path +
                ":2: settings.tool_timeout_s: must be a number from 0.1 to 60, got '600'\n" + path +
                ":4: unknown key 'host.irqbalanse' in checks (did you mean 'host.irqbalance'?); "
                "expected one of " + [] {
                  std::string all;
                  for (const CheckSpec& s : node_checks()) all += (all.empty() ? "" : ", ") + s.name;
                  return all;
                }() + "\n" + path +
                ":5: unknown key 'page' in checks.host.hugepages (did you mean 'pages'?); expected "
                "one of pages, thp, enabled\n" + path +
                ":6: checks.host.disk: must be a map (its expected values and thresholds)");
}

TEST(CheckFile, SettingsAndSectionsAreRead) {
  const std::string path = file_with("check_file_good",
                                     "schema: plumb.check-file/1\nsku: 8x H100\n"
                                     "settings: {tool_timeout_s: 3, checkpoint_dir: /ckpt}\n"
                                     "checks:\n  host.irqbalance: {enabled: false}\n");
  const CheckFile f = load_check_file(path);
  EXPECT_EQ(f.sku, "8x H100");
  EXPECT_EQ(f.tool_timeout_s, 3.0);
  EXPECT_EQ(f.checkpoint_dir, "/ckpt");
  EXPECT_FALSE(f.enabled(*find_check("host.irqbalance")));
  EXPECT_TRUE(f.enabled(*find_check("host.hugepages")));
}

TEST(CheckFile, WhatGenconfWritesReadsBackAndHoldsTheNodesValues) {
  const test::NodeTree tree("check_genconf_tree");
  tree.write("/proc/meminfo", "MemTotal: 100 kB\nHugePages_Total:    1024\nHugepagesize:       2048 kB\n");
  tree.write("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
  tree.write("/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002\n");
  NodeContext ctx = tree.context();
  ctx.environment = {{"NCCL_IB_HCA", "mlx5"}, {"HOME", "/root"}, {"MASTER_PORT", "29500"}};
  const std::string text = write_check_file(ctx, "test sku", "2026-12-07T00:00:00Z");
  EXPECT_NE(text.find("host.hugepages:\n    pages: 1024\n    thp: madvise\n"), std::string::npos) << text;
  EXPECT_NE(text.find("versions.firmware:\n    expected:\n      mlx5_0: 28.39.1002\n"), std::string::npos);
  EXPECT_NE(text.find("versions.env:\n    expected:\n      NCCL_IB_HCA: mlx5\n"), std::string::npos);
  EXPECT_EQ(text.find("MASTER_PORT"), std::string::npos);
  const CheckFile back = load_check_file(file_with("check_genconf_back", text));
  EXPECT_EQ(back.sku, "test sku");
}

}  // namespace
}  // namespace plumb::check
