// What the lead's check tests share: a node tree in a temporary folder and stand-in tools put first
// on PATH for the duration of a test.
#pragma once

#include <string>

#include "check/node_context.h"

namespace plumb::check::test {

// A fresh folder standing for a node's root: write("/proc/meminfo", text) puts a file under it.
class NodeTree {
 public:
  explicit NodeTree(const std::string& name);
  void write(const std::string& absolute, const std::string& text) const;
  const std::string& root() const { return root_; }
  NodeContext context() const;

 private:
  std::string root_;
};

// A folder of stand-in tools prepended to PATH while it lives.
class StandInTools {
 public:
  explicit StandInTools(const std::string& name);
  ~StandInTools();
  StandInTools(const StandInTools&) = delete;
  StandInTools& operator=(const StandInTools&) = delete;
  // A tool that prints `fixture` (a file under tests/fixtures/check/) and exits with `code`.
  void prints_fixture(const std::string& tool, const std::string& fixture, int code = 0) const;
  // A tool running `script` (shell) as its body.
  void runs(const std::string& tool, const std::string& script) const;

 private:
  std::string dir_;
  std::string old_path_;
};

}  // namespace plumb::check::test
