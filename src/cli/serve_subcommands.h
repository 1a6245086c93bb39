// The subcommands of plumb serve, one file each. Each declares its options on a subcommand of
// `serve` and sets `selected` to what runs it once argv is parsed.
#pragma once

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace plumb::cli {

void setup_serve_bench(CLI::App& serve, std::function<int()>& selected);  // serve_bench_command.cc
void setup_serve_peak(CLI::App& serve, std::function<int()>& selected);   // serve_peak_command.cc
void setup_serve_mock(CLI::App& serve, std::function<int()>& selected);   // serve_mock_command.cc

}  // namespace plumb::cli
