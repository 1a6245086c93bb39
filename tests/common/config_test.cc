#include "common/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "baseline/store.h"
#include "common/error.h"
#include "support/subprocess.h"

namespace plumb {
namespace {

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::vector<std::string>& paths) {
  return test::error_message([&] { read_config(paths); });
}

TEST(Config, TheUsersFileWinsAndEachValueSaysWhereItWasSet) {
  const std::string dir = test::temp_dir("config-both");
  const std::string user = write_file(dir + "/user.yaml", "# mine\nstore: /data/mine.db\n");
  const std::string site = write_file(dir + "/site.yaml", "store: postgresql://plumb@db/plumb\n");
  const Config both = read_config({user, site});
  ASSERT_TRUE(both.store);
  EXPECT_EQ(both.store->value, "/data/mine.db");
  EXPECT_EQ(both.store->where, user + ":2");
  EXPECT_EQ(both.read, (std::vector<std::string>{user, site}));
  // A user file that sets nothing leaves the site's value.
  write_file(user, "# nothing set\n");
  const Config site_only = read_config({user, site});
  ASSERT_TRUE(site_only.store);
  EXPECT_EQ(site_only.store->value, "postgresql://plumb@db/plumb");
  EXPECT_EQ(site_only.store->where, site + ":1");
}

TEST(Config, FilesThatAreNotThereArePassedOver) {
  const std::string dir = test::temp_dir("config-none");
  const Config none = read_config({dir + "/a.yaml", dir + "/b.yaml"});
  EXPECT_FALSE(none.store);
  EXPECT_TRUE(none.read.empty());
  EXPECT_EQ(none.looked_in, (std::vector<std::string>{dir + "/a.yaml", dir + "/b.yaml"}));
}

TEST(Config, AWrongFileIsAnErrorNamingItsLine) {
  const std::string f = test::temp_dir("config-wrong") + "/config.yaml";
  write_file(f, "store: /a.db\nstor: /b.db\n");
  EXPECT_EQ(error_of({f}), f + ":2: unknown key 'stor' (did you mean 'store'?); expected one of store");
  write_file(f, "store: /a.db\nstore: /b.db\n");
  EXPECT_EQ(error_of({f}), f + ":2: duplicate key 'store' (first at line 1)");
  write_file(f, "store:\n");
  EXPECT_EQ(error_of({f}), f + ":1: store: expected a file path or a postgresql:// URL, got nothing");
  write_file(f, "store: [a, b]\n");
  EXPECT_EQ(error_of({f}),
            f + ":1: store: expected a file path or a postgresql:// URL, got a list or a map");
  write_file(f, "- store\n");
  EXPECT_EQ(error_of({f}), f + ":1: expected a map of settings (store: ...)");
  write_file(f, "store: [\n");
  EXPECT_EQ(error_of({f}).substr(0, f.size() + 20), f + ":2: not valid YAML: ");
  // A wrong site file is refused even when the user's file sets the key: it is wrong everywhere.
  const std::string user = write_file(f + ".user", "store: /a.db\n");
  write_file(f, "stores: /b.db\n");
  EXPECT_EQ(error_of({user, f}).substr(0, f.size() + 24), f + ":1: unknown key 'stores'");
}

// --db, then PLUMB_DB, then the config file's store, then the default file.
class StoreChoiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::temp_dir("config-choice");
    setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
    setenv("XDG_DATA_HOME", (dir_ + "/data").c_str(), 1);
    unsetenv("PLUMB_DB");
    std::filesystem::create_directories(dir_ + "/plumb");
    if (std::filesystem::exists("/etc/plumb/config.yaml")) GTEST_SKIP() << "this host has /etc/plumb/config.yaml";
  }
  void TearDown() override {
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("PLUMB_DB");
  }
  std::string config() const { return dir_ + "/plumb/config.yaml"; }
  std::string dir_;
};

TEST_F(StoreChoiceTest, InOrderOfPrecedence) {
  EXPECT_EQ(baseline::choose_store("").location, dir_ + "/data/plumb/plumb.db");
  EXPECT_EQ(baseline::choose_store("").origin, "the default");
  write_file(config(), "store: postgresql://plumb@db/team\n");
  EXPECT_EQ(baseline::choose_store("").location, "postgresql://plumb@db/team");
  EXPECT_EQ(baseline::choose_store("").origin, config() + ":1");
  setenv("PLUMB_DB", "/tmp/env.db", 1);
  EXPECT_EQ(baseline::choose_store("").location, "/tmp/env.db");
  EXPECT_EQ(baseline::choose_store("").origin, "PLUMB_DB");
  EXPECT_EQ(baseline::choose_store("/tmp/flag.db").location, "/tmp/flag.db");
  EXPECT_EQ(baseline::choose_store("/tmp/flag.db").origin, "--db");
}

TEST_F(StoreChoiceTest, AConfiguredStoreMustBeAnAbsolutePathOrAUrl) {
  write_file(config(), "\nstore: plumb.db\n");
  EXPECT_EQ(test::error_message([] { baseline::choose_store(""); }),
            config() + ":2: store: expected an absolute file path or a postgresql:// URL, got the "
                       "relative path 'plumb.db'");
  // Given --db, the config file is not read at all.
  EXPECT_EQ(baseline::choose_store("/tmp/flag.db").location, "/tmp/flag.db");
}

TEST(Config, PathsAreTheUsersThenTheSites) {
  setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
  EXPECT_EQ(config_paths(), (std::vector<std::string>{"/x/cfg/plumb/config.yaml", "/etc/plumb/config.yaml"}));
  unsetenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string saved = home ? home : "";
  setenv("HOME", "/home/ana", 1);
  EXPECT_EQ(config_paths(),
            (std::vector<std::string>{"/home/ana/.config/plumb/config.yaml", "/etc/plumb/config.yaml"}));
  setenv("HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace plumb
