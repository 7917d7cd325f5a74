#include "hardware/op_work.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/sv.h"
#include "hardware/text.h"

namespace reverie::hardware {
namespace {

using Shape = std::vector<int64_t>;

double Elements(const Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

// The i-th argument's first tensor shape, or nullptr.
const Shape* TensorAt(const OpArgs& a, size_t i) {
  if (i >= a.size() || a[i].is_list || a[i].shapes.empty()) return nullptr;
  if (ElementBytes(a[i].type) == 0) return nullptr;
  return &a[i].shapes[0];
}

double ArgBytes(const OpArg& a) {
  const int32_t es = ElementBytes(a.type);
  if (es == 0) return 0;
  double n = 0;
  for (const Shape& s : a.shapes) n += Elements(s);
  return n * es;
}

double ArgFp32Bytes(const OpArg& a) { return a.type == "float" ? ArgBytes(a) : 0; }

int32_t FirstElementBytes(const OpArgs& args) {
  for (const OpArg& a : args) {
    if (!a.shapes.empty() && ElementBytes(a.type) > 0 && MathOfType(a.type)) return ElementBytes(a.type);
  }
  for (const OpArg& a : args) {
    if (!a.shapes.empty() && ElementBytes(a.type) > 0) return ElementBytes(a.type);
  }
  return 0;
}

// Integers of a concrete argument: "[2, 2]" -> {2, 2}, "3" -> {3}; empty
// when not recorded or not integers.
std::vector<int64_t> ConcreteInts(const OpArgs& a, size_t i) {
  std::vector<int64_t> out;
  if (i >= a.size()) return out;
  std::string_view s = text::Strip(a[i].concrete);
  if (s.empty()) return out;
  text::ConsumePrefix(&s, "[");
  text::ConsumeSuffix(&s, "]");
  for (absl::string_view part : absl::StrSplit(Sv(s), ',', absl::SkipWhitespace())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) return {};
    out.push_back(v);
  }
  return out;
}

std::optional<bool> ConcreteBool(const OpArgs& a, size_t i) {
  if (i >= a.size()) return std::nullopt;
  const std::string_view s = text::Strip(a[i].concrete);
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  return std::nullopt;
}

OpWork None(std::string why) {
  OpWork w;
  w.why = std::move(why);
  return w;
}

OpWork Compute(WorkKind kind, double flops, const OpArgs& args, double out_elements,
               std::string formula, std::vector<int64_t> out_shape = {}) {
  OpWork w;
  w.kind = kind;
  w.flops = flops;
  const int32_t es = FirstElementBytes(args);
  double fp32 = 0;
  for (const OpArg& a : args) {
    w.bytes += ArgBytes(a);
    fp32 += ArgFp32Bytes(a);
  }
  w.bytes += out_elements * es;
  w.out_bytes = out_elements * es;
  w.out_shape = std::move(out_shape);
  w.math = InputMath(args);
  if (w.math == Math::kFp32) fp32 += out_elements * es;
  w.fp32_bytes = fp32;
  w.formula = std::move(formula);
  return w;
}

// --- GEMMs ---

// The largest power of two up to 16 dividing every dimension of a matrix
// product (OpWork::matrix_alignment).
int32_t MatrixAlignment(std::initializer_list<double> dims) {
  int32_t a = 16;
  for (const double d : dims) {
    const auto v = static_cast<int64_t>(d);
    while (a > 1 && v % a != 0) a /= 2;
  }
  return a;
}

// a[..., m, k] x b[..., k, n] with broadcast batch dims (1-D operands as
// torch.matmul treats them).
OpWork Matmul(const Shape& a, const Shape& b, const OpArgs& args, double extra_flops_per_out,
              std::string_view what) {
  if (a.empty() || b.empty()) return None("a matrix product of a 0-d tensor");
  const double m = a.size() >= 2 ? static_cast<double>(a[a.size() - 2]) : 1;
  const double k = static_cast<double>(a.back());
  const double n = b.size() >= 2 ? static_cast<double>(b.back()) : 1;
  double batch = 1;
  const size_t ab = a.size() > 2 ? a.size() - 2 : 0, bb = b.size() > 2 ? b.size() - 2 : 0;
  for (size_t i = 0; i < std::max(ab, bb); ++i) {
    const double da = i < ab ? static_cast<double>(a[ab - 1 - i]) : 1;
    const double db = i < bb ? static_cast<double>(b[bb - 1 - i]) : 1;
    batch *= std::max(da, db);
  }
  const double out = batch * m * n;
  const double flops = 2 * batch * m * n * k + extra_flops_per_out * out;
  std::vector<int64_t> out_shape;
  if (batch == 1) out_shape = {static_cast<int64_t>(m), static_cast<int64_t>(n)};
  OpWork w = Compute(WorkKind::kGemm, flops, args, out,
                     absl::StrFormat("%s: 2*batch*m*n*k, batch=%g m=%g n=%g k=%g", Sv(what), batch,
                                     m, n, k),
                     std::move(out_shape));
  w.matrix_alignment = MatrixAlignment({m, n, k});
  return w;
}

OpWork Linear(const OpArgs& args) {
  const Shape* x = TensorAt(args, 0);
  const Shape* w = TensorAt(args, 1);
  if (x == nullptr || w == nullptr || x->empty() || w->size() != 2) return None("linear without shapes");
  double rows = 1;
  for (size_t i = 0; i + 1 < x->size(); ++i) rows *= static_cast<double>((*x)[i]);
  const double k = static_cast<double>(x->back()), n = static_cast<double>((*w)[0]);
  const bool bias = TensorAt(args, 2) != nullptr;
  OpWork work = Compute(WorkKind::kGemm, 2 * rows * n * k + (bias ? rows * n : 0), args, rows * n,
                        absl::StrFormat("linear: 2*m*n*k, m=%g n=%g k=%g", rows, n, k));
  work.matrix_alignment = MatrixAlignment({rows, n, k});
  return work;
}

// --- Convolutions ---

struct ConvArgs {
  size_t stride = 0, padding = 0, dilation = 0, groups = 0, transposed = 0;  // arg positions, 0 = none
};

ConvArgs ConvLayout(std::string_view name) {
  if (name == "aten::cudnn_convolution") return {3, 2, 4, 5, 0};
  if (name == "aten::miopen_convolution") return {4, 3, 5, 6, 0};
  if (name == "aten::convolution" || name == "aten::_convolution") return {3, 4, 5, 8, 6};
  return {3, 4, 5, 6, 0};  // conv1d/2d/3d, cudnn_convolution_relu, *_add_relu
}

// F = 2 * N * K * prod(out) * C/g * prod(kernel) for x[N, C, in...],
// w[K, C/g, kernel...]; `grad_out` (backward) gives the output size.
OpWork Conv(std::string_view name, const OpArgs& args, const Shape& x, const Shape& w,
            const Shape* grad_out, ConvArgs at, double passes, std::string_view what) {
  const size_t sp = x.size() >= 3 ? x.size() - 2 : 0;
  if (sp == 0 || w.size() != x.size()) return None("convolution shapes of unexpected rank");
  std::vector<int64_t> stride = ConcreteInts(args, at.stride), pad = ConcreteInts(args, at.padding),
                       dil = ConcreteInts(args, at.dilation), groups = ConcreteInts(args, at.groups);
  const bool transposed = at.transposed > 0 && ConcreteBool(args, at.transposed).value_or(false);
  const bool recorded = !stride.empty() || !pad.empty();
  auto pick = [&](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    if (v.empty()) return dflt;
    return v[std::min(i, v.size() - 1)];
  };
  const double g = static_cast<double>(std::max<int64_t>(1, pick(groups, 0, 1)));
  const double n = static_cast<double>(x[0]);
  double spatial_in = 1, spatial_out = 1, kernel = 1;
  for (size_t i = 0; i < sp; ++i) {
    const int64_t in = x[2 + i], k = w[2 + i];
    const int64_t s = std::max<int64_t>(1, pick(stride, i, 1)), p = pick(pad, i, 0),
                  d = std::max<int64_t>(1, pick(dil, i, 1));
    // In doubles: a trace's concrete padding, stride or dilation may be any
    // int64, and the integer formula would overflow (issue 29).
    const double din = static_cast<double>(in), dk = static_cast<double>(k),
                 ds = static_cast<double>(s), dp = static_cast<double>(p), dd = static_cast<double>(d);
    double out = grad_out != nullptr && grad_out->size() == x.size()
                     ? static_cast<double>((*grad_out)[2 + i])
                     : std::trunc((din + 2 * dp - dd * (dk - 1) - 1) / ds) + 1;
    if (transposed && grad_out == nullptr) out = (din - 1) * ds - 2 * dp + dd * (dk - 1) + 1;
    spatial_in *= static_cast<double>(std::max<int64_t>(in, 0));
    spatial_out *= std::max(out, 0.0);
    kernel *= static_cast<double>(std::max<int64_t>(k, 0));
  }
  // Transposed: w is [C_in, C_out/g, kernel...]; the work is the forward
  // convolution's with input and output swapped.
  const double c_in = static_cast<double>(x[1]);
  const double k_out = transposed ? static_cast<double>(w[1]) * g : static_cast<double>(w[0]);
  const double macs = transposed ? n * c_in * spatial_in * (k_out / g) * kernel
                                 : n * k_out * spatial_out * (c_in / g) * kernel;
  const double out_elements = n * k_out * spatial_out;
  // The backward reads grad_out and writes grads as large as x and w.
  OpWork work = Compute(WorkKind::kConv, 2 * macs * passes, args,
                        grad_out == nullptr ? out_elements : Elements(x) + Elements(w), "");
  if (grad_out != nullptr) {
    // The weight gradient is as large as the weight, whatever the batch.
    work.out_fixed_bytes = Elements(w) * FirstElementBytes(args);
    work.out_bytes -= work.out_fixed_bytes;
  }
  work.formula = absl::StrFormat("%s: %g x 2*N*K*out*C/g*kernel, N=%g K=%g out=%g C=%g g=%g kernel=%g%s",
                                 Sv(what), passes, n, k_out, spatial_out, c_in, g, kernel,
                                 recorded || grad_out != nullptr ? ""
                                                                 : " (stride/padding not recorded: 1/0 assumed)");
  (void)name;
  return work;
}

// --- Attention ---

// q, k, v as [B, H, L, E] (bhle) or [B, L, H, E].
OpWork Attention(const OpArgs& args, size_t q_at, bool bhle, std::optional<bool> causal,
                 double passes, std::string_view what) {
  const Shape* q = TensorAt(args, q_at);
  const Shape* k = TensorAt(args, q_at + 1);
  const Shape* v = TensorAt(args, q_at + 2);
  if (q == nullptr || k == nullptr || v == nullptr) return None("attention without q/k/v shapes");
  if (q->size() < 3 || k->size() != q->size() || v->size() != q->size()) {
    return None("attention with variable-length (packed) sequences");
  }
  const size_t r = q->size();
  double bh = 1, l = 0, s = 0, e = static_cast<double>(q->back()), ev = static_cast<double>(v->back());
  if (bhle) {
    for (size_t i = 0; i + 2 < r; ++i) bh *= static_cast<double>((*q)[i]);
    l = static_cast<double>((*q)[r - 2]);
    s = static_cast<double>((*k)[r - 2]);
  } else {
    if (r != 4) return None("attention in an unexpected layout");
    bh = static_cast<double>((*q)[0]) * static_cast<double>((*q)[2]);
    l = static_cast<double>((*q)[1]);
    s = static_cast<double>((*k)[1]);
  }
  const double c = causal.value_or(false) ? 0.5 : 1.0;
  const double flops = passes * c * (2 * bh * l * s * e + 2 * bh * l * s * ev);
  const double out = bh * l * ev;
  return Compute(WorkKind::kAttention, flops, args, out * (passes > 1 ? 4 : 1),
                 absl::StrFormat("%s: %g x (2*BH*L*S*E + 2*BH*L*S*Ev)%s, BH=%g L=%g S=%g E=%g Ev=%g",
                                 Sv(what), passes, c < 1 ? " / 2 (causal)" : "", bh, l, s, e, ev));
}

// --- Memory work ---

bool IsReduction(std::string_view op) {
  for (std::string_view r : {"sum", "mean", "amax", "amin", "max", "min", "norm", "linalg_vector_norm",
                             "var", "std", "var_mean", "std_mean", "argmax", "argmin", "prod", "any",
                             "all", "logsumexp", "count_nonzero"}) {
    if (op == r) return true;
  }
  return false;
}

OpWork Memory(std::string_view name, const OpArgs& args) {
  std::string_view op = name;
  text::ConsumePrefix(&op, "aten::");
  double in = 0, in_fp32 = 0, largest = 0, largest_fp32 = 0, first = 0, first_fp32 = 0;
  bool have_first = false;
  for (const OpArg& a : args) {
    const double b = ArgBytes(a);
    if (b <= 0 && a.shapes.empty()) continue;
    if (ElementBytes(a.type) == 0) continue;
    in += b;
    in_fp32 += ArgFp32Bytes(a);
    if (b > largest) largest = b, largest_fp32 = ArgFp32Bytes(a);
    if (!have_first) first = b, first_fp32 = ArgFp32Bytes(a), have_first = true;
  }
  if (!have_first) return None("no tensor inputs recorded");
  OpWork w;
  w.kind = WorkKind::kMemory;
  w.math = InputMath(args);
  const bool in_place = op.ends_with("_") && !op.ends_with("__");
  std::string_view base = op;
  text::ConsumeSuffix(&base, "_");
  if (base == "embedding" && args.size() >= 2 && TensorAt(args, 0) != nullptr &&
      TensorAt(args, 1) != nullptr && TensorAt(args, 0)->size() == 2) {
    // Rows gathered: indices read, one row read and written per index.
    const double rows = Elements(*TensorAt(args, 1));
    const double row_bytes = static_cast<double>((*TensorAt(args, 0))[1]) * ElementBytes(args[0].type);
    w.bytes = ArgBytes(args[1]) + 2 * rows * row_bytes;
    w.fp32_bytes = args[0].type == "float" ? 2 * rows * row_bytes : 0;
    w.flops = 0;
    w.formula = "embedding: indices read, one row read and written per index";
    return w;
  }
  if (base == "fill" || base == "zero" || base == "random" || base == "uniform" || base == "normal") {
    w.bytes = first, w.fp32_bytes = first_fp32;  // writes only
    w.formula = "fill: the tensor written once";
  } else if (base == "copy") {
    w.bytes = in, w.fp32_bytes = in_fp32;  // source read, destination written
    w.formula = "copy: source read, destination written";
  } else if (base == "cat" || base == "stack") {
    w.bytes = 2 * in, w.fp32_bytes = 2 * in_fp32;
    w.formula = "concatenation: inputs read and written once";
  } else if (IsReduction(base)) {
    w.bytes = in, w.fp32_bytes = in_fp32;
    w.formula = "reduction: inputs read once, small output";
  } else if (in_place || op.starts_with("_foreach_")) {
    w.bytes = in + first, w.fp32_bytes = in_fp32 + first_fp32;
    w.formula = "in place: inputs read once, the first written";
  } else {
    w.bytes = in + largest, w.fp32_bytes = in_fp32 + largest_fp32;
    w.formula = "element-wise: inputs read once, an output as large as the largest written";
  }
  const int32_t es = std::max(1, FirstElementBytes(args));
  w.flops = largest / es;
  return w;
}

// The bytes of argument i with non-parameter tensors x factor.
double ScaledArgBytes(const OpArg& a, std::string_view op, size_t i, double factor,
                      const IsParameterFn& is_parameter) {
  const int32_t es = ElementBytes(a.type);
  if (es == 0) return 0;
  double n = 0;
  for (const Shape& s : a.shapes) n += Elements(s) * (is_parameter(op, i, s) ? 1 : factor);
  return n * es;
}

OpArgs WithListTypes(const OpArgs& recorded, std::string_view list_type) {
  OpArgs out = recorded;
  std::string type(list_type);
  for (const OpArg& b : recorded) {
    if (!b.is_list && !b.shapes.empty() && MathOfType(b.type)) {
      type = b.type;
      break;
    }
  }
  for (OpArg& a : out) {
    if (a.is_list && ElementBytes(a.type) == 0) a.type = type;
  }
  return out;
}

}  // namespace

std::optional<Math> InputMath(const OpArgs& args) {
  for (const OpArg& a : args) {
    if (a.shapes.empty()) continue;
    if (std::optional<Math> m = MathOfType(a.type)) return m;
  }
  return std::nullopt;
}

OpWork ScaleWork(const OpWork& w, std::string_view name, const OpArgs& recorded, double factor,
                 const IsParameterFn& is_parameter, std::string_view list_type) {
  if (w.kind == WorkKind::kNone || factor == 1) return w;
  const OpArgs args = WithListTypes(recorded, list_type);
  double in = 0, in_scaled = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    in += ArgBytes(args[i]);
    in_scaled += ScaledArgBytes(args[i], name, i, factor, is_parameter);
  }
  OpWork s = w;
  if (w.kind == WorkKind::kMemory) {
    const double r = in > 0 ? in_scaled / in : factor;
    s.bytes *= r;
    s.fp32_bytes *= r;
    s.flops *= r;
    return s;
  }
  const bool out_param = !w.out_shape.empty() && is_parameter(name, args.size(), w.out_shape);
  const double out = w.out_bytes * (out_param ? 1 : factor);
  const double before = w.bytes;
  s.bytes = (w.bytes - w.out_bytes - w.out_fixed_bytes - in) + in_scaled + out + w.out_fixed_bytes;
  s.fp32_bytes = before > 0 ? w.fp32_bytes * s.bytes / before : 0;
  s.out_bytes = out;
  s.flops = w.flops * factor;
  return s;
}

std::string_view WorkKindName(WorkKind k) {
  switch (k) {
    case WorkKind::kNone: return "none";
    case WorkKind::kGemm: return "gemm";
    case WorkKind::kConv: return "conv";
    case WorkKind::kAttention: return "attention";
    case WorkKind::kMemory: return "memory";
  }
  return "none";
}

bool IsComputeOp(std::string_view name) {
  std::string_view op = name;
  if (!text::ConsumePrefix(&op, "aten::")) return false;
  for (std::string_view g : {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "mv", "addmv",
                             "_scaled_mm", "conv1d", "conv2d", "conv3d", "convolution", "_convolution",
                             "cudnn_convolution", "miopen_convolution", "cudnn_convolution_relu",
                             "cudnn_convolution_add_relu", "convolution_backward",
                             "cudnn_convolution_backward", "scaled_dot_product_attention",
                             "_scaled_dot_product_flash_attention",
                             "_scaled_dot_product_efficient_attention",
                             "_scaled_dot_product_cudnn_attention", "_flash_attention_forward",
                             "_efficient_attention_forward",
                             "_scaled_dot_product_flash_attention_backward",
                             "_scaled_dot_product_efficient_attention_backward",
                             "_scaled_dot_product_cudnn_attention_backward",
                             "_flash_attention_backward", "_efficient_attention_backward"}) {
    if (op == g) return true;
  }
  return false;
}

OpWork WorkOfOp(std::string_view name, const OpArgs& recorded, std::string_view list_type) {
  if (recorded.empty()) return None("no shapes recorded (record_shapes off)");
  // The profiler records no element type for a TensorList: that of the
  // op's other tensors, else the caller's (the trace's usual float type).
  const OpArgs* use = &recorded;
  OpArgs resolved;
  for (const OpArg& a : recorded) {
    if (!a.is_list || ElementBytes(a.type) > 0) continue;
    std::string type(list_type);
    for (const OpArg& b : recorded) {
      if (!b.is_list && !b.shapes.empty() && MathOfType(b.type)) {
        type = b.type;
        break;
      }
    }
    resolved = recorded;
    for (OpArg& r : resolved) {
      if (r.is_list && ElementBytes(r.type) == 0) r.type = type;
    }
    use = &resolved;
    break;
  }
  const OpArgs& args = *use;
  bool any_shape = false;
  for (const OpArg& a : args) any_shape |= !a.shapes.empty();
  if (!any_shape) return None("no tensor shapes recorded");
  std::string_view op = name;
  text::ConsumePrefix(&op, "aten::");
  const Shape* a0 = TensorAt(args, 0);
  const Shape* a1 = TensorAt(args, 1);
  const Shape* a2 = TensorAt(args, 2);
  if (op == "mm" || op == "matmul" || op == "bmm" || op == "mv" || op == "_scaled_mm") {
    if (a0 == nullptr || a1 == nullptr) return None(absl::StrCat(Sv(name), " without operand shapes"));
    return Matmul(*a0, *a1, args, 0, op);
  }
  if (op == "addmm" || op == "baddbmm" || op == "addmv") {
    if (a1 == nullptr || a2 == nullptr) return None(absl::StrCat(Sv(name), " without operand shapes"));
    return Matmul(*a1, *a2, args, 1, op);
  }
  if (op == "linear") return Linear(args);
  if (op == "convolution_backward" || op == "cudnn_convolution_backward") {
    // convolution_backward(grad_out, input, weight, ..., output_mask at 10);
    // cudnn_convolution_backward(input, grad_out, weight, ..., output_mask at 10).
    const bool native = op == "convolution_backward";
    const Shape* go = native ? a0 : a1;
    const Shape* x = native ? a1 : a0;
    if (go == nullptr || x == nullptr || a2 == nullptr) return None("convolution backward without shapes");
    double passes = 2;
    std::string_view mask = args.size() > 10 ? std::string_view(args[10].concrete) : "";
    if (text::ConsumePrefix(&mask, "[")) {
      passes = 0;
      std::vector<absl::string_view> flags = absl::StrSplit(Sv(mask), ',');
      for (size_t i = 0; i < flags.size() && i < 2; ++i) {
        if (absl::StrContains(flags[i], "True") || absl::StrContains(flags[i], "true")) passes += 1;
      }
    }
    ConvArgs at = native ? ConvArgs{4, 5, 6, 9, 7} : ConvArgs{4, 3, 5, 6, 0};
    return Conv(name, args, *x, *a2, go, at, passes, op);
  }
  if (text::Contains(op, "conv") && IsComputeOp(name)) {
    if (a0 == nullptr || a1 == nullptr) return None("convolution without shapes");
    return Conv(name, args, *a0, *a1, nullptr, ConvLayout(name), 1, op);
  }
  if (op == "scaled_dot_product_attention") return Attention(args, 0, true, ConcreteBool(args, 5), 1, op);
  if (op == "_scaled_dot_product_flash_attention") {
    return Attention(args, 0, true, ConcreteBool(args, 4), 1, op);
  }
  if (op == "_scaled_dot_product_efficient_attention" || op == "_scaled_dot_product_cudnn_attention") {
    return Attention(args, 0, true, ConcreteBool(args, 6), 1, op);
  }
  if (op == "_flash_attention_forward") return Attention(args, 0, false, ConcreteBool(args, 8), 1, op);
  if (op == "_efficient_attention_forward") return Attention(args, 0, false, std::nullopt, 1, op);
  if (op == "_scaled_dot_product_flash_attention_backward" ||
      op == "_scaled_dot_product_efficient_attention_backward" ||
      op == "_scaled_dot_product_cudnn_attention_backward") {
    return Attention(args, 1, true, std::nullopt, 2.5, op);
  }
  if (op == "_flash_attention_backward" || op == "_efficient_attention_backward") {
    return Attention(args, 1, false, std::nullopt, 2.5, op);
  }
  return Memory(name, args);
}

}  // namespace reverie::hardware
