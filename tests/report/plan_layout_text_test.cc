// The layout line of plumb plan's report: what the run sets beyond the grid is named after it.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/json.h"
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

// Every dispatcher, the fp32 gradient reduction and PyTorch FSDP are named on the layout line, and
// a layout read back from plumb.plan/1's JSON (plan --calibrate reads a step's kept run so) is the same.
TEST(PlanLayoutText, DispatchersAndGradientReductionRoundTripThroughJson) {
  plan::Layout p;
  p.pp = 8;
  p.vpp = 2;
  p.dp = 32;
  p.ep = 32;
  p.etp = 1;
  p.global_batch = 4096;
  p.dispatcher = plan::Dispatcher::kDeepEP;
  p.fp32_grad_reduce = true;
  p.fsdp = true;
  EXPECT_EQ(layout_text(p), "tp 1 · cp 1 · pp 8 · vpp 2 · dp 32 · ep 32 · mbs 1 · ZeRO 0 · "
                            "recompute none · deepep dispatcher · fp32 gradient reduction · "
                            "PyTorch FSDP");
  const nlohmann::json j = layout_json(p);
  EXPECT_EQ(j["dispatcher"], "deepep");
  EXPECT_EQ(j["fp32_grad_reduce"], true);
  EXPECT_EQ(j["fsdp"], true);
  const plan::Layout back = layout_from_json(j, JsonFields("step.json"), "plan_run.layout");
  EXPECT_EQ(back.dispatcher, plan::Dispatcher::kDeepEP);
  EXPECT_TRUE(back.fp32_grad_reduce);
  EXPECT_TRUE(back.fsdp);
  EXPECT_EQ(layout_json(back), j);
  p.dispatcher = plan::Dispatcher::kAllGather;
  p.fp32_grad_reduce = false;
  EXPECT_EQ(layout_json(p)["dispatcher"], "allgather");
  // MindSpeed's fp32 combine (--fp32-combine) is named after its dispatcher and read back.
  p.fp32_combine = true;
  EXPECT_EQ(layout_text(p), "tp 1 · cp 1 · pp 8 · vpp 2 · dp 32 · ep 32 · mbs 1 · ZeRO 0 · "
                            "recompute none · allgather dispatcher · fp32 combine · PyTorch FSDP");
  EXPECT_TRUE(layout_from_json(layout_json(p), JsonFields("step.json"), "plan_run.layout")
                  .fp32_combine);
  p.fp32_combine = false;
  // Megatron without gradient accumulation fusion (--no-gradient-accumulation-fusion) is named
  // and read back; a layout written before the field reads as the default, fused.
  p.grad_accum_fusion = false;
  EXPECT_EQ(layout_text(p), "tp 1 · cp 1 · pp 8 · vpp 2 · dp 32 · ep 32 · mbs 1 · ZeRO 0 · "
                            "recompute none · allgather dispatcher · PyTorch FSDP · "
                            "unfused gradient accumulation");
  EXPECT_EQ(layout_json(p)["grad_accum_fusion"], false);
  EXPECT_FALSE(layout_from_json(layout_json(p), JsonFields("step.json"), "plan_run.layout")
                   .grad_accum_fusion);
  p.grad_accum_fusion = true;
  // Written before the field: the default, bf16 reduction.
  nlohmann::json old = layout_json(p);
  old.erase("fp32_grad_reduce");
  old.erase("fsdp");
  old.erase("grad_accum_fusion");
  EXPECT_TRUE(layout_from_json(old, JsonFields("step.json"), "plan_run.layout").grad_accum_fusion);
  EXPECT_FALSE(layout_from_json(old, JsonFields("step.json"), "plan_run.layout").fp32_grad_reduce);
  EXPECT_FALSE(layout_from_json(old, JsonFields("step.json"), "plan_run.layout").fsdp);
  old["fp32_grad_reduce"] = "yes";
  try {
    layout_from_json(old, JsonFields("step.json"), "plan_run.layout");
    FAIL() << "a fp32_grad_reduce that is not true or false was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "step.json: plan_run.layout.fp32_grad_reduce: expected true or false, got \"yes\"");
  }
}

// Eager mode and torchtitan's op-level checkpointing are named on the layout line and survive the
// JSON; a plan written before `eager` reads back as compiled.
TEST(PlanLayoutText, EagerAndSelectiveOpRoundTripThroughJson) {
  plan::Layout p;
  p.dp = 8;
  p.zero = 3;
  p.global_batch = 16;
  p.micro_batch = 2;
  p.recompute = plan::Recompute::kSelectiveOp;
  p.fsdp = true;
  p.eager = true;
  EXPECT_EQ(layout_text(p), "tp 1 · cp 1 · pp 1 · vpp 1 · dp 8 · ep 1 · mbs 2 · ZeRO 3 · "
                            "recompute selective-op · PyTorch FSDP · eager");
  const nlohmann::json j = layout_json(p);
  EXPECT_EQ(j["recompute"], "selective-op");
  EXPECT_EQ(j["eager"], true);
  const plan::Layout back = layout_from_json(j, JsonFields("step.json"), "plan_run.layout");
  EXPECT_EQ(back.recompute, plan::Recompute::kSelectiveOp);
  EXPECT_TRUE(back.eager);
  nlohmann::json old = j;
  old.erase("eager");
  EXPECT_FALSE(layout_from_json(old, JsonFields("step.json"), "plan_run.layout").eager);
}

}  // namespace
}  // namespace plumb::report
