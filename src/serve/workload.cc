// Placeholder until the workload lands (issue 31, p31-load): the interface is serve/workload.h.
#include "serve/workload.h"

#include "common/error.h"

namespace plumb::serve {

Workload make_workload(const WorkloadSpec&) {
  throw Error("plumb serve: the workload is not built yet", ExitCode::kBadInput);
}

}  // namespace plumb::serve
