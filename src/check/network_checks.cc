// The network checks of plumb check node (docs/check.md).
#include "check/check.h"

namespace plumb::check {

std::vector<CheckSpec> network_checks() { return {}; }

}  // namespace plumb::check
