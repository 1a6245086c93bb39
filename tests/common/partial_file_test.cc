#include "common/partial_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/output_file.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

TEST(PartialFile, OnlyRegularFilesAndNewPaths) {
  const std::string dir = test::temp_dir("partial-file-wanted");
  EXPECT_FALSE(PartialFile::wanted(""));
  EXPECT_FALSE(PartialFile::wanted("-"));
  EXPECT_FALSE(PartialFile::wanted("/dev/null"));
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_FALSE(PartialFile::wanted(dir + "/fifo"));
  EXPECT_FALSE(PartialFile::wanted(dir));  // a folder: OutputFile refuses it
  EXPECT_TRUE(PartialFile::wanted(dir + "/new.json"));
  test::write_file(dir + "/old.json", "x");
  EXPECT_TRUE(PartialFile::wanted(dir + "/old.json"));
}

// The partial form goes beside the target, whose previous content stays until the finished file
// replaces it whole; each write lands at once, and a text rewritten at an offset keeps what came
// before it. Once the finished file is in place the partial one is removed.
TEST(PartialFile, BesideTheTargetUntilTheFinishedFileReplacesIt) {
  const std::string dir = test::temp_dir("partial-file-grow");
  const std::string target = dir + "/out.json";
  test::write_file(target, "previous result\n");
  OutputFile final_file("--json", target);
  PartialFile partial("--json", partial_path(target));
  ASSERT_EQ(partial.path(), dir + "/out.json.partial");
  partial.start("[]\n");
  EXPECT_EQ(test::read_file(partial.path()), "[]\n");
  partial.write_at(1, "1]\n");
  EXPECT_EQ(test::read_file(partial.path()), "[1]\n");
  partial.write_at(2, ",2]\n");
  EXPECT_EQ(test::read_file(partial.path()), "[1,2]\n");
  partial.append("x");
  EXPECT_EQ(test::read_file(partial.path()), "[1,2]\nx");
  EXPECT_EQ(partial.size(), 7u);
  EXPECT_EQ(test::read_file(target), "previous result\n");
  final_file.stream() << "finished\n";
  final_file.commit();
  partial.discard();
  EXPECT_EQ(test::read_file(target), "finished\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.json.partial"));
}

// A partial file a killed run left is started afresh by the next run; discard() removes only a
// file it started itself.
TEST(PartialFile, ALeftoverIsTruncatedAndOnlyAStartedFileIsDiscarded) {
  const std::string path = test::temp_dir("partial-file-leftover") + "/out.csv.partial";
  test::write_file(path, "header\nrows of a killed run\n");
  PartialFile never_started("--csv", path);
  never_started.discard();
  EXPECT_EQ(test::read_file(path), "header\nrows of a killed run\n");
  PartialFile partial("--csv", path);
  partial.start("header\n");
  EXPECT_EQ(test::read_file(path), "header\n");
  partial.discard();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(partial.ok());
  partial.append("row\n");  // after discard: nothing is written, nothing is created
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(PartialFile, AFailureIsSaidOnceAndTheRunGoesOn) {
  PartialFile partial("--csv", "/nonexistent-folder/out.csv");
  testing::internal::CaptureStderr();
  partial.start("header\n");
  partial.append("row\n");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "plumb: warning: --csv /nonexistent-folder/out.csv: the partial file cannot be "
            "written (No such file or directory): no more rows go to it until the end, when the "
            "whole file is written\n");
  EXPECT_FALSE(partial.ok());
}

}  // namespace
}  // namespace plumb
