// Placeholder until plumb serve mock lands (issue 31).
#include "cli/serve_subcommands.h"

#include "common/error.h"

namespace plumb::cli {

void setup_serve_mock(CLI::App& serve, std::function<int()>& selected) {
  CLI::App* sub = serve.add_subcommand("mock", "not built yet");
  sub->callback([&selected] {
    selected = []() -> int { throw Error("plumb serve mock: not built yet", ExitCode::kBadInput); };
  });
}

}  // namespace plumb::cli
