#include "common/partial_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

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

// Each write lands at once; a text rewritten at an offset keeps what came before it.
TEST(PartialFile, GrowsInPlaceAndTheFinishedFileReplacesItWhole) {
  const std::string path = test::temp_dir("partial-file-grow") + "/out.json";
  test::write_file(path, "previous result\n");
  OutputFile final_file("--json", path);
  PartialFile partial("--json", path);
  partial.start("[]\n");
  EXPECT_EQ(test::read_file(path), "[]\n");
  partial.write_at(1, "1]\n");
  EXPECT_EQ(test::read_file(path), "[1]\n");
  partial.write_at(2, ",2]\n");
  EXPECT_EQ(test::read_file(path), "[1,2]\n");
  partial.append("x");
  EXPECT_EQ(test::read_file(path), "[1,2]\nx");
  EXPECT_EQ(partial.size(), 7u);
  final_file.stream() << "finished\n";
  final_file.commit();
  EXPECT_EQ(test::read_file(path), "finished\n");
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
