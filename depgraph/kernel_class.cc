// File: depgraph/kernel_class.cc
//
// ClassifyKernelName(): the name cut into lower-case words, then whole-word
// (or word-sequence) rules in a fixed order. Why words: substring rules made
// every ATen kernel with a C++ lambda in its templated name ("{lambda(float)
// #1}") an optimizer kernel ("lamb"), and "convert" a convolution.
#include "depgraph/kernel_class.h"

#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace reverie::depgraph {
namespace {

// Lower-case words of `name`: a word ends at a character that is not a
// letter or digit, at a letter/digit change, where a lower-case letter is
// followed by an upper-case one, and before the last capital of an acronym
// that starts a word ("splitKreduce" -> split k reduce,
// "ncclDevKernel_AllReduce" -> nccl dev kernel all reduce, "ClassNLLCriterion"
// -> class nll criterion).
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) out.push_back(std::move(cur));
    cur.clear();
  };
  auto at = [&](size_t i) -> unsigned char {
    return i < name.size() ? static_cast<unsigned char>(name[i]) : 0;
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char u = at(i);
    if (!std::isalnum(u)) {
      flush();
      continue;
    }
    const unsigned char p = i > 0 ? at(i - 1) : 0;
    if (std::isalnum(p)) {
      const bool digit_change = (std::isdigit(u) != 0) != (std::isdigit(p) != 0);
      const bool camel = std::islower(p) && std::isupper(u);
      const bool acronym_end = std::isupper(p) && std::isupper(u) && std::islower(at(i + 1));
      if (digit_change || camel || acronym_end) flush();
    }
    cur.push_back(static_cast<char>(std::tolower(u)));
  }
  flush();
  return out;
}

// The kernel's own function name: the last identifier before its template
// arguments or parameters, without return type and namespaces
// ("void at::native::vectorized_elementwise_kernel<4, ...>(...)" ->
// vectorized_elementwise_kernel). The words of the template arguments
// (functors, types, library namespaces) refine it but do not decide it.
std::string_view OwnName(std::string_view name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  size_t open = name.find_first_of("<(");
  while (open != std::string_view::npos && name.substr(open, kAnonymous.size()) == kAnonymous) {
    open = name.find_first_of("<(", open + kAnonymous.size());
  }
  std::string_view head = name.substr(0, open);
  const size_t sep = head.find_last_of(": ");
  if (sep != std::string_view::npos) head = head.substr(sep + 1);
  return head;
}

class Name {
 public:
  explicit Name(std::string_view name) : words_(Words(name)) {}

  // Any of the words.
  bool Has(std::initializer_list<std::string_view> words) const {
    for (const std::string& w : words_) {
      for (std::string_view k : words) {
        if (w == k) return true;
      }
    }
    return false;
  }
  // A word that starts with one of the prefixes ("sgemm" and "s16816gemm"
  // end in gemm, "convolution" starts with conv).
  bool HasPrefix(std::initializer_list<std::string_view> prefixes) const {
    for (const std::string& w : words_) {
      for (std::string_view k : prefixes) {
        if (std::string_view(w).substr(0, k.size()) == k) return true;
      }
    }
    return false;
  }
  bool HasSuffix(std::initializer_list<std::string_view> suffixes) const {
    for (const std::string& w : words_) {
      for (std::string_view k : suffixes) {
        if (w.size() >= k.size() && std::string_view(w).substr(w.size() - k.size()) == k) {
          return true;
        }
      }
    }
    return false;
  }
  // Consecutive words a b, or the one word "ab" ("all reduce", "allreduce").
  bool HasPair(std::string_view a, std::string_view b) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      const std::string& w = words_[i];
      if (w.size() == a.size() + b.size() && std::string_view(w).substr(0, a.size()) == a &&
          std::string_view(w).substr(a.size()) == b) {
        return true;
      }
      if (w == a && i + 1 < words_.size() && words_[i + 1] == b) return true;
    }
    return false;
  }
  bool First(std::string_view w) const { return !words_.empty() && words_[0] == w; }

 private:
  std::vector<std::string> words_;
};

bool IsCommunication(const Name& n) {
  return n.HasPrefix({"nccl", "rccl"}) || n.HasPair("all", "reduce") ||
         n.HasPair("all", "gather") || n.HasPair("reduce", "scatter") ||
         n.HasPair("all", "to") || n.Has({"alltoall", "sendrecv", "all2all"}) ||
         n.HasPair("send", "recv");
}

bool IsOptimizer(const Name& n) {
  return n.Has({"adam", "adamw", "sgd", "lamb", "lars", "adagrad", "rmsprop", "adadelta",
                "adamax", "nadam", "radam", "adafactor", "lion", "shampoo"});
}

// "X_to_float", "float_to_FP8rowwise": a conversion between number types.
bool IsCastName(const Name& n) {
  for (std::string_view type : {"float", "half", "bfloat", "bf", "fp", "int", "double"}) {
    if (n.HasPair("to", type)) return true;
  }
  return false;
}

// Data movement that libraries name after their own families: layout
// transforms inside cuDNN, a KV-cache write in an attention library,
// quantization casts.
bool IsDataMovement(const Name& n) {
  return n.HasPair("nchw", "to") || n.HasPair("nhwc", "to") ||
         n.Has({"nchw2nhwc", "nhwc2nchw"}) || (n.Has({"scale"}) && n.Has({"packed"})) ||
         (n.Has({"reshape"}) && n.Has({"cache"})) ||
         n.Has({"quantize", "quant", "dequantize", "dequant"}) || IsCastName(n);
}

bool IsAttention(const Name& n) {
  return n.Has({"flash", "fmha", "attention", "attn", "mha", "sdpa"}) ||
         n.HasPrefix({"flashattn", "pagedattention"});
}

bool IsNormalization(const Name& n) {
  return n.HasPair("batch", "norm") || n.HasPair("layer", "norm") ||
         n.HasPair("group", "norm") || n.HasPair("instance", "norm") ||
         n.HasPair("rms", "norm") || n.Has({"batchnorm", "layernorm", "groupnorm", "rmsnorm"}) ||
         (n.Has({"bn"}) && n.Has({"fw", "bw", "fwd", "bwd"})) ||
         // Layer/group norm's statistics and affine-gradient kernels.
         n.HasPair("rowwise", "moments") || n.HasPair("gamma", "beta");
}

// After normalization and attention: cuDNN and MIOpen run those too. CK
// names a convolution's weight gradient a batched GEMM "bwd_weight"; cuDNN's
// FFT convolution runs complex GEMMs (gcgemm).
bool IsConvolution(const Name& n) {
  return n.Has({"conv", "convolution", "convolve", "conv1d", "conv2d", "conv3d", "winograd",
                "fprop", "dgrad", "wgrad", "scudnn", "igemm", "cask", "fft2d", "cudnn", "miopen",
                "gcgemm", "im2col"}) ||
         n.HasPrefix({"convolution", "winograd"}) || n.HasPair("bwd", "weight");
}

bool IsGemm(const Name& n) {
  // Words ending in gemm or gemv (sgemm, hgemm, s1688gemm's "gemm"; igemm is
  // conv, found first), except FBGEMM's library name on its other kernels.
  // Not "cutlass" alone: other libraries use its types (cutlass::half_t).
  return (n.HasSuffix({"gemm", "gemv"}) && !n.Has({"fbgemm"})) || n.First("cijk") ||
         n.Has({"cublas", "cublaslt", "hipblaslt", "rocblas", "xmma", "nvjet", "matmul", "bmm",
                "mm", "addmm", "baddbmm", "mma", "wmma", "tensorop"});
}

bool IsReduction(const Name& n) {
  return n.Has({"reduce", "reduction", "softmax", "sum", "mean", "argmax", "argmin", "nll",
                "loss", "norm", "pool", "pooling", "cumsum", "logsumexp", "topk", "criterion",
                "entropy"}) ||
         n.HasPair("soft", "max") || n.HasPrefix({"maxpool", "avgpool"}) ||
         n.HasPair("max", "pool") || n.HasPair("avg", "pool");
}

bool IsActivation(const Name& n) {
  return n.Has({"relu", "relu6", "threshold", "gelu", "silu", "swish", "sigmoid", "tanh", "elu",
                "selu", "celu", "hardtanh", "hardswish", "hardsigmoid", "mish", "softplus",
                "clamp", "leaky", "prelu", "glu", "swiglu"});
}

bool IsElementwise(const Name& n) {
  return n.Has({"elementwise", "vectorized", "unrolled", "pointwise", "functor", "fill", "copy",
                "cat", "index", "gather", "scatter", "where", "add", "mul", "div", "sub", "pow",
                "exp", "log", "sqrt", "rsqrt", "abs", "neg", "sign", "transpose", "permute",
                "cast", "convert", "dropout", "distribution", "rotary", "compare", "masked",
                "arange", "contiguous", "nchw", "nhwc", "nchw2cnhw", "bernoulli", "uniform",
                "normal", "clone", "foreach", "rescale"}) ||
         n.HasPrefix({"nchwto", "nhwcto", "batchedtranspose"});
}

// ATen's pointwise kernel templates (and the multi-tensor one): whatever
// functor they run (a ReduceAdd scatter, the squared error of an MSE loss)
// they are one pass over elements; only an activation refines them.
bool IsPointwiseTemplate(const Name& own) {
  return own.Has({"elementwise", "vectorized", "unrolled"}) ||
         own.HasPair("multi", "tensor");
}

// CUB's device-wide primitives other than reductions (scans, sorts, run
// lengths, compaction) are bookkeeping, not a class of their own.
bool IsCubPrimitive(const Name& n) {
  return n.Has({"cub"}) &&
         n.Has({"scan", "sort", "radix", "key", "compact", "select", "histogram", "run"});
}

KernelClass Classify(const Name& n, const Name& own) {
  if (IsCommunication(n)) return KernelClass::kCommunication;
  if (IsOptimizer(n)) return KernelClass::kOptimizer;
  if (IsDataMovement(n)) return KernelClass::kElementwise;
  if (IsAttention(n)) return KernelClass::kAttention;
  if (IsNormalization(n)) return KernelClass::kNormalization;
  if (IsConvolution(n)) return KernelClass::kConv;
  if (IsGemm(n)) return KernelClass::kGemm;
  if (IsCubPrimitive(n)) return KernelClass::kOther;
  if (IsPointwiseTemplate(own)) {
    return IsActivation(n) ? KernelClass::kActivation : KernelClass::kElementwise;
  }
  if (IsReduction(n)) return KernelClass::kReduction;
  if (IsActivation(n)) return KernelClass::kActivation;
  if (IsElementwise(n)) return KernelClass::kElementwise;
  return KernelClass::kOther;
}

// Triton (inductor) names say the kind: triton_poi_ (pointwise), triton_red_
// and triton_per_ (reductions), triton_tem_ (templates: matmuls).
bool TritonKind(const Name& n, KernelClass* out) {
  if (!n.First("triton")) return false;
  if (n.Has({"poi"})) *out = KernelClass::kElementwise;
  else if (n.Has({"red", "per"})) *out = KernelClass::kReduction;
  else if (n.Has({"tem", "mm"})) *out = KernelClass::kGemm;
  else return false;
  return true;
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
    case KernelClass::kActivation: return "activation";
  }
  return "other";
}

bool ParseKernelClass(std::string_view name, KernelClass* out) {
  for (int c = 0; c < kKernelClassCount; ++c) {
    if (KernelClassName(static_cast<KernelClass>(c)) == name) {
      *out = static_cast<KernelClass>(c);
      return true;
    }
  }
  return false;
}

KernelClass ClassifyKernelName(std::string_view name) {
  const Name n(name);
  // Copies and sets as Kineto / CUPTI name them ("Memcpy HtoD (Pageable ->
  // Device)", "Memset (Device)"): an activity, never a kernel's template.
  if (n.First("memcpy")) return KernelClass::kMemcpy;
  if (n.First("memset")) return KernelClass::kMemset;
  KernelClass c;
  if (TritonKind(n, &c)) return c;
  return Classify(n, Name(OwnName(name)));
}

bool IsGenericPointwiseClass(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kActivation ||
         c == KernelClass::kReduction || c == KernelClass::kOther;
}

KernelClass TaskClass(const Graph& g, TaskId t) {
  switch (g.kind(t)) {
    case TaskKind::kMemcpy: return KernelClass::kMemcpy;
    case TaskKind::kMemset: return KernelClass::kMemset;
    case TaskKind::kComm: return KernelClass::kCommunication;
    case TaskKind::kKernel: break;
    default: return KernelClass::kOther;
  }
  const KernelClass c = NameClass(g, t);
  return g.in_optimizer_step(t) && IsGenericPointwiseClass(c) ? KernelClass::kOptimizer : c;
}

KernelClass NameClass(const Graph& g, TaskId t) {
  std::vector<int8_t>& cache = g.name_class_cache();
  const uint32_t id = g.name_id(t);
  if (cache.size() < g.name_count()) cache.resize(g.name_count(), -1);
  if (cache[id] < 0) cache[id] = static_cast<int8_t>(ClassifyKernelName(g.name(t)));
  return static_cast<KernelClass>(cache[id]);
}

hardware::NameMath KernelNameMath(const Graph& g, TaskId t) {
  std::vector<uint8_t>& cache = g.name_math_cache();
  const uint32_t id = g.name_id(t);
  if (cache.size() < g.name_count()) cache.resize(g.name_count(), 0);
  if (cache[id] == 0) cache[id] = hardware::PackNameMath(hardware::ReadNameMath(g.name(t)));
  return hardware::UnpackNameMath(cache[id]);
}

bool IsCommunicationTask(const Graph& g, TaskId t) {
  return TaskClass(g, t) == KernelClass::kCommunication;
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
