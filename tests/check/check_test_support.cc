#include "check_test_support.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "support/subprocess.h"

namespace plumb::check::test {

NodeTree::NodeTree(const std::string& name) : root_(plumb::test::temp_dir(name)) {}

void NodeTree::write(const std::string& absolute, const std::string& text) const {
  const std::filesystem::path path = root_ + absolute;
  std::filesystem::create_directories(path.parent_path());
  plumb::test::write_file(path.string(), text);
}

NodeContext NodeTree::context() const {
  NodeContext c;
  c.root = root_;
  c.host = "node7";
  c.tool_timeout_s = 2;
  return c;
}

StandInTools::StandInTools(const std::string& name) : dir_(plumb::test::temp_dir(name)) {
  const char* path = std::getenv("PATH");
  old_path_ = path ? path : "";
  ::setenv("PATH", (dir_ + ":" + old_path_).c_str(), 1);
}

StandInTools::~StandInTools() { ::setenv("PATH", old_path_.c_str(), 1); }

void StandInTools::runs(const std::string& tool, const std::string& script) const {
  const std::string path = dir_ + "/" + tool;
  plumb::test::write_file(path, "#!/bin/sh\n" + script + "\n");
  ::chmod(path.c_str(), 0755);
}

void StandInTools::prints_fixture(const std::string& tool, const std::string& fixture, int code) const {
  runs(tool, "cat '" + std::string(PLUMB_SOURCE_DIR) + "/tests/fixtures/check/" + fixture +
                 "'\nexit " + std::to_string(code));
}

}  // namespace plumb::check::test
