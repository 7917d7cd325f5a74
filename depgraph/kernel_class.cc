#include "depgraph/kernel_class.h"

#include <cctype>
#include <initializer_list>
#include <string>

namespace reverie::depgraph {
namespace {

bool ContainsAny(const std::string& s, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (s.find(n) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string_view KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kConv: return "conv";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kNormalization: return "normalization";
    case KernelClass::kCommunication: return "communication";
    case KernelClass::kMemcpy: return "memcpy";
    case KernelClass::kMemset: return "memset";
    case KernelClass::kOptimizer: return "optimizer";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

KernelClass ClassifyKernelName(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ContainsAny(s, {"nccl", "rccl", "allreduce", "all_reduce", "allgather", "all_gather",
                      "reducescatter", "reduce_scatter", "alltoall", "sendrecv"})) {
    return KernelClass::kCommunication;
  }
  if (ContainsAny(s, {"memcpy"})) return KernelClass::kMemcpy;
  if (ContainsAny(s, {"memset"})) return KernelClass::kMemset;
  if (ContainsAny(
          s, {"adam", "sgd", "lamb", "adagrad", "rmsprop", "multi_tensor_apply", "fused_optim"})) {
    return KernelClass::kOptimizer;
  }
  if (ContainsAny(s, {"flash", "fmha", "attention"})) return KernelClass::kAttention;
  if (ContainsAny(s, {"batch_norm", "batchnorm", "bn_fw", "bn_bw", "layer_norm", "layernorm",
                      "group_norm", "groupnorm", "rms_norm", "rmsnorm", "instance_norm"})) {
    return KernelClass::kNormalization;
  }
  if (ContainsAny(s, {"conv", "cudnn", "winograd", "fprop", "dgrad", "wgrad", "implicit_gemm"})) {
    return KernelClass::kConv;
  }
  if (ContainsAny(s, {"gemm", "gemv", "cublas", "cutlass", "matmul", "xmma", "bmm"})) {
    return KernelClass::kGemm;
  }
  if (ContainsAny(s, {"reduce", "softmax", "sum_kernel", "mean_kernel", "argmax", "max_kernel",
                      "min_kernel", "cross_entropy", "nll_loss", "norm_kernel"})) {
    return KernelClass::kReduction;
  }
  if (ContainsAny(s, {"elementwise", "vectorized", "unrolled", "pointwise", "fill", "copy", "relu",
                      "gelu", "silu", "sigmoid", "tanh", "dropout", "where", "clamp", "cat_array",
                      "catarray", "index", "add", "mul", "div"})) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

}  // namespace reverie::depgraph
