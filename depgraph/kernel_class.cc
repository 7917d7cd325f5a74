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
  if (ContainsAny(s, {"gemm", "gemv", "cublas", "cutlass", "matmul", "xmma", "bmm", "nvjet",
                      "triton_mm", "mma_"})) {
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

bool IsCommunicationTask(const Graph& g, TaskId t) {
  if (g.kind(t) == TaskKind::kComm) return true;
  return g.kind(t) == TaskKind::kKernel &&
         ClassifyKernelName(g.name(t)) == KernelClass::kCommunication;
}

std::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "AllReduce";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kAllGather: return "AllGather";
    case Collective::kAllToAll: return "AllToAll";
    case Collective::kBroadcast: return "Broadcast";
    case Collective::kReduce: return "Reduce";
    case Collective::kSendRecv: return "SendRecv";
    case Collective::kOther: return "other";
  }
  return "other";
}

Collective CollectiveOfName(std::string_view name) {
  // Separators vary ("AllReduce", "all_reduce", "all-reduce"): compare without them.
  std::string s;
  s.reserve(name.size());
  for (char c : name) {
    if (c == '_' || c == '-' || c == ' ') continue;
    s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  auto has = [&](std::string_view k) { return s.find(k) != std::string::npos; };
  // "allreduce" and "reducescatter" contain "reduce": test them first.
  if (has("allreduce")) return Collective::kAllReduce;
  if (has("reducescatter")) return Collective::kReduceScatter;
  if (has("allgather")) return Collective::kAllGather;
  if (has("alltoall")) return Collective::kAllToAll;
  if (has("broadcast")) return Collective::kBroadcast;
  if (has("sendrecv") || has("ncclkernelsend") || has("ncclkernelrecv") ||
      has("nccldevkernelsend") || has("nccldevkernelrecv")) {
    return Collective::kSendRecv;
  }
  if (has("ncclkernelreduce") || has("nccldevkernelreduce") || has("nccl:reduce")) {
    return Collective::kReduce;
  }
  return Collective::kOther;
}

}  // namespace reverie::depgraph
