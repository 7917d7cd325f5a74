#include "depgraph/kernel_class.h"

#include <fstream>
#include <initializer_list>
#include <map>
#include <string>

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
            KernelClass::kActivation);
  EXPECT_EQ(ClassifyKernelName("void at::native::vectorized_elementwise_kernel<4, add>"),
            KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernelName("multi_tensor_apply_kernel<FusedAdam>"), KernelClass::kOptimizer);
  EXPECT_EQ(ClassifyKernelName("Memcpy HtoD (Pinned -> Device)"), KernelClass::kMemcpy);
  EXPECT_EQ(ClassifyKernelName("Memset (Device)"), KernelClass::kMemset);
  EXPECT_EQ(ClassifyKernelName("Kernel"), KernelClass::kOther);
}

// Words, not substrings: a C++ lambda is not LAMB, "convert" is not a
// convolution, FBGEMM's kernels are not GEMMs.
TEST(KernelClassTest, WholeWordsOnly) {
  EXPECT_EQ(ClassifyKernelName("void at::native::vectorized_elementwise_kernel<4, "
                               "at::native::sin_kernel_cuda(at::TensorIteratorBase&)::"
                               "{lambda()#2}::operator()() const::{lambda(float)#1}>"),
            KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernelName("lamb_update_kernel<float>"), KernelClass::kOptimizer);
  EXPECT_EQ(ClassifyKernelName("convert_fp32_to_bf16_kernel"), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernelName("fbgemm_gpu::_float_to_FP8rowwise_cuda_kernel"),
            KernelClass::kElementwise);  // a cast
  EXPECT_EQ(ClassifyKernelName("fbgemm_gpu::bounds_check_indices_kernel"), KernelClass::kOther);
}

// The table of real kernel names from the shared traces with the class a
// person gave each by reading it (depgraph/testdata/kernel_class_table.tsv:
// class TAB name; written without running any classifier).
TEST(KernelClassTest, RealKernelNamesReadByHand) {
  std::ifstream in(REVERIE_SOURCE_DIR "/depgraph/testdata/kernel_class_table.tsv");
  ASSERT_TRUE(in.good());
  std::string line;
  int rows = 0, wrong = 0;
  std::map<std::string, int> per_class;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string want = line.substr(0, tab);
    const std::string name = line.substr(tab + 1);
    KernelClass expected;
    ASSERT_TRUE(ParseKernelClass(want, &expected)) << want;
    ++rows;
    ++per_class[want];
    const KernelClass got = ClassifyKernelName(name);
    if (got != expected) {
      ++wrong;
      ADD_FAILURE() << "expected " << want << ", got " << KernelClassName(got) << ": "
                    << name.substr(0, 200);
    }
  }
  EXPECT_GE(rows, 200);
  for (int c = 0; c < kKernelClassCount; ++c) {
    EXPECT_GT(per_class[std::string(KernelClassName(static_cast<KernelClass>(c)))], 0)
        << "no name of class " << KernelClassName(static_cast<KernelClass>(c));
  }
  EXPECT_EQ(wrong, 0) << "of " << rows;
}

// In context: a generic kernel inside the optimizer's step is optimizer
// work; the same kernel elsewhere (zero_grad, the model) is not.
TEST(KernelClassTest, GenericKernelsInsideTheOptimizerStep) {
  Graph g;
  const ResourceId s = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  const char* add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";
  TaskSpec spec{.kind = TaskKind::kKernel, .name = add, .resource = s};
  const TaskId model = g.AppendTask(spec);
  const TaskId step = g.AppendTask(spec);
  spec.name = "volta_sgemm_128x64_nn";
  const TaskId gemm = g.AppendTask(spec);
  g.set_in_optimizer_step(step);
  g.set_in_optimizer_step(gemm);
  EXPECT_EQ(TaskClass(g, model), KernelClass::kElementwise);
  EXPECT_EQ(TaskClass(g, step), KernelClass::kOptimizer);
  EXPECT_EQ(TaskClass(g, gemm), KernelClass::kGemm);  // a GEMM stays a GEMM
}

// The name's math is kept per interned name: a renamed kernel (amp.lua's
// " [bf16]" marker) reads its new name, and a copy of the graph answers
// alike.
TEST(KernelClassTest, NameMathIsReadPerName) {
  Graph g;
  const ResourceId s = g.AddResource({ResourceKind::kGpuStream, 1, 7, 0, "stream 7", true});
  TaskSpec spec{.kind = TaskKind::kKernel, .name = "volta_sgemm_128x64_nn", .resource = s};
  const TaskId a = g.AppendTask(spec);
  const TaskId b = g.AppendTask(spec);
  EXPECT_EQ(KernelNameMath(g, a).math, hardware::Math::kFp32);
  EXPECT_TRUE(KernelNameMath(g, b).simt);
  g.set_name(b, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn");
  const Graph copy = g;
  for (const Graph* x : std::initializer_list<const Graph*>{&g, &copy}) {
    EXPECT_EQ(KernelNameMath(*x, a).math, hardware::Math::kFp32);
    EXPECT_EQ(KernelNameMath(*x, b).math, hardware::Math::kFp16);
    EXPECT_FALSE(KernelNameMath(*x, b).simt);
    EXPECT_TRUE(KernelNameMath(*x, b).matrix_tag);
  }
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
