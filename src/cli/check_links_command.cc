// plumb check links (docs/check.md).
#include "cli/check_subcommands.h"

namespace plumb::cli {

void setup_check_links(CLI::App& check, std::function<int()>& selected) {
  (void)check;
  (void)selected;
}

}  // namespace plumb::cli
