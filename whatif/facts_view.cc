#include "whatif/facts_view.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/sv.h"

namespace reverie::whatif {
namespace {

using depgraph::FactSourceName;
using depgraph::Origin;

std::string From(const Origin& o) {
  if (o.source == depgraph::FactSource::kAbsent) return "";
  return absl::StrCat(" [", Sv(FactSourceName(o.source)), ": ", o.how, "]");
}

std::string Used(const depgraph::UsedFact& u, const std::string& detail) {
  return u.used ? absl::StrCat("yes", detail, From(u.origin)) : "no";
}

void WriteOrigin(JsonWriter& w, const Origin& o) {
  w.Field("source", FactSourceName(o.source));
  w.Field("how", o.how);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> FactLines(const depgraph::TraceFacts& f) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("gpu", f.gpu.name.empty()
                              ? "unknown"
                              : absl::StrCat(f.gpu.name, " (", f.gpu.vendor, "), ",
                                             f.gpu.devices_used, " used", From(f.gpu.origin)));
  const depgraph::PrecisionFact& p = f.precision;
  out.emplace_back("precision",
                   p.compute == "unknown"
                       ? "unknown (no GEMM/conv/attention kernel names a number type)"
                       : absl::StrFormat("%s (%.0f%% of GEMM/conv/attention time)%s", p.compute,
                                         p.share * 100, From(p.origin)));
  const depgraph::OptimizerFact& o = f.optimizer;
  out.emplace_back(
      "optimizer",
      o.name.empty() && o.implementation == "unknown"
          ? "unknown (no Optimizer.step# annotation or optimizer kernel)"
          : absl::StrFormat("%s, %s: step %.1f us, %.0f GPU tasks (%.1f us) per step; zero_grad "
                            "%.1f us, %.0f kernels per step%s",
                            o.name.empty() ? "?" : o.name, o.implementation, o.step_us,
                            o.step_kernels, o.step_gpu_us, o.zero_grad_us, o.zero_grad_kernels,
                            From(o.origin)));
  const depgraph::DataParallelFact& d = f.data_parallel;
  out.emplace_back(
      "data parallel",
      !d.used ? "no"
              : absl::StrFormat("%s, %d rank%s: %.1f collectives (%.1f MB all-reduced) and %.1f "
                                "communication kernels (%.1f us) per step, %d buckets%s%s%s",
                                d.backend.empty() ? "?" : d.backend, d.world_size,
                                d.world_size == 1 ? "" : "s", d.collectives_per_step,
                                d.allreduce_bytes_per_step / 1e6, d.comm_kernels_per_step,
                                d.comm_kernel_us_per_step, d.buckets,
                                d.generic_kernels ? "; generic kernels typed by the records" : "",
                                !d.inference ? ""
                                             : "; no backward pass: the collectives are a model-"
                                               "parallel job's (tensor, pipeline), not gradient "
                                               "syncs",
                                From(d.origin)));
  out.emplace_back("activation checkpointing", Used(f.checkpointing, ""));
  out.emplace_back("CUDA graphs",
                   Used(f.cuda_graphs, absl::StrFormat(": %.1f graph launches per step",
                                                       f.cuda_graphs.count)));
  out.emplace_back("torch.compile / Triton",
                   Used(f.compiled, f.compiled.count > 0
                                        ? absl::StrFormat(": %.1f Triton kernels per step",
                                                          f.compiled.count)
                                        : ""));
  out.emplace_back("DataLoader",
                   f.dataloader.mode == "unknown"
                       ? "unknown (no enumerate(DataLoader)# annotation)"
                       : absl::StrFormat("%s: %.1f us of main-thread loading per step%s",
                                         f.dataloader.mode == "main thread"
                                             ? "main thread (num_workers=0)"
                                             : f.dataloader.mode,
                                         f.dataloader.loading_us_per_step,
                                         From(f.dataloader.origin)));
  const depgraph::CopiesFact& c = f.copies;
  out.emplace_back("host copies",
                   absl::StrCat("pageable ", c.pageable, ", pinned ", c.pinned, ", device ",
                                c.device, ", other ", c.other, From(c.origin)));
  return out;
}

void WriteFactsJson(JsonWriter& w, const depgraph::TraceFacts& f) {
  w.BeginObject();
  w.Field("counted_steps", f.counted_steps);
  w.Key("gpu").BeginObject().Field("name", f.gpu.name).Field("vendor", f.gpu.vendor);
  w.Field("devices_used", f.gpu.devices_used);
  WriteOrigin(w, f.gpu.origin);
  w.EndObject();
  w.Key("precision").BeginObject().Field("compute", f.precision.compute);
  w.Field("share", f.precision.share);
  w.Key("by_type_us").BeginObject();
  for (const auto& [type, ns] : f.precision.by_type_ns) w.Field(type, ns / 1e3);
  w.EndObject();
  WriteOrigin(w, f.precision.origin);
  w.EndObject();
  const depgraph::OptimizerFact& o = f.optimizer;
  w.Key("optimizer").BeginObject().Field("name", o.name).Field("implementation", o.implementation);
  w.Field("step_us", o.step_us).Field("step_kernels", o.step_kernels);
  w.Field("step_gpu_us", o.step_gpu_us).Field("zero_grad_us", o.zero_grad_us);
  w.Field("zero_grad_kernels", o.zero_grad_kernels);
  WriteOrigin(w, o.origin);
  w.EndObject();
  const depgraph::DataParallelFact& d = f.data_parallel;
  w.Key("data_parallel").BeginObject().Field("used", d.used).Field("backend", d.backend);
  w.Field("world_size", d.world_size).Field("collectives_per_step", d.collectives_per_step);
  w.Field("allreduce_bytes_per_step", d.allreduce_bytes_per_step);
  w.Field("comm_kernels_per_step", d.comm_kernels_per_step);
  w.Field("comm_kernel_us_per_step", d.comm_kernel_us_per_step);
  w.Field("generic_kernels", d.generic_kernels).Field("buckets", d.buckets);
  w.Field("inference", d.inference);
  WriteOrigin(w, d.origin);
  w.EndObject();
  auto used = [&](const char* key, const depgraph::UsedFact& u) {
    w.Key(key).BeginObject().Field("used", u.used).Field("count", u.count);
    WriteOrigin(w, u.origin);
    w.EndObject();
  };
  used("activation_checkpointing", f.checkpointing);
  used("cuda_graphs", f.cuda_graphs);
  used("compiled", f.compiled);
  w.Key("dataloader").BeginObject().Field("mode", f.dataloader.mode);
  w.Field("loading_us_per_step", f.dataloader.loading_us_per_step);
  WriteOrigin(w, f.dataloader.origin);
  w.EndObject();
  w.Key("copies").BeginObject().Field("pageable", f.copies.pageable).Field("pinned", f.copies.pinned);
  w.Field("device", f.copies.device).Field("other", f.copies.other);
  WriteOrigin(w, f.copies.origin);
  w.EndObject();
  w.EndObject();
}

}  // namespace reverie::whatif
