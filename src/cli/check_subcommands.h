// The subcommands of plumb check, one file each. Each declares its options on a subcommand of
// `check` and sets `selected` to what runs it once argv is parsed.
#pragma once

#include <functional>

#include "common/error.h"

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

// The monitoring plugins' UNKNOWN: the check could not run (docs/check.md, "Exit codes").
inline constexpr ExitCode kCheckCouldNotRun = static_cast<ExitCode>(3);

void setup_check_node(CLI::App& check, std::function<int()>& selected);     // check_node_command.cc
void setup_check_genconf(CLI::App& check, std::function<int()>& selected);  // check_node_command.cc
void setup_check_list(CLI::App& check, std::function<int()>& selected);     // check_node_command.cc
void setup_check_history(CLI::App& check, std::function<int()>& selected);  // check_history_command.cc
void setup_check_burn_in(CLI::App& check, std::function<int()>& selected);  // check_burn_in_command.cc
void setup_check_links(CLI::App& check, std::function<int()>& selected);    // check_links_command.cc

}  // namespace plumb::cli
