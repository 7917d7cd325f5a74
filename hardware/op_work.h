// File: hardware/op_work.h
//
// The work of one framework op from the shapes and element types the
// profiler recorded for its inputs (PyTorch `record_shapes`: Kineto's
// "Input Dims", "Input type", "Concrete Inputs"): floating-point operations
// and bytes moved to and from memory, the two axes of a roofline.
//
// - GEMMs (mm, addmm, bmm, baddbmm, matmul, linear, mv, _scaled_mm):
//   2*m*n*k per matrix product; bytes of both operands and the result.
// - Convolutions (conv1d/2d/3d, convolution, _convolution,
//   cudnn_/miopen_convolution, and their backward): 2 * N * K * prod(out)
//   * C/groups * prod(kernel), the output size from stride, padding and
//   dilation when recorded (else stride 1, no padding: said in `formula`);
//   the backward computes the input and weight gradients (output_mask).
// - Attention (scaled_dot_product_attention and its flash / efficient /
//   cudnn forms, _flash_attention_forward, _efficient_attention_forward):
//   4 * B * H * L * S * E (QK^T and PV), halved when causal; the backward
//   2.5x that (FlashAttention-2: five matrix products for two); bytes of
//   q, k, v and the output (no L x S matrix: these kernels keep it on chip).
// - Everything else with tensor inputs is memory work: every tensor input
//   read once and the output written, the output as large as the largest
//   input (element-wise ops with broadcasting, normalizations, softmax),
//   except in-place ops (the first input is the output), copies, fills,
//   concatenation (the inputs again) and reductions (a negligible output).
//   One FLOP per output element.
//
// What it cannot know: which kernel a library picks, fused epilogues, the
// bytes a cache saves, and data-dependent sizes (nonzero, index ops).
#ifndef REVERIE_HARDWARE_OP_WORK_H_
#define REVERIE_HARDWARE_OP_WORK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/math_type.h"

namespace reverie::hardware {

// One input of an op as the profiler recorded it.
struct OpArg {
  std::string type;                          // "float", "c10::BFloat16", "Scalar", "TensorList", ""
  std::vector<std::vector<int64_t>> shapes;  // one per tensor (several for a TensorList); none for scalars
  std::string concrete;                      // "[1, 1]", "1", "True"; "" when not recorded
  bool is_list = false;
  bool operator==(const OpArg&) const = default;
};
using OpArgs = std::vector<OpArg>;

enum class WorkKind : uint8_t { kNone = 0, kGemm, kConv, kAttention, kMemory };
std::string_view WorkKindName(WorkKind k);  // "none", "gemm", "conv", "attention", "memory"

struct OpWork {
  WorkKind kind = WorkKind::kNone;  // kNone: no work known, `why` says why
  double flops = 0;
  double bytes = 0;
  double fp32_bytes = 0;     // of those, bytes of fp32 tensors (what half precision halves)
  std::optional<Math> math;  // the floating-point type of the inputs
  // For a batch change (ScaleWork): of `bytes`, the output's (GEMM,
  // convolution, attention), its shape (empty: not a matrix a parameter
  // could have), and output bytes that are parameter-sized whatever the
  // batch (a convolution backward's weight gradient).
  double out_bytes = 0;
  std::vector<int64_t> out_shape;
  double out_fixed_bytes = 0;
  // Matrix products: the largest power of two up to 16 that divides m, n
  // and k (1 for the vocabulary of 50257); 0 for other ops. Half-precision
  // tensor-core kernels run at full rate only on 16-byte aligned operands.
  int32_t matrix_alignment = 0;
  std::string formula;       // how the figures were computed ("2*m*n*k, m=16 n=256 k=2056")
  std::string why;           // for kNone: "no shapes recorded", ...
};

// The math of an op: its first floating-point tensor input's type
// ("c10::BFloat16" -> bf16); nullopt when no such input was recorded.
std::optional<Math> InputMath(const OpArgs& args);

// The work of op `name` ("aten::addmm") with inputs `args`. The profiler
// records no element type for a TensorList ("TensorList"): its tensors
// are taken to be of the op's other tensors' type, else `list_type`.
OpWork WorkOfOp(std::string_view name, const OpArgs& args, std::string_view list_type = "float");

// Whether an input tensor of an op is a model parameter (its size does not
// follow the batch): (op name, argument index, the tensor's sizes).
using IsParameterFn =
    std::function<bool(std::string_view op, size_t arg, const std::vector<int64_t>& shape)>;

// The work of `w` (= WorkOfOp(name, args, list_type)) with the batch
// `factor` times larger: FLOPs of matrix math x factor; bytes of every
// tensor that is not a parameter (inputs, and outputs shaped like
// neither) x factor, parameter-sized ones kept; a memory op's bytes and
// FLOPs by the same share as its inputs' bytes.
OpWork ScaleWork(const OpWork& w, std::string_view name, const OpArgs& args, double factor,
                 const IsParameterFn& is_parameter, std::string_view list_type = "float");

// Whether `name` is an op whose work is matrix math (the GEMM, convolution
// and attention families above), so that a kernel of those classes looks
// for such an op among the enclosing ones.
bool IsComputeOp(std::string_view name);

}  // namespace reverie::hardware

#endif  // REVERIE_HARDWARE_OP_WORK_H_
