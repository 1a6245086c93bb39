// The CLI is a table of commands. Each command has an options struct, a setup_* function that
// declares its options on a CLI11 subcommand, and a run_* function that tests can call without
// argv.
#pragma once

#include <functional>
#include <span>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct Command {
  std::string name;
  std::string summary;
  // Declares the options on `sub` and returns what runs the command once they are parsed; the
  // returned function gives the process exit code (0 ok, 1 failed check, 2 bad input).
  std::function<std::function<int()>(CLI::App& sub)> setup;
};

std::span<const Command> commands();

// Every command of the table on `app` (plumb's name, description and --version); `selected` is set
// to what runs the command argv chose once `app` has parsed it.
void declare_cli(CLI::App& app, std::function<int()>& selected);

// The whole CLI: parses argv, runs one command, turns errors into messages and exit codes.
int run_main(int argc, char** argv);

}  // namespace plumb::cli
