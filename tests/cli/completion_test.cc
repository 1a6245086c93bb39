#include "cli/completion_command.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "cli/command.h"
#include "support/subprocess.h"

namespace plumb::cli {
namespace {

struct Cli {
  CLI::App app;
  std::function<int()> selected;
  Cli() { declare_cli(app, selected); }
};

TEST(Completion, BashNamesEveryCommandOfTheTable) {
  Cli cli;
  const std::string script = bash_completion(cli.app);
  for (const Command& c : commands()) {
    EXPECT_NE(script.find("\"plumb " + c.name + "\") path=\"$path $w\""), std::string::npos) << c.name;
    EXPECT_NE(script.find("    \"plumb " + c.name + "\") words=\""), std::string::npos) << c.name;
  }
  EXPECT_NE(script.find("complete -o default -F _plumb plumb\n"), std::string::npos);
}

TEST(Completion, ZshNamesEveryCommandOfTheTable) {
  Cli cli;
  const std::string script = zsh_completion(cli.app);
  EXPECT_EQ(script.rfind("#compdef plumb\n", 0), 0u);
  for (const Command& c : commands()) {
    EXPECT_NE(script.find("    \"plumb " + c.name + "\") choices=("), std::string::npos) << c.name;
  }
}

// The bash script run by bash: what it offers after "plumb mem an" and "plumb mem analyze --ti".
std::string complete_in_bash(const std::string& script, const std::string& words, int cword) {
  const std::string file = test::temp_dir("completion") + "/plumb.bash";
  test::write_file(file, script);
  const std::string command = "bash -c 'source " + file + "; COMP_WORDS=(" + words +
                              "); COMP_CWORD=" + std::to_string(cword) +
                              "; _plumb; echo \"${COMPREPLY[*]}\"'";
  return test::run_command(command).out;
}

TEST(Completion, BashCompletesSubcommandsAndOptionsOfTheWordsBefore) {
  Cli cli;
  const std::string script = bash_completion(cli.app);
  EXPECT_EQ(complete_in_bash(script, "plumb mem an", 2), "analyze\n");
  EXPECT_EQ(complete_in_bash(script, "plumb mem analyze x.pickle --ti", 4), "--timeline\n");
  EXPECT_EQ(complete_in_bash(script, "plumb alert", 1), "alerts alert-relay\n");
}

TEST(Completion, UnknownShellIsOneLine) {
  const CompletionOptions o{"fish", nullptr};
  EXPECT_EQ(test::error_message([&] { run_completion(o); }),
            "completion: unknown shell 'fish'; expected bash or zsh");
}

}  // namespace
}  // namespace plumb::cli
