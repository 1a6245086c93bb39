#include "common/data_dir.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace plumb {
namespace {

// A file system of a few folders.
auto folders(std::set<std::string> dirs) {
  return [dirs = std::move(dirs)](const std::string& path) { return dirs.contains(path); };
}

TEST(DataDir, EnvironmentFirstEvenWhereItDoesNotExist) {
  const DataDirSources s{"/opt/mine", "/old", "/usr/bin/plumb", "/src/data"};
  EXPECT_EQ(resolve_data_dir(s, folders({"/usr/share/plumb"})), "/opt/mine");
}

TEST(DataDir, OlderVariableNextThenThePackagesShareFolder) {
  EXPECT_EQ(resolve_data_dir({"", "/old", "/usr/bin/plumb", "/src/data"}, folders({})), "/old");
  EXPECT_EQ(resolve_data_dir({"", "", "/usr/bin/plumb", "/src/data"}, folders({"/usr/share/plumb"})),
            "/usr/share/plumb");
}

TEST(DataDir, AnExtractedPackageFindsItsOwnShareFolder) {
  const DataDirSources s{"", "", "/tmp/x/usr/bin/plumb", "/src/data"};
  EXPECT_EQ(resolve_data_dir(s, folders({"/tmp/x/usr/share/plumb", "/usr/share/plumb"})),
            "/tmp/x/usr/share/plumb");
}

TEST(DataDir, ABuildTreeUsesTheSourceTree) {
  const DataDirSources s{"", "", "/work/main/build/src/plumb", "/work/main/data"};
  EXPECT_EQ(resolve_data_dir(s, folders({"/usr/share/plumb"})), "/work/main/data");
  EXPECT_EQ(resolve_data_dir({"", "", "", "/work/main/data"}, folders({})), "/work/main/data");
}

}  // namespace
}  // namespace plumb
