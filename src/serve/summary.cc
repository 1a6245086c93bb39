// Placeholder until the metrics land (issue 31, p31-load): the interface is serve/summary.h.
#include "serve/summary.h"

#include "common/error.h"

namespace plumb::serve {

ServeSummary summarize(const std::vector<RequestRecord>&, Nanos, std::int64_t, const Slo&) {
  throw Error("plumb serve: the metrics are not built yet", ExitCode::kBadInput);
}

}  // namespace plumb::serve
