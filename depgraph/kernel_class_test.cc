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

}  // namespace
}  // namespace reverie::depgraph
