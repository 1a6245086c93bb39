// plumb completion bash|zsh: the completion script of the whole CLI (every command, subcommand and
// option of the command table), printed to standard output. The Debian package installs both.
#pragma once

#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

struct CompletionOptions {
  std::string shell;
  const CLI::App* root = nullptr;  // the whole CLI, walked when the command runs
};

void setup_completion(CLI::App& sub, CompletionOptions& o);
int run_completion(const CompletionOptions& o);

// The scripts, from a CLI11 app tree (tests build the real one with declare_cli).
std::string bash_completion(const CLI::App& root);
std::string zsh_completion(const CLI::App& root);

}  // namespace plumb::cli
