#include "whatif/candidates.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "base/text.h"
#include "hardware/gpu_spec.h"
#include "transforms/cost_model.h"

namespace reverie::whatif {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

// One row of the table: the settings to try on this trace (several rows
// for a script with several settings), or why none.
struct Row {
  std::string script;
  std::function<std::vector<Settings>(const LoadedTrace&)> settings;
  // Why the trace rules the script out before it runs; "" when it does not.
  std::function<std::string(const LoadedTrace&)> skip;
};

std::string Never(const LoadedTrace&) { return ""; }

std::vector<Settings> Defaults(const LoadedTrace&) { return {{}}; }

const std::vector<Row>& Table() {
  static const auto* rows = new std::vector<Row>{
      // The DataLoader's workers: the script refuses a trace that already
      // uses them or records no loading.
      {"dataloader.lua",
       [](const LoadedTrace&) {
         return std::vector<Settings>{{{"num_workers", "2"}}, {{"num_workers", "4"}},
                                      {{"num_workers", "8"}}};
       },
       Never},
      // Pinned, non-blocking copies (a DataLoader's pin_memory=True too).
      {"async_copy.lua",
       [](const LoadedTrace&) {
         return std::vector<Settings>{{{"pin_memory", "true"}}};
       },
       Never},
      // Twice the batch: ranked by throughput, since each step does more.
      {"batch_size.lua",
       [](const LoadedTrace&) {
         return std::vector<Settings>{{{"factor", "2"}}};
       },
       Never},
      // bf16 where the GPU has it (no GradScaler), else fp16.
      {"amp.lua",
       [](const LoadedTrace& b) {
         return std::vector<Settings>{{{"dtype", HasBf16(b) ? "bf16" : "fp16"}}};
       },
       Never},
      {"fused_adam.lua", Defaults, Never},
      {"pointwise_fusion.lua", Defaults, Never},
      // CUDA graphs and a faster network: the scripts themselves say when
      // there is nothing to capture or no communication to speed up. No
      // guess from the diagnosis rules them out: on the kineto ResNet-50
      // sample the GPU holds most of the critical path, yet CUDA graphs
      // predict the second largest gain (the CPU is busy 97% of the step).
      {"cuda_graphs.lua", Defaults, Never},
      {"faster_network.lua",
       [](const LoadedTrace&) {
         return std::vector<Settings>{{{"speedup", "2"}}};
       },
       Never},
      // The next generation of the trace's own GPU (hardware/gpu_table.cc).
      // Last, as combinations run in this order: the program's changes, then
      // the hardware (either order gives the same times since retimes start
      // from the GPU the kernels stand for, graph:set_gpu; this one reads as
      // a user would try it).
      {"retarget_gpu.lua",
       [](const LoadedTrace& b) {
         return std::vector<Settings>{{{"to", NextGenerationGpu(*TraceGpuKey(b))}}};
       },
       [](const LoadedTrace& b) -> std::string {
         absl::StatusOr<std::string> key = TraceGpuKey(b);
         if (!key.ok()) return FirstLine(StdSv(key.status().message()));
         if (NextGenerationGpu(*key).empty()) {
           return absl::StrCat("no newer GPU than ", *key, " in reverie's GPU table");
         }
         return "";
       }},
  };
  return *rows;
}

}  // namespace

std::vector<CandidatePlan> PlanCandidates(const LoadedTrace& base) {
  std::vector<CandidatePlan> out;
  const std::vector<Row>& rows = Table();
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string skip = rows[i].skip(base);
    if (!skip.empty()) {
      out.push_back({rows[i].script, {}, skip, static_cast<int>(i)});
      continue;
    }
    for (Settings& s : rows[i].settings(base)) {
      out.push_back({rows[i].script, std::move(s), "", static_cast<int>(i)});
    }
  }
  return out;
}

bool IsCandidateScript(const std::string& script) {
  for (const Row& r : Table()) {
    if (r.script == script) return true;
  }
  return false;
}

std::string WhyNotTried(const std::string& script) {
  if (script == "identity.lua") return "changes nothing (the noise floor of two runs)";
  if (script == "gist.lua" || script == "vdnn.lua" || script == "activation_checkpointing.lua") {
    return "saves GPU memory at the cost of step time";
  }
  if (script == "ddp.lua") {
    return "more workers is a scale-out question: reverie predict --script ddp --set workers=N";
  }
  if (script == "p3.lua" || script == "blueconnect.lua" || script == "dgc.lua") {
    return "a communication scheme with no PyTorch switch: reverie predict --script " + script;
  }
  if (script == "metaflow.lua" || script == "reconstruct_batchnorm.lua") {
    return "a research rewrite of the model with no PyTorch switch: reverie predict --script " +
           script;
  }
  return "not in advise's table of settings to try: reverie predict --script " + script;
}

std::string NextGenerationGpu(std::string_view key) {
  // The part a user of `key` would move to: the same form factor and
  // vendor, one generation on (retarget_gpu.lua refuses crossing vendors).
  static constexpr std::pair<std::string_view, std::string_view> kNext[] = {
      {"P100-SXM2", "V100-SXM2"},     {"GP100", "V100-SXM2"},         {"V100-PCIe", "A100-PCIe-80GB"},
      {"V100-SXM2", "A100-SXM4-80GB"}, {"T4", "L4"},                   {"RTX2080Ti", "RTX3090"},
      {"A100-PCIe-40GB", "H100-PCIe"}, {"A100-PCIe-80GB", "H100-PCIe"}, {"A100-SXM4-40GB", "H100-SXM"},
      {"A100-SXM4-80GB", "H100-SXM"},  {"A10", "L40S"},                {"RTX3080", "RTX4080"},
      {"RTX3090", "RTX4090"},          {"H100-PCIe", "H200"},          {"H100-NVL", "H200"},
      {"H100-SXM", "B200"},            {"H200", "B200"},               {"MI250X", "MI300X"},
      {"MI250", "MI300X"},             {"MI300X", "MI325X"},
  };
  for (const auto& [from, to] : kNext) {
    if (from == key) return std::string(to);
  }
  return "";
}

absl::StatusOr<std::string> TraceGpuKey(const LoadedTrace& base) {
  REVERIE_ASSIGN_OR_RETURN(transforms::TraceGpu gpu, transforms::ResolveTraceGpu(base.graph, base.model.devices));
  return std::string(gpu.spec.key);
}

bool HasBf16(const LoadedTrace& base) {
  absl::StatusOr<transforms::TraceGpu> gpu =
      transforms::ResolveTraceGpu(base.graph, base.model.devices);
  return gpu.ok() &&
         gpu->spec.matrix_tflops[static_cast<int>(hardware::Math::kBf16)] > 0;
}

}  // namespace reverie::whatif
