#include "depgraph/kernel_class.h"

#include "gtest/gtest.h"

namespace reverie::depgraph {
namespace {

TEST(KernelClassTest, LibraryKernelNames) {
  EXPECT_EQ(ClassifyKernelName("volta_sgemm_128x64_nn"), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernelName("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n"), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernelName("cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>"),
            KernelClass::kConv);
  EXPECT_EQ(ClassifyKernelName("flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>"),
            KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernelName("fmha_cutlassF_f16_aligned_64x64_rf_sm80"), KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            KernelClass::kCommunication);
  EXPECT_EQ(ClassifyKernelName("void at::native::cunn_SoftMaxForward<4, float>"),
            KernelClass::kReduction);
  EXPECT_EQ(ClassifyKernelName("void at::native::vectorized_elementwise_kernel<4, relu>"),
            KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernelName("multi_tensor_apply_kernel<FusedAdam>"), KernelClass::kOptimizer);
  EXPECT_EQ(ClassifyKernelName("Memcpy HtoD (Pinned -> Device)"), KernelClass::kMemcpy);
  EXPECT_EQ(ClassifyKernelName("Memset (Device)"), KernelClass::kMemset);
  EXPECT_EQ(ClassifyKernelName("Kernel"), KernelClass::kOther);
}

TEST(KernelClassTest, EveryClassHasADistinctName) {
  for (int a = 0; a < kKernelClassCount; ++a) {
    for (int b = a + 1; b < kKernelClassCount; ++b) {
      EXPECT_NE(KernelClassName(static_cast<KernelClass>(a)),
                KernelClassName(static_cast<KernelClass>(b)));
    }
  }
}

TEST(KernelClassTest, CollectiveFromKernelAndRecordNames) {
  EXPECT_EQ(CollectiveOfName("ncclKernel_AllReduce_RING_LL_Sum_float"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveOfName("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"),
            Collective::kReduceScatter);
  EXPECT_EQ(CollectiveOfName("ncclDevKernel_AllGather_RING_LL"), Collective::kAllGather);
  EXPECT_EQ(CollectiveOfName("nccl:all_to_all"), Collective::kAllToAll);
  EXPECT_EQ(CollectiveOfName("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), Collective::kBroadcast);
  EXPECT_EQ(CollectiveOfName("ncclKernel_Reduce_RING_LL_Sum_float"), Collective::kReduce);
  EXPECT_EQ(CollectiveOfName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"),
            Collective::kSendRecv);
  EXPECT_EQ(CollectiveOfName("all-reduce bucket 3"), Collective::kAllReduce);
  EXPECT_EQ(CollectiveOfName("ncclDevKernel_Generic_4"), Collective::kOther);
  for (int a = 0; a < kCollectiveCount; ++a) {
    for (int b = a + 1; b < kCollectiveCount; ++b) {
      EXPECT_NE(CollectiveName(Collective(a)), CollectiveName(Collective(b)));
    }
  }
}

}  // namespace
}  // namespace reverie::depgraph
