// The layout line of plumb plan's report: what the run sets beyond the grid is named after it.
#include <gtest/gtest.h>

#include "plan/memory.h"
#include "report/plan_reporter.h"

namespace plumb::report {
namespace {

// A capacity factor and GShard's einsum dispatch (docs/plan.md section 5) follow the overlaps.
TEST(PlanLayoutText, NamesTheCapacityAndTheEinsumDispatch) {
  plan::Layout p;
  p.pp = 8;
  p.dp = 2;
  p.ep = 2;
  EXPECT_EQ(layout_text(p),
            "tp 1 · cp 1 · pp 8 · vpp 1 · dp 2 · ep 2 · mbs 1 · ZeRO 0 · recompute none");
  p.capacity_factor = 1.1;
  p.einsum_dispatch = true;
  EXPECT_EQ(layout_text(p), "tp 1 · cp 1 · pp 8 · vpp 1 · dp 2 · ep 2 · mbs 1 · ZeRO 0 · recompute "
                            "none · capacity 1.1 · einsum dispatch");
}

}  // namespace
}  // namespace plumb::report
