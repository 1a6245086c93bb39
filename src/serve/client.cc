// Placeholder until the engine lands (issue 31, p31-client): the interface is serve/client.h.
#include "serve/client.h"

#include "common/error.h"

namespace plumb::serve {

RunOutcome run_load(const Endpoint&, const Workload&, const RunControl&) {
  throw Error("plumb serve: the load generator is not built yet", ExitCode::kBadInput);
}

}  // namespace plumb::serve
