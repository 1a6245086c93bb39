#include "common/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <vector>

#include "common/error.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

namespace fs = std::filesystem;

// The names in a folder, sorted: a temporary file left behind shows here.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(OutputFile, ReplacesTheTargetOnlyOnCommit) {
  const std::string dir = test::temp_dir("output-file-commit");
  const std::string path = dir + "/out.json";
  test::write_file(path, "previous\n");
  {
    OutputFile file("--json", path);
    file.stream() << "new content\n";
    EXPECT_EQ(test::read_file(path), "previous\n");  // not yet
    EXPECT_EQ(entries(dir).size(), 2u);              // the target and the temporary file
    file.commit();
  }
  EXPECT_EQ(test::read_file(path), "new content\n");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"out.json"});
}

TEST(OutputFile, AnUncommittedFileLeavesTheTargetAndNoTemporary) {
  const std::string dir = test::temp_dir("output-file-abandon");
  const std::string path = dir + "/out.csv";
  test::write_file(path, "good\n");
  {
    OutputFile file("--csv", path);
    file.stream() << std::string(1 << 20, 'x');
  }  // an error elsewhere: destroyed without commit
  EXPECT_EQ(test::read_file(path), "good\n");
  EXPECT_EQ(entries(dir), std::vector<std::string>{"out.csv"});
}

TEST(OutputFile, KeepsTheTargetsPermissions) {
  const std::string dir = test::temp_dir("output-file-mode");
  const std::string path = dir + "/report.html";
  test::write_file(path, "old");
  chmod(path.c_str(), 0640);
  write_output("-o", path, "new");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(OutputFile, PathsThatCannotBeWrittenFailAtOnce) {
  const std::string dir = test::temp_dir("output-file-bad");
  EXPECT_EQ(test::error_message([&] { OutputFile f("--json", dir + "/missing/x.json"); }),
            "--json " + dir + "/missing/x.json: cannot write: folder " + dir +
                "/missing does not exist");
  EXPECT_EQ(test::error_message([&] { OutputFile f("-o", dir); }),
            "-o " + dir + ": cannot write: is a directory");
  EXPECT_EQ(test::error_message([&] { OutputFile f("-o", ""); }), "-o: the path is empty");
}

TEST(OutputFile, AFullDeviceIsAnErrorNamingTheOption) {
  OutputFile file("--json", "/dev/full");
  file.stream() << "{}\n";
  EXPECT_EQ(test::error_message([&] { file.commit(); }),
            "--json /dev/full: writing failed: No space left on device; the previous file, if "
            "any, is unchanged");
}

TEST(OutputFile, DevicesAreWrittenInPlace) {
  write_output("--json", "/dev/null", "{}\n");  // no rename over the device node
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(RefuseOverlappingPaths, AnOutputThatIsAnInputOrAnotherOutput) {
  const std::string dir = test::temp_dir("output-overlap");
  test::write_file(dir + "/s.db", "store");
  const std::vector<NamedPath> inputs = {{"the store", dir + "/s.db"}};
  const std::string roundabout = dir + "/../" + fs::path(dir).filename().string() + "/s.db";
  const std::vector<NamedPath> same = {{"-o", roundabout}};
  EXPECT_EQ(test::error_message([&] { refuse_overlapping_paths(same, inputs); }),
            "-o " + roundabout + ": is also the store (" + dir +
                "/s.db); writing it would destroy what is read: choose another file");
  const std::vector<NamedPath> twice = {{"--json", dir + "/r"}, {"--csv", dir + "/./r"}};
  const std::vector<NamedPath> none;
  EXPECT_EQ(test::error_message([&] { refuse_overlapping_paths(twice, none); }),
            "--json " + dir + "/r and --csv " + dir +
                "/./r: the same file for two outputs; give each its own");
  const std::vector<NamedPath> fine = {{"--json", dir + "/a"}, {"--csv", "-"}, {"-o", ""}};
  EXPECT_EQ(test::error_message([&] { refuse_overlapping_paths(fine, inputs); }), "(no error)");
}

TEST(RefuseOverlappingPaths, AHardLinkIsTheSameFile) {
  const std::string dir = test::temp_dir("output-overlap-link");
  test::write_file(dir + "/trace.pickle", "x");
  fs::create_hard_link(dir + "/trace.pickle", dir + "/other-name");
  const std::vector<NamedPath> outputs = {{"-o", dir + "/other-name"}};
  const std::vector<NamedPath> inputs = {{"FILE", dir + "/trace.pickle"}};
  EXPECT_NE(test::error_message([&] { refuse_overlapping_paths(outputs, inputs); }).find("is also FILE"),
            std::string::npos);
}

}  // namespace
}  // namespace plumb
