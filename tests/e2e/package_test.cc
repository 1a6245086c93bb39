// The Debian package, for real: scripts/package makes the .deb from this build tree (CPack,
// dpkg-shlibdeps, lintian with --fail-on error), dpkg -x extracts it into a directory of its own,
// and the extracted plumb runs: --version, a plan that needs the catalogs (found in the package's
// share/plumb beside its bin/, not in the source tree), and its man page through man -l.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/subprocess.h"

namespace plumb {
namespace {

struct Package {
  std::string deb;
  std::string root;  // where dpkg -x put it
};

// The .deb the package.build fixture made (PLUMB_PACKAGE_DIR, its last line printed is kept in
// deb-path), else one made here: packaging and lintian take a while.
std::string made_deb(const std::string& dir) {
  const char* fixture = std::getenv("PLUMB_PACKAGE_DIR");
  if (fixture != nullptr) {
    for (const auto& entry : std::filesystem::directory_iterator(fixture))
      if (entry.path().extension() == ".deb") return entry.path().string();
    ADD_FAILURE() << "no .deb in PLUMB_PACKAGE_DIR " << fixture << " (the package.build fixture)";
    return "";
  }
  const std::string build = std::filesystem::path(PLUMB_BIN).parent_path().parent_path().string();
  const test::Run made = test::run_command(std::string(PLUMB_SOURCE_DIR) + "/scripts/package --build-dir " +
                                           build + " --output " + dir + " 2>&1");
  EXPECT_EQ(made.exit_code, 0) << made.out;
  const auto last = made.out.find_last_of('\n', made.out.size() - 2);
  std::string deb = made.out.substr(last == std::string::npos ? 0 : last + 1);
  if (!deb.empty() && deb.back() == '\n') deb.pop_back();
  return deb;
}

// Extracted once per process into a folder of its own (a test edits what it extracted).
const Package& package() {
  static const Package p = [] {
    const std::string dir = test::temp_dir("package");
    Package out;
    out.deb = made_deb(dir);
    out.root = dir + "/root";
    const test::Run extracted = test::run_command("dpkg -x " + out.deb + " " + out.root + " 2>&1");
    EXPECT_EQ(extracted.exit_code, 0) << extracted.out;
    return out;
  }();
  return p;
}

// The extracted binary, with no data folder named by the environment; out holds both streams.
test::Run extracted_plumb(const std::string& args) {
  test::Run r = test::run_command("env -u PLUMB_DATA_DIR -u PLUMB_DATA " + package().root + "/usr/bin/plumb " + args);
  r.out += r.err;
  return r;
}

TEST(Package, IsNamedAfterTheVersionAndArchitecture) {
  EXPECT_EQ(std::filesystem::path(package().deb).filename().string(),
            std::string("plumb_") + PLUMB_VERSION + "_amd64.deb");
  const test::Run fields = test::run_command("dpkg-deb -f " + package().deb + " Package Version Depends Section");
  EXPECT_NE(fields.out.find("Package: plumb\n"), std::string::npos) << fields.out;
  EXPECT_NE(fields.out.find("libsqlite3-0"), std::string::npos) << fields.out;  // from dpkg-shlibdeps
  EXPECT_NE(fields.out.find("libcurl4"), std::string::npos) << fields.out;  // opened with dlopen
  EXPECT_NE(fields.out.find("Section: utils"), std::string::npos) << fields.out;
}

TEST(Package, ExtractedBinaryRunsAndFindsItsOwnCatalogs) {
  const test::Run version = extracted_plumb("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.substr(0, version.out.find('\n') + 1), std::string("plumb ") + PLUMB_VERSION + "\n");
  const test::Run plan = extracted_plumb("plan --model llama3-70b --hardware h100-sxm --devices 64");
  // The default layout (dp 64, no model parallelism) does not fit in 80 GB: a failed check, exit 1.
  EXPECT_EQ(plan.exit_code, 1) << plan.out;
  EXPECT_NE(plan.out.find("# plumb plan · llama3-70b on 64 × NVIDIA H100 SXM"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("DOES NOT FIT"), std::string::npos) << plan.out;
  // The package's share/plumb is the one read: a model taken out of it is unknown, though the
  // source tree still has it.
  std::filesystem::remove(package().root + "/usr/share/plumb/models/llama3-8b.yaml");
  const test::Run gone = extracted_plumb("plan --model llama3-8b --hardware h100-sxm --devices 8");
  EXPECT_EQ(gone.exit_code, 2) << gone.out;
  EXPECT_NE(gone.out.find("unknown model 'llama3-8b'"), std::string::npos) << gone.out;
}

TEST(Package, ManPageReadsAndNamesTheCommands) {
  const test::Run man = test::run_command("MANWIDTH=100 man -l -P cat " + package().root +
                                          "/usr/share/man/man1/plumb.1.gz 2>&1");
  EXPECT_EQ(man.exit_code, 0) << man.out;
  for (const char* word : {"NAME", "plumb - measures an AI training cluster", "COMMANDS", "baseline", "mem"}) {
    EXPECT_NE(man.out.find(word), std::string::npos) << word << "\n" << man.out.substr(0, 2000);
  }
}

TEST(Package, CompletionScriptsAreInstalled) {
  EXPECT_TRUE(std::filesystem::exists(package().root + "/usr/share/bash-completion/completions/plumb"));
  EXPECT_TRUE(std::filesystem::exists(package().root + "/usr/share/zsh/vendor-completions/_plumb"));
  EXPECT_TRUE(std::filesystem::exists(package().root + "/usr/share/doc/plumb/copyright"));
}

TEST(Package, CopyrightFileSaysApache20) {
  const test::Run copyright = test::run_command("cat " + package().root + "/usr/share/doc/plumb/copyright");
  EXPECT_NE(copyright.out.find("Files: *\nCopyright: 2026 plumb developers\nLicense: Apache-2.0\n"),
            std::string::npos) << copyright.out;
  EXPECT_NE(copyright.out.find("/usr/share/common-licenses/Apache-2.0"), std::string::npos);
}

}  // namespace
}  // namespace plumb
