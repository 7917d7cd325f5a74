// File: depgraph/facts.cc
//
// DetectFacts(): one pass over the graph's GPU tasks (classes, number types,
// the optimizer-step flag, copies), one over the trace's ranges
// (annotations: the optimizer, zero_grad, the DataLoader, checkpointing,
// compiled regions) and API calls (graph launches), and the header and
// records for data parallelism.
#include "depgraph/facts.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/intervals.h"
#include "depgraph/kernel_class.h"
#include "hardware/math_type.h"
#include "hardware/op_work.h"

namespace reverie::depgraph {
namespace {

std::string Lower(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}
bool Has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}
// Case-insensitive (kernel names mix cases); `needle` is lower case.
bool Contains(std::string_view s, std::string_view needle) { return Has(Lower(s), needle); }
// A multi-tensor kernel whose functor is a whole optimizer update (apex's
// and DeepSpeed's FusedAdam: "multi_tensor_apply_kernel<TensorListMetadata<4>,
// AdamFunctor<float>, ...>"; apex's SGDFunctor, LAMB and NovoGrad stages) is
// a fused optimizer; torch's foreach ops run one arithmetic functor per
// kernel (BinaryOpListAlphaFunctor, PointwiseOpScalarFunctor, ...).
// `lower`: the kernel's name in lower case, a multi_tensor_apply kernel.
bool FusedUpdateFunctor(std::string_view lower) {
  for (const char* f : {"adamfunctor", "sgdfunctor", "lamb", "novograd", "adagradfunctor"}) {
    if (Has(lower, f)) return true;
  }
  return false;
}

// The spans of the counted steps (measured), to place ranges and calls.
struct CountedSteps {
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<bool> counted;  // by graph step index
  int n = 1;
  // The spans' union: Holds is one binary search, not a pass over the
  // steps for every range (a trace may hold thousands).
  std::vector<Interval> merged;
  bool Holds(int64_t t) const {
    if (spans.empty()) return true;  // a trace without steps: all of it
    return Covers(merged, t);
  }
  bool Counted(int32_t step) const {
    if (counted.empty()) return true;
    return step >= 0 && static_cast<size_t>(step) < counted.size() && counted[step];
  }
};

CountedSteps StepsOf(const Graph& g) {
  CountedSteps c;
  int n = 0;
  for (size_t i = 0; i < g.step_count(); ++i) {
    const Step& it = g.step_info(static_cast<int32_t>(i));
    c.counted.push_back(it.counted);
    if (!it.counted) continue;
    ++n;
    c.spans.emplace_back(it.measured_start_ns, it.measured_end_ns);
  }
  c.n = std::max(1, n);
  c.merged = MergeIntervals(c.spans);
  return c;
}

void DetectGpu(const Trace& trace, const Graph& g, GpuFact* f) {
  std::map<int32_t, int> used;
  for (uint32_t r = 0; r < g.resource_count(); ++r) {
    const Resource& res = g.resource(ResourceId(r));
    if (res.kind == ResourceKind::kGpuStream && g.first_on_resource(ResourceId(r)).valid()) {
      ++used[res.device];
    }
  }
  f->devices_used = static_cast<int32_t>(used.size());
  for (const proto::Device& d : trace.header().devices()) {
    if (!used.empty() && !used.count(d.id())) continue;
    f->name = d.name();
    f->vendor = d.vendor();
    f->origin = {FactSource::kRecorded, "the trace's device properties"};
    return;
  }
}

// The element type of the op that launched GPU task `t`: the nearest op
// around its launch call whose inputs record a floating-point tensor.
std::optional<hardware::Math> LaunchingOpMath(const Graph& g, TaskId t) {
  const EdgeId e = g.launch_edge_in(t);
  if (!e.valid()) return std::nullopt;
  for (OpId o = g.op_of(g.edge(e).src); o.valid(); o = g.op(o).parent) {
    if (const hardware::OpArgs* in = g.op_inputs(o)) {
      if (std::optional<hardware::Math> m = hardware::InputMath(*in)) return m;
    }
  }
  return std::nullopt;
}

void DetectPrecision(const Graph& g, const CountedSteps& steps, PrecisionFact* f) {
  std::map<std::string, int64_t> compute, pointwise;
  int64_t by_op_ns = 0;  // compute time whose type the launching op recorded
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kKernel || !steps.Counted(g.step_of(t))) continue;
    const KernelClass c = TaskClass(g, t);
    const bool heavy = c == KernelClass::kGemm || c == KernelClass::kConv || c == KernelClass::kAttention;
    const bool light = c == KernelClass::kElementwise || c == KernelClass::kActivation ||
                       c == KernelClass::kNormalization;
    if (!heavy && !light) continue;
    const std::optional<hardware::Math> op = heavy ? LaunchingOpMath(g, t) : std::nullopt;
    // The name's reading is kept per interned name: a step launches the
    // same few kernels many times.
    const std::optional<hardware::Math> math = hardware::MathOfKernel(KernelNameMath(g, t), op);
    if (op) by_op_ns += g.duration_ns(t);
    const std::string type(math ? hardware::MathName(*math) : std::string_view("unknown"));
    (heavy ? compute : pointwise)[type] += g.duration_ns(t);
  }
  int64_t total = 0;
  for (const auto& [type, ns] : compute) {
    total += ns;
    f->by_type_ns.emplace_back(type, ns);
  }
  f->compute = "unknown";
  const auto best_known = [](const std::map<std::string, int64_t>& m, int64_t* ns) {
    std::string best;
    *ns = 0;
    for (const auto& [type, v] : m) {
      if (type != "unknown" && v > *ns) best = type, *ns = v;
    }
    return best;
  };
  int64_t known_ns = 0, pw_ns = 0;
  const std::string known = best_known(compute, &known_ns);
  const int64_t unknown_ns = compute.count("unknown") ? compute.at("unknown") : 0;
  // GEMM names without a type (cuBLASLt's nvjet, Triton, CK's mangled
  // templates) ran what the ATen kernels around them ran (autocast).
  const std::string pw = best_known(pointwise, &pw_ns);
  if (total == 0) return;
  auto share = [&](int64_t ns) { return static_cast<double>(ns) / static_cast<double>(total); };
  if (!known.empty() && known == pw && unknown_ns > 0) {
    f->compute = known;
    f->share = share(known_ns + unknown_ns);
    f->origin = {FactSource::kInferred,
                 "the compute kernels' names, and the pointwise kernels' element type for the " +
                     std::to_string(static_cast<int>(share(unknown_ns) * 100 + 0.5)) +
                     "% whose names say nothing"};
  } else if (!known.empty() && known_ns >= unknown_ns) {
    f->compute = known;
    f->share = share(known_ns);
    f->origin =
        2 * by_op_ns >= total
            ? Origin{FactSource::kRecorded, "the launching ops' input types (tf32 from the names)"}
            : Origin{FactSource::kInferred, "the compute kernels' names"};
  } else if (!pw.empty()) {
    f->compute = pw;
    f->share = share((known == pw ? known_ns : 0) + unknown_ns);
    f->origin = {FactSource::kInferred,
                 "the element type of the pointwise kernels (the compute kernels' names do not say)"};
  }
}

// Kernels and spans of the optimizer's step and of zero_grad.
void DetectOptimizer(const Trace& trace, const Graph& g, const CountedSteps& steps,
                     OptimizerFact* f) {
  const proto::TraceChunk& ev = trace.events();
  int64_t step_ns = 0, zero_ns = 0;
  std::vector<std::string_view> classes;
  std::vector<std::pair<int64_t, int64_t>> zero_spans;
  for (const proto::Range& r : ev.ranges()) {
    const std::string_view name = trace.String(r.name_sid());
    if (!steps.Holds(r.start_ns())) continue;
    if (name.starts_with("Optimizer.step#")) {
      // "Optimizer.step#SGD.step" -> SGD. A model may step two optimizers
      // in turn (HTA's recsys trace: Shampoo, then an EMA of the weights):
      // both are named, in the order they first ran.
      std::string_view cls = name.substr(15);
      cls = cls.substr(0, cls.find('.'));
      if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
      step_ns += r.end_ns() - r.start_ns();
      f->origin = {FactSource::kRecorded, "the Optimizer.step# annotations"};
    } else if (name.starts_with("Optimizer.zero_grad#")) {
      zero_ns += r.end_ns() - r.start_ns();
      zero_spans.emplace_back(r.start_ns(), r.end_ns());
    }
  }
  for (std::string_view c : classes) {
    if (!f->name.empty()) f->name += " + ";
    f->name += c;
  }
  // apex's and DeepSpeed's fused optimizers say so in their class name
  // (FusedAdam, FusedLAMB, FusedSGD), whatever their kernels are called.
  bool fused = std::any_of(classes.begin(), classes.end(),
                           [](std::string_view c) { return c.starts_with("Fused"); });
  bool foreach_kernels = false;
  int64_t kernels = 0, gpu_ns = 0, zero_kernels = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || !IsGpuKind(g.kind(t)) || !steps.Counted(g.step_of(t))) continue;
    const bool by_name = NameClass(g, t) == KernelClass::kOptimizer;  // cached per name
    if (g.in_optimizer_step(t) || by_name) {
      ++kernels;
      gpu_ns += g.duration_ns(t);
      const std::string name = Lower(g.name(t));  // once: every test below is on it
      const bool multi_tensor = Has(name, "multi_tensor_apply");
      fused |= by_name && (Has(name, "fused") || Has(name, "multi_tensor_adam") ||
                           Has(name, "multi_tensor_sgd") || Has(name, "multi_tensor_lamb") ||
                           (multi_tensor && FusedUpdateFunctor(name)));
      foreach_kernels |= multi_tensor;
      if (f->name.empty() && by_name) {
        for (const char* o : {"adamw", "adam", "sgd", "lamb", "adagrad", "rmsprop"}) {
          if (Has(name, o)) {
            f->name = o == std::string_view("adamw") ? "AdamW"
                      : o == std::string_view("adam") ? "Adam"
                      : o == std::string_view("sgd")  ? "SGD"
                                                      : std::string(o);
            f->origin = {FactSource::kInferred, "optimizer kernels' names"};
            break;
          }
        }
      }
    }
  }
  // zero_grad's kernels: the GPU tasks whose launch lies in its spans. A
  // call lies in one when a span starting at or before it ends at or after
  // it: the spans by start, with the latest end so far.
  std::sort(zero_spans.begin(), zero_spans.end());
  std::vector<int64_t> latest_end(zero_spans.size());
  for (size_t i = 0; i < zero_spans.size(); ++i) {
    latest_end[i] = std::max(zero_spans[i].second,
                             i > 0 ? latest_end[i - 1] : std::numeric_limits<int64_t>::min());
  }
  for (const proto::ApiCall& a : ev.api_calls()) {
    const auto it = std::upper_bound(zero_spans.begin(), zero_spans.end(), a.start_ns(),
                                     [](int64_t x, const auto& span) { return x < span.first; });
    const size_t before = static_cast<size_t>(it - zero_spans.begin());
    if (before > 0 && latest_end[before - 1] >= a.end_ns() &&
        Contains(trace.String(a.name_sid()), "launch")) {
      ++zero_kernels;
    }
  }
  f->implementation = fused ? "fused" : foreach_kernels ? "foreach" : kernels > 0 ? "for-loop" : "unknown";
  const double n = steps.n;
  f->step_us = static_cast<double>(step_ns) / 1e3 / n;
  f->step_kernels = static_cast<double>(kernels) / n;
  f->step_gpu_us = static_cast<double>(gpu_ns) / 1e3 / n;
  f->zero_grad_us = static_cast<double>(zero_ns) / 1e3 / n;
  f->zero_grad_kernels = static_cast<double>(zero_kernels) / n;
}

void DetectDataParallel(const Trace& trace, const Graph& g, const CountedSteps& steps,
                        DataParallelFact* f) {
  const proto::TraceHeader& h = trace.header();
  if (h.has_distributed()) {
    f->backend = h.distributed().backend();
    f->world_size = h.distributed().world_size();
    f->origin = {FactSource::kRecorded, "the trace's distributedInfo"};
  }
  int64_t colls = 0, bytes = 0, allreduces = 0;
  for (const proto::Collective& c : trace.events().collectives()) {
    if (!steps.Holds(c.start_ns())) continue;
    ++colls;
    f->world_size = std::max(f->world_size, c.group_size());
    if (CollectiveOfName(trace.String(c.name_sid())) == Collective::kAllReduce && c.bytes() > 0) {
      bytes += c.bytes();
      ++allreduces;
    }
  }
  int64_t kernels = 0, kernel_ns = 0;
  bool forward = false, backward = false;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || g.kind(t) != TaskKind::kKernel || !steps.Counted(g.step_of(t))) continue;
    forward |= g.phase(t) == Phase::kForward;
    backward |= g.phase(t) == Phase::kBackward;
    if (TaskClass(g, t) != KernelClass::kCommunication) continue;
    ++kernels;
    kernel_ns += g.duration_ns(t);
    f->generic_kernels |= CollectiveOfName(g.name(t)) == Collective::kOther;
    if (f->backend.empty()) f->backend = Contains(g.name(t), "rccl") ? "rccl" : "nccl";
  }
  f->inference = forward && !backward;
  const double n = steps.n;
  f->collectives_per_step = static_cast<double>(colls) / n;
  f->allreduce_bytes_per_step = static_cast<double>(bytes) / n;
  f->comm_kernels_per_step = static_cast<double>(kernels) / n;
  f->comm_kernel_us_per_step = static_cast<double>(kernel_ns) / 1e3 / n;
  f->buckets = trace.events().gradient_buckets_size() > 0
                   ? trace.events().gradient_buckets_size()
                   : static_cast<int32_t>(static_cast<double>(allreduces) / n + 0.5);
  f->used = f->world_size > 1 || kernels > 0 || colls > 0;
  if (f->used && f->origin.source == FactSource::kAbsent) {
    f->origin = colls > 0 ? Origin{FactSource::kRecorded, "the trace's Collective records"}
                          : Origin{FactSource::kInferred, "NCCL/RCCL kernels"};
  }
}

void DetectFromRanges(const Trace& trace, const Graph& g, const CountedSteps& steps,
                      TraceFacts* f) {
  for (size_t l = 0; l < g.layer_count(); ++l) {
    if (Has(g.layer(LayerId(static_cast<uint32_t>(l))).path, "CheckpointWrapper")) {
      f->checkpointing = {true, 0, {FactSource::kRecorded, "CheckpointWrapper layers"}};
      break;
    }
  }
  bool main_thread = false, workers = false;
  for (const proto::Range& r : trace.events().ranges()) {
    const std::string_view name = trace.String(r.name_sid());
    if (name.starts_with("enumerate(DataLoader)")) {
      main_thread |= Has(name, "SingleProcess");
      workers |= Has(name, "MultiProcessing");
    }
    if (!f->checkpointing.used && (Has(name, "CheckpointFunction") ||
                                   Has(name, "torch.utils.checkpoint"))) {
      f->checkpointing = {true, 0, {FactSource::kRecorded, "checkpoint annotations"}};
    }
    if (Has(name, "Torch-Compiled Region") || Has(name, "CompiledFunction")) {
      f->compiled.used = true;
      f->compiled.origin = {FactSource::kRecorded, "torch.compile annotations"};
    }
  }
  f->dataloader.mode = main_thread ? "main thread" : workers ? "worker processes" : "unknown";
  if (main_thread || workers) {
    f->dataloader.origin = {FactSource::kRecorded, "the enumerate(DataLoader)# annotations"};
  }
  int64_t loading = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (!g.removed(t) && IsCpuKind(g.kind(t)) && g.phase(t) == Phase::kDataLoading &&
        steps.Counted(g.step_of(t))) {
      loading += g.duration_ns(t) + g.gap_ns(t);
    }
  }
  f->dataloader.loading_us_per_step = static_cast<double>(loading) / 1e3 / steps.n;
  int64_t graph_launches = 0;
  for (const proto::ApiCall& a : trace.events().api_calls()) {
    const std::string_view name = trace.String(a.name_sid());
    if ((name == "cudaGraphLaunch" || name == "hipGraphLaunch") && steps.Holds(a.start_ns())) {
      ++graph_launches;
    }
  }
  if (graph_launches > 0) {
    f->cuda_graphs = {true, static_cast<double>(graph_launches) / steps.n,
                      {FactSource::kRecorded, "cudaGraphLaunch calls"}};
  }
}

void DetectKernelsAndCopies(const Graph& g, const CountedSteps& steps, TraceFacts* f) {
  int64_t triton = 0;
  for (uint32_t i = 0; i < g.task_count(); ++i) {
    const TaskId t(i);
    if (g.removed(t) || !steps.Counted(g.step_of(t))) continue;
    const std::string_view name = g.name(t);
    if (g.kind(t) == TaskKind::kKernel && name.starts_with("triton")) ++triton;
    if (g.kind(t) != TaskKind::kMemcpy) continue;
    CopiesFact& c = f->copies;
    if (Has(name, "Pageable")) {
      ++c.pageable;
    } else if (Has(name, "Pinned")) {
      ++c.pinned;
    } else if (Has(name, "DtoD") || Has(name, "PtoP")) {
      ++c.device;
    } else {
      ++c.other;
    }
    c.origin = {FactSource::kRecorded, "the copies' names (Kineto: Pageable / Pinned)"};
  }
  if (triton > 0) {
    f->compiled.used = true;
    f->compiled.count = static_cast<double>(triton) / steps.n;
    if (f->compiled.origin.source == FactSource::kAbsent) {
      f->compiled.origin = {FactSource::kInferred, "Triton kernel names"};
    }
  }
}

}  // namespace

std::string_view FactSourceName(FactSource s) {
  switch (s) {
    case FactSource::kAbsent: return "absent";
    case FactSource::kRecorded: return "recorded";
    case FactSource::kInferred: return "inferred";
  }
  return "absent";
}

TraceFacts DetectFacts(const Trace& trace, const Graph& graph) {
  TraceFacts f;
  const CountedSteps steps = StepsOf(graph);
  f.counted_steps = steps.spans.empty() ? 1 : steps.n;
  DetectGpu(trace, graph, &f.gpu);
  DetectPrecision(graph, steps, &f.precision);
  DetectOptimizer(trace, graph, steps, &f.optimizer);
  DetectDataParallel(trace, graph, steps, &f.data_parallel);
  DetectFromRanges(trace, graph, steps, &f);
  DetectKernelsAndCopies(graph, steps, &f);
  return f;
}

}  // namespace reverie::depgraph
