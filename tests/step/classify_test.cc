// Collective kinds from the names PyTorch, NCCL and HCCL give them, and dtype sizes.
#include "step/classify.h"

#include <gtest/gtest.h>

namespace plumb::step {
namespace {

using K = CollectiveKind;

TEST(Classify, KindFromOpNames) {
  // Kernel `Collective name` arguments.
  EXPECT_EQ(kind_from_op_name("allreduce"), K::kAllReduce);
  EXPECT_EQ(kind_from_op_name("_allgather_base"), K::kAllGather);
  EXPECT_EQ(kind_from_op_name("_reduce_scatter_base"), K::kReduceScatter);
  EXPECT_EQ(kind_from_op_name("reduce_scatter_tensor_coalesced"), K::kReduceScatter);
  EXPECT_EQ(kind_from_op_name("all_to_all"), K::kAllToAll);
  EXPECT_EQ(kind_from_op_name("broadcast"), K::kBroadcast);
  EXPECT_EQ(kind_from_op_name("send"), K::kSendRecv);
  EXPECT_EQ(kind_from_op_name("recv"), K::kSendRecv);
  EXPECT_EQ(kind_from_op_name("reduce"), K::kReduce);
  EXPECT_EQ(kind_from_op_name("barrier"), K::kBarrier);
  // c10d CPU ops and NCCL records (kineto-2ranks-of-128).
  EXPECT_EQ(kind_from_op_name("c10d::allreduce_"), K::kAllReduce);
  EXPECT_EQ(kind_from_op_name("c10d::alltoall_base_"), K::kAllToAll);
  EXPECT_EQ(kind_from_op_name("c10d::_allgather_base_"), K::kAllGather);
  EXPECT_EQ(kind_from_op_name("nccl:all_reduce"), K::kAllReduce);
  EXPECT_EQ(kind_from_op_name("nccl:_all_gather_base"), K::kAllGather);
  EXPECT_EQ(kind_from_op_name("nccl:all_to_all"), K::kAllToAll);
  // gloo's CPU ops (PyTorch 1.13 on CPU: gloo-cpu-2ranks), on gloo's own threads.
  EXPECT_EQ(kind_from_op_name("gloo:all_reduce"), K::kAllReduce);
  EXPECT_EQ(kind_from_op_name("gloo:all_gather"), K::kAllGather);
  EXPECT_EQ(kind_from_op_name("gloo:broadcast"), K::kBroadcast);
  EXPECT_EQ(kind_from_op_name("gloo:barrier"), K::kBarrier);
  EXPECT_EQ(kind_from_op_name("gloo:reduce_scatter"), K::kReduceScatter);
  // HCCL ops.
  EXPECT_EQ(kind_from_op_name("hcom_allReduce_"), K::kAllReduce);
  EXPECT_EQ(kind_from_op_name("HcomAllGather"), K::kAllGather);
  EXPECT_EQ(kind_from_op_name("hcom_reduceScatter_"), K::kReduceScatter);
  // Not collectives.
  EXPECT_EQ(kind_from_op_name("record_param_comms"), std::nullopt);
  EXPECT_EQ(kind_from_op_name("aten::mm"), std::nullopt);
  EXPECT_EQ(kind_from_op_name(""), std::nullopt);
}

TEST(Classify, KindFromKernelNames) {
  EXPECT_EQ(kind_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
                                  "unsigned long, ncclWork*)"),
            K::kAllReduce);
  EXPECT_EQ(kind_from_kernel_name("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage"
                                  "<4096ul>)"),
            K::kAllGather);
  EXPECT_EQ(kind_from_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)"),
            K::kSendRecv);
  EXPECT_EQ(kind_from_kernel_name("void ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)"),
            K::kBroadcast);
  EXPECT_EQ(kind_from_kernel_name("ncclDevKernel_ReduceScatter_RING_LL(x)"), K::kReduceScatter);
  EXPECT_EQ(kind_from_kernel_name("ncclDevKernel_Generic(x)"), K::kUnknown);
  EXPECT_EQ(kind_from_kernel_name("volta_sgemm_128x64_nn"), std::nullopt);
  EXPECT_TRUE(is_nccl_kernel("ncclDevKernel_AllGather_RING_LL(x)"));
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(x)"));
  EXPECT_FALSE(is_nccl_kernel("Memcpy HtoD (Pinned -> Device)"));
}

TEST(Classify, KindNamesAndDtypeSizes) {
  EXPECT_EQ(kind_name(K::kReduceScatter), "reducescatter");
  EXPECT_EQ(kind_name(K::kSendRecv), "sendrecv");
  EXPECT_EQ(kind_name(K::kUnknown), "unknown");
  EXPECT_EQ(dtype_bytes("Float"), 4U);
  EXPECT_EQ(dtype_bytes("BFloat16"), 2U);
  EXPECT_EQ(dtype_bytes("c10::Half"), 2U);
  EXPECT_EQ(dtype_bytes("Long"), 8U);
  EXPECT_EQ(dtype_bytes("torch.float32"), 4U);
  EXPECT_EQ(dtype_bytes("FP32"), 4U);
  EXPECT_EQ(dtype_bytes("BF16"), 2U);
  EXPECT_EQ(dtype_bytes("INT8"), 1U);
  EXPECT_EQ(dtype_bytes("Complex"), std::nullopt);
}

}  // namespace
}  // namespace plumb::step
