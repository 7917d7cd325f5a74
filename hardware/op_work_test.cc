// FLOPs and bytes of ops against values computed by hand from the shapes
// real traces record (Kineto "Input Dims" / "Input type" / "Concrete Inputs").
#include "hardware/op_work.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace reverie::hardware {
namespace {

using ::testing::HasSubstr;

OpArg T(std::string type, std::vector<int64_t> dims) { return {std::move(type), {std::move(dims)}, "", false}; }
OpArg S(std::string concrete, std::string type = "Scalar") { return {std::move(type), {}, std::move(concrete), false}; }
OpArg None() { return {"", {}, "", false}; }

TEST(OpWorkTest, AddmmOfATinyMlp) {
  // aten::addmm [[256], [16, 2056], [2056, 256], [], []] (RTX 3080 toy MLP).
  const OpWork w = WorkOfOp("aten::addmm", {T("float", {256}), T("float", {16, 2056}),
                                           T("float", {2056, 256}), S("1"), S("1")});
  EXPECT_EQ(w.kind, WorkKind::kGemm);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * 256 * 2056 + 16 * 256);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (256 + 16 * 2056 + 2056 * 256 + 16 * 256));
  EXPECT_DOUBLE_EQ(w.fp32_bytes, w.bytes);
  EXPECT_EQ(w.math, Math::kFp32);
}

TEST(OpWorkTest, MmBmmMatmulLinear) {
  const OpWork mm = WorkOfOp("aten::mm", {T("float", {2048, 512}), T("float", {512, 1536})});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 2048 * 512 * 1536);
  EXPECT_DOUBLE_EQ(mm.bytes, 4.0 * (2048 * 512 + 512 * 1536 + 2048 * 1536));
  // aten::bmm [[96, 3137, 64], [96, 64, 3137]] in bf16 (TimeSformer).
  const OpWork bmm = WorkOfOp("aten::bmm", {T("c10::BFloat16", {96, 3137, 64}),
                                            T("c10::BFloat16", {96, 64, 3137})});
  EXPECT_DOUBLE_EQ(bmm.flops, 2.0 * 96 * 3137 * 3137 * 64);
  EXPECT_DOUBLE_EQ(bmm.bytes, 2.0 * (2 * 96 * 3137 * 64 + 96.0 * 3137 * 3137));
  EXPECT_EQ(bmm.math, Math::kBf16);
  EXPECT_DOUBLE_EQ(bmm.fp32_bytes, 0);
  // matmul broadcasts a 2-D weight over a batch.
  const OpWork mat = WorkOfOp("aten::matmul", {T("float", {8, 128, 512}), T("float", {512, 64})});
  EXPECT_DOUBLE_EQ(mat.flops, 2.0 * 8 * 128 * 64 * 512);
  // linear flattens the leading dims: [1, 25089, 768] x [3072, 768]^T + bias.
  const OpWork lin = WorkOfOp("aten::linear", {T("c10::BFloat16", {1, 25089, 768}),
                                               T("c10::BFloat16", {3072, 768}), T("c10::BFloat16", {3072})});
  EXPECT_DOUBLE_EQ(lin.flops, 2.0 * 25089 * 3072 * 768 + 25089.0 * 3072);
  const OpWork bad = WorkOfOp("aten::mm", {T("float", {4, 4}), S("1")});
  EXPECT_EQ(bad.kind, WorkKind::kNone);
  // The alignment of a matrix product: the largest power of two up to 16
  // dividing m, n and k.
  EXPECT_EQ(mm.matrix_alignment, 16);
  EXPECT_EQ(bmm.matrix_alignment, 1);  // m = n = 3137
  EXPECT_EQ(WorkOfOp("aten::mm", {T("float", {24, 12}), T("float", {12, 40})}).matrix_alignment, 4);
  EXPECT_EQ(bad.matrix_alignment, 0);
}

TEST(OpWorkTest, GptTwosOutputLayerIsUnaligned) {
  // GPT-2's language-model head: 8 x 512 tokens x 768 -> a vocabulary of
  // 50257 (odd), forward and the two backward GEMMs (H100 trace).
  const OpWork head = WorkOfOp("aten::linear", {T("float", {8, 512, 768}), T("float", {50257, 768})});
  EXPECT_EQ(head.matrix_alignment, 1);
  const OpWork grad_in = WorkOfOp("aten::mm", {T("float", {4096, 50257}), T("float", {50257, 768})});
  EXPECT_EQ(grad_in.matrix_alignment, 1);
  const OpWork qkv = WorkOfOp("aten::addmm", {T("float", {2304}), T("float", {4096, 768}),
                                              T("float", {768, 2304}), S("1"), S("1")});
  EXPECT_EQ(qkv.matrix_alignment, 16);
  // Element-wise ops have none.
  EXPECT_EQ(WorkOfOp("aten::add", {T("float", {4096, 768}), T("float", {4096, 768}), S("1")})
                .matrix_alignment,
            0);
}

TEST(OpWorkTest, ConvolutionWithStrideAndPadding) {
  // ResNet-50's first layer: x [32, 3, 224, 224], w [64, 3, 7, 7], stride 2,
  // padding 3 -> 112 x 112 outputs.
  const OpArgs conv2d = {T("float", {32, 3, 224, 224}), T("float", {64, 3, 7, 7}), None(),
                         S("[2, 2]", "ScalarList"), S("[3, 3]", "ScalarList"),
                         S("[1, 1]", "ScalarList"), S("1")};
  const OpWork w = WorkOfOp("aten::conv2d", conv2d);
  EXPECT_EQ(w.kind, WorkKind::kConv);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * 64 * 112 * 112 * 3 * 49);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (32 * 3 * 224 * 224 + 64 * 3 * 49 + 32.0 * 64 * 112 * 112));
  // cudnn_convolution(self, weight, padding, stride, dilation, groups, ...):
  // the TimeSformer patch embedding, 16x16 patches with stride 16.
  const OpWork patch = WorkOfOp(
      "aten::cudnn_convolution",
      {T("c10::BFloat16", {128, 3, 224, 224}), T("c10::BFloat16", {768, 3, 16, 16}),
       S("[0, 0]", "ScalarList"), S("[16, 16]", "ScalarList"), S("[1, 1]", "ScalarList"), S("1")});
  EXPECT_DOUBLE_EQ(patch.flops, 2.0 * 128 * 768 * 14 * 14 * 3 * 256);
  // Depthwise: groups = channels.
  const OpWork dw = WorkOfOp("aten::convolution",
                             {T("float", {8, 32, 56, 56}), T("float", {32, 1, 3, 3}), None(),
                              S("[1, 1]"), S("[1, 1]"), S("[1, 1]"), S("False"), S("[0, 0]"), S("32")});
  EXPECT_DOUBLE_EQ(dw.flops, 2.0 * 8 * 32 * 56 * 56 * 1 * 9);
  // Without concrete inputs: stride 1, no padding, and the formula says so.
  const OpWork guess = WorkOfOp("aten::conv2d", {T("float", {1, 3, 10, 10}), T("float", {4, 3, 3, 3})});
  EXPECT_DOUBLE_EQ(guess.flops, 2.0 * 1 * 4 * 8 * 8 * 3 * 9);
  EXPECT_THAT(guess.formula, HasSubstr("not recorded"));
}

// A trace's concrete padding, stride and dilation may be any int64 (issue
// 29): the output size is computed without overflow (UBSan would report
// one), never negative, and the work stays finite.
TEST(OpWorkTest, ConvolutionWithHostileConcreteInputsStaysFinite) {
  for (const char* pad : {"[9223372036854775807, 1]", "[-9223372036854775807, 1]"}) {
    for (const char* transposed : {"False", "True"}) {
      const OpWork w = WorkOfOp(
          "aten::convolution",
          {T("float", {8, 32, int64_t{1} << 40, 56}), T("float", {32, 32, int64_t{1} << 40, 3}), None(),
           S("[9223372036854775807, 1]"), S(pad), S("[9223372036854775807, 1]"), S(transposed),
           S("[0, 0]"), S("1")});
      EXPECT_EQ(w.kind, WorkKind::kConv) << pad << " " << transposed;
      EXPECT_TRUE(std::isfinite(w.flops) && w.flops >= 0) << w.flops;
      EXPECT_TRUE(std::isfinite(w.bytes) && w.bytes >= 0) << w.bytes;
    }
  }
}

TEST(OpWorkTest, ConvolutionBackwardComputesTheMaskedGradients) {
  // convolution_backward(grad_out [8, 64, 28, 28], input [8, 32, 56, 56],
  // weight [64, 32, 3, 3], bias_sizes, stride 2, padding 1, dilation 1,
  // transposed, output_padding, groups 1, output_mask).
  auto args = [](const char* mask) {
    return OpArgs{T("float", {8, 64, 28, 28}), T("float", {8, 32, 56, 56}), T("float", {64, 32, 3, 3}),
                  S("[64]"), S("[2, 2]"), S("[1, 1]"), S("[1, 1]"), S("False"), S("[0, 0]"), S("1"),
                  S(mask, "ScalarList")};
  };
  const double fwd = 2.0 * 8 * 64 * 28 * 28 * 32 * 9;
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::convolution_backward", args("[True, True, True]")).flops, 2 * fwd);
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::convolution_backward", args("[False, True, False]")).flops, fwd);
}

TEST(OpWorkTest, AttentionForwardBackwardAndCausal) {
  // SDPA, q/k/v [4, 16, 1024, 64] in fp16.
  auto qkv = [] {
    return OpArgs{T("c10::Half", {4, 16, 1024, 64}), T("c10::Half", {4, 16, 1024, 64}),
                  T("c10::Half", {4, 16, 1024, 64})};
  };
  OpArgs sdpa = qkv();
  sdpa.push_back(None());       // attn_mask
  sdpa.push_back(S("0."));      // dropout_p
  sdpa.push_back(S("False"));   // is_causal
  const double full = 4.0 * 4 * 16 * 1024 * 1024 * 64;
  const OpWork f = WorkOfOp("aten::scaled_dot_product_attention", sdpa);
  EXPECT_EQ(f.kind, WorkKind::kAttention);
  EXPECT_DOUBLE_EQ(f.flops, full);
  EXPECT_DOUBLE_EQ(f.bytes, 2.0 * 4 * (4 * 16 * 1024 * 64));  // q, k, v, out; no L x S matrix
  sdpa[5] = S("True");
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::scaled_dot_product_attention", sdpa).flops, full / 2);
  OpArgs bwd = qkv();
  bwd.insert(bwd.begin(), T("c10::Half", {4, 16, 1024, 64}));  // grad_out first
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::_scaled_dot_product_flash_attention_backward", bwd).flops, 2.5 * full);
  // _flash_attention_forward takes [B, L, H, E].
  const OpWork fa = WorkOfOp("aten::_flash_attention_forward",
                             {T("c10::BFloat16", {4, 1024, 16, 64}), T("c10::BFloat16", {4, 1024, 16, 64}),
                              T("c10::BFloat16", {4, 1024, 16, 64})});
  EXPECT_DOUBLE_EQ(fa.flops, full);
}

TEST(OpWorkTest, MemoryOps) {
  // Out of place, with broadcasting: x [16, 128] + b [128] -> out [16, 128].
  const OpWork add = WorkOfOp("aten::add", {T("float", {16, 128}), T("float", {128}), S("1")});
  EXPECT_EQ(add.kind, WorkKind::kMemory);
  EXPECT_DOUBLE_EQ(add.bytes, 4.0 * (16 * 128 + 128 + 16 * 128));
  // In place: read both, write the first.
  const OpWork mul_ = WorkOfOp("aten::mul_", {T("float", {1000}), T("float", {1000})});
  EXPECT_DOUBLE_EQ(mul_.bytes, 4.0 * 3000);
  // copy_ reads the source and writes the destination.
  const OpWork copy = WorkOfOp("aten::copy_", {T("c10::Half", {10, 10}), T("float", {10, 10}), S("False")});
  EXPECT_DOUBLE_EQ(copy.bytes, 2.0 * 100 + 4.0 * 100);
  // fill_ writes only.
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::fill_", {T("float", {256}), S("0")}).bytes, 1024);
  // A reduction reads its input.
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::sum", {T("float", {16, 128}), S("[0]"), S("False"), None()}).bytes,
                   4.0 * 16 * 128);
  // layer_norm: x, weight, bias read, y written.
  const OpWork ln = WorkOfOp("aten::native_layer_norm",
                             {T("c10::BFloat16", {1, 25089, 768}), S("[768]", "ScalarList"),
                              T("c10::BFloat16", {768}), T("c10::BFloat16", {768}), S("1e-06")});
  EXPECT_DOUBLE_EQ(ln.bytes, 2.0 * (2 * 25089 * 768 + 2 * 768));
  // A foreach op over a list of tensors, in place (Adam's step).
  OpArg list{"TensorList", {{256, 2056}, {256}, {128, 256}}, "", true};
  const double list_bytes = 4.0 * (256 * 2056 + 256 + 128 * 256);
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::_foreach_mul_", {list, S("0.9")}).bytes, 2 * list_bytes);
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::_foreach_addcdiv_", {list, list, list, S("1")}).bytes, 4 * list_bytes);
  // cat reads its inputs and writes them again.
  OpArg parts{"TensorList", {{8, 1, 768}, {8, 3136, 768}}, "", true};
  EXPECT_DOUBLE_EQ(WorkOfOp("aten::cat", {parts, S("1")}).bytes, 2 * 4.0 * 8 * 3137 * 768);
  // embedding reads only the rows it gathers.
  const OpWork emb = WorkOfOp("aten::embedding", {T("float", {50000, 512}), T("long int", {8, 128})});
  EXPECT_DOUBLE_EQ(emb.bytes, 8.0 * 8 * 128 + 2 * 8.0 * 128 * 512 * 4);
}

TEST(OpWorkTest, BatchScalingGrowsActivationsNotParameters) {
  // The toy MLP's parameters (what its Adam step reads), also transposed.
  const std::vector<std::vector<int64_t>> params = {{256, 2056}, {2056, 256}, {256}};
  const IsParameterFn is_param = [&](std::string_view, size_t, const std::vector<int64_t>& s) {
    for (const auto& p : params) {
      if (p == s) return true;
    }
    return false;
  };
  // Forward: addmm(bias, x [16, 2056], W^T [2056, 256]) at batch 16 -> 2056.
  const OpArgs fwd = {T("float", {256}), T("float", {16, 2056}), T("float", {2056, 256}), S("1"), S("1")};
  const OpWork w = ScaleWork(WorkOfOp("aten::addmm", fwd), "aten::addmm", fwd, 128.5, is_param);
  EXPECT_DOUBLE_EQ(w.flops, 128.5 * (2.0 * 16 * 256 * 2056 + 16 * 256));
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (256 + 2056.0 * 2056 + 2056 * 256 + 2056.0 * 256));
  // Weight gradient: mm(dY^T [256, 16], X [16, 2056]) -> [256, 2056], a
  // parameter-sized output: only the inputs grow.
  const OpArgs wgrad = {T("float", {256, 16}), T("float", {16, 2056})};
  const OpWork g = ScaleWork(WorkOfOp("aten::mm", wgrad), "aten::mm", wgrad, 128.5, is_param);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 256 * 2056 * 2056);
  EXPECT_DOUBLE_EQ(g.bytes, 4.0 * (256.0 * 2056 + 2056.0 * 2056 + 256.0 * 2056));
  // A memory op on activations grows by the factor; on parameters, not.
  const OpArgs relu = {T("float", {16, 256})};
  EXPECT_DOUBLE_EQ(ScaleWork(WorkOfOp("aten::relu", relu), "aten::relu", relu, 2, is_param).bytes,
                   2 * WorkOfOp("aten::relu", relu).bytes);
  const OpArgs cast = {T("float", {256, 2056})};
  EXPECT_DOUBLE_EQ(ScaleWork(WorkOfOp("aten::_to_copy", cast), "aten::_to_copy", cast, 2, is_param).bytes,
                   WorkOfOp("aten::_to_copy", cast).bytes);
}

TEST(OpWorkTest, WithoutShapesSaysSo) {
  const OpWork w = WorkOfOp("aten::mm", {});
  EXPECT_EQ(w.kind, WorkKind::kNone);
  EXPECT_THAT(w.why, HasSubstr("no shapes recorded"));
  EXPECT_EQ(WorkOfOp("aten::add", {S("1"), S("2")}).kind, WorkKind::kNone);
}

TEST(OpWorkTest, ComputeOpsAreKnown) {
  EXPECT_TRUE(IsComputeOp("aten::addmm"));
  EXPECT_TRUE(IsComputeOp("aten::cudnn_convolution"));
  EXPECT_TRUE(IsComputeOp("aten::_scaled_dot_product_flash_attention"));
  EXPECT_FALSE(IsComputeOp("aten::add"));
  EXPECT_FALSE(IsComputeOp("mm"));
}

TEST(MathTypeTest, ElementTypesAndKernelNames) {
  EXPECT_EQ(ElementBytes("float"), 4);
  EXPECT_EQ(ElementBytes("c10::BFloat16"), 2);
  EXPECT_EQ(ElementBytes("long int"), 8);
  EXPECT_EQ(ElementBytes("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(ElementBytes("Scalar"), 0);
  EXPECT_EQ(MathOfKernelName("ampere_sgemm_64x64_tn"), Math::kFp32);
  EXPECT_EQ(MathOfKernelName("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32"), Math::kTf32);
  EXPECT_EQ(MathOfKernelName("cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_32x1_nn_align8"), Math::kBf16);
  EXPECT_EQ(MathOfKernelName("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"), Math::kFp16);
  EXPECT_EQ(MathOfKernelName("void at::native::vectorized_elementwise_kernel<4>"), std::nullopt);
  EXPECT_FALSE(UsesMatrixUnits("ampere_sgemm_64x64_tn", Math::kFp32));
}

// A name read once (and packed into the graph's byte per name) answers
// what the name itself answers.
TEST(MathTypeTest, ANameReadOnceAnswersAsTheName) {
  const NameMath sgemm = ReadNameMath("volta_sgemm_128x64_nn");
  EXPECT_EQ(sgemm.math, Math::kFp32);
  EXPECT_TRUE(sgemm.simt);
  EXPECT_FALSE(sgemm.matrix_tag);
  const NameMath xmma = ReadNameMath("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32");
  EXPECT_EQ(xmma.math, Math::kTf32);
  EXPECT_FALSE(xmma.simt);
  EXPECT_TRUE(xmma.matrix_tag);
  for (const char* name :
       {"volta_sgemm_128x64_nn", "ampere_sgemm_64x64_tn", "cutlass_80_tensorop_s1688gemm_128x128",
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n", "ampere_fp16_s16816gemm_fp16_128x128_ldg8",
        "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT", "Cijk_Ailk_Bljk_BBS_BH_MT128x128",
        "void at::native::vectorized_elementwise_kernel<4>", "dgemm_64x64", "fp8_e4m3_gemm", ""}) {
    const NameMath once = UnpackNameMath(PackNameMath(ReadNameMath(name)));
    EXPECT_NE(PackNameMath(ReadNameMath(name)), 0) << name;
    EXPECT_EQ(once.math, MathOfKernelName(name)) << name;
    for (int m = 0; m < kMathCount; ++m) {
      const Math math = static_cast<Math>(m);
      EXPECT_EQ(UsesMatrixUnits(once, math), UsesMatrixUnits(name, math)) << name << " " << m;
      EXPECT_EQ(MathOfKernel(once, math), MathOfKernel(name, math)) << name << " " << m;
    }
    EXPECT_EQ(MathOfKernel(once, std::nullopt), MathOfKernel(name, std::nullopt)) << name;
  }
}

// A kernel's math from its name and its op's recorded input type.
TEST(MathTypeTest, KernelMathFromTheNameAndTheOp) {
  // cuDNN writes f16 for both 16-bit types: the op says which.
  EXPECT_EQ(
      MathOfKernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64",
                   Math::kBf16),
      Math::kBf16);
  // A name without a type (cuBLASLt's nvjet) takes the op's.
  EXPECT_EQ(MathOfKernel("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT", Math::kBf16),
            Math::kBf16);
  EXPECT_EQ(MathOfKernel("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT", std::nullopt),
            std::nullopt);
  // fp32 data on tensor cores is tf32: the name says what the op cannot.
  EXPECT_EQ(MathOfKernel("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", Math::kFp32),
            Math::kTf32);
  // A named type the op contradicts otherwise stands.
  EXPECT_EQ(MathOfKernel("volta_sgemm_128x64_nn", Math::kBf16), Math::kFp32);
}

// Names as the shared traces record them: the element type, where a name
// gives one, decides over the tensor-core shape tag.
TEST(MathTypeTest, KernelNamesOfEachLibrary) {
  // CUTLASS: output type, then the MMA, then the input type.
  EXPECT_EQ(MathOfKernelName("cutlass_80_tensorop_f16_s16816gemm_relu_f16_128x256_32x3_nn_align8"),
            Math::kFp16);
  EXPECT_EQ(MathOfKernelName("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8"),
            Math::kBf16);
  // No type word: m16n8k8 on fp32 data is tf32; m16n8k16 takes 16-bit data.
  EXPECT_EQ(MathOfKernelName("cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4"), Math::kTf32);
  EXPECT_EQ(MathOfKernelName("cutlass_80_tensorop_s16816gemm_128x128_32x3_nn_align8"), Math::kFp16);
  EXPECT_EQ(MathOfKernelName("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn"), Math::kFp16);
  // rocBLAS / hipBLASLt (Tensile).
  EXPECT_EQ(
      MathOfKernelName("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1"),
      Math::kBf16);
  EXPECT_EQ(MathOfKernelName("Cijk_Ailk_Bljk_BBS_BH_MT32x32x64_MI16x16x16x1_SN_1LDSB0"),
            Math::kBf16);
  EXPECT_EQ(MathOfKernelName("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1"), Math::kFp16);
  EXPECT_EQ(MathOfKernelName("Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1"),
            Math::kFp32);
  // ATen's template types.
  EXPECT_EQ(MathOfKernelName("void at::native::vectorized_elementwise_kernel<4, "
                             "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >"),
            Math::kFp32);
  EXPECT_EQ(MathOfKernelName("void at::native::elementwise_kernel<128, 2, c10::BFloat16>"),
            Math::kBf16);
  EXPECT_TRUE(UsesMatrixUnits("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", Math::kBf16));
  EXPECT_TRUE(UsesMatrixUnits("nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTT", Math::kFp16));
  EXPECT_EQ(ParseMath("BF16"), Math::kBf16);
  EXPECT_EQ(ParseMath("int8"), std::nullopt);
  EXPECT_EQ(ParseMath(std::string(1 << 20, 'f')), std::nullopt);
}

}  // namespace
}  // namespace reverie::hardware
