#include "whatif/candidates.h"

#include <cctype>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace reverie::whatif {
namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

// One row of the table: the settings to try on this trace (several rows
// for a script with several settings), or why none.
struct Row {
  std::string script;
  std::function<std::vector<Settings>(const LoadedTrace&)> settings;
  // Why the trace rules the script out before it runs; "" when it does not.
  std::function<std::string(const LoadedTrace&, const Diagnosis&)> skip;
};

std::string Never(const LoadedTrace&, const Diagnosis&) { return ""; }

std::vector<Settings> Defaults(const LoadedTrace&) { return {{}}; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string GpuName(const LoadedTrace& base) { return base.model.facts.gpu.name; }

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
       [](const LoadedTrace&) { return std::vector<Settings>{{{"pin_memory", "true"}}}; }, Never},
      // Twice the batch: ranked by throughput, since each step does more.
      {"batch_size.lua",
       [](const LoadedTrace&) { return std::vector<Settings>{{{"factor", "2"}}}; }, Never},
      {"retarget_gpu.lua",
       [](const LoadedTrace& b) {
         return std::vector<Settings>{{{"to", NextGenerationGpu(GpuName(b))}}};
       },
       [](const LoadedTrace& b, const Diagnosis&) -> std::string {
         if (GpuName(b).empty()) return "the trace does not name its GPU";
         if (NextGenerationGpu(GpuName(b)).empty()) {
           return absl::StrCat("no next generation of ", GpuName(b), " in lib/gpus.lua");
         }
         return "";
       }},
      // bf16 where the GPU has it (no GradScaler), else fp16.
      {"amp.lua",
       [](const LoadedTrace& b) {
         return std::vector<Settings>{{{"dtype", HasBf16(b) ? "bf16" : "fp16"}}};
       },
       Never},
      {"fused_adam.lua", Defaults, Never},
      {"pointwise_fusion.lua", Defaults, Never},
      // CUDA graphs remove CPU cost only: worth trying where the CPU, not
      // the GPU, holds the step.
      {"cuda_graphs.lua", Defaults,
       [](const LoadedTrace&, const Diagnosis& d) -> std::string {
         if (d.Share(kCpu) >= d.Share(kGpu) && d.Share(kCpu) > 0) return "";
         return absl::StrFormat(
             "the GPU, not the CPU, bounds the step (GPU %.0f%%, CPU %.0f%% of the critical "
             "path): CUDA graphs remove CPU launch cost only",
             d.Share(kGpu) * 100, d.Share(kCpu) * 100);
       }},
      {"faster_network.lua",
       [](const LoadedTrace&) { return std::vector<Settings>{{{"speedup", "2"}}}; },
       [](const LoadedTrace& b, const Diagnosis&) -> std::string {
         return b.model.facts.data_parallel.used
                    ? ""
                    : "the trace records no data-parallel communication to speed up";
       }},
  };
  return *rows;
}

}  // namespace

std::vector<CandidatePlan> PlanCandidates(const LoadedTrace& base, const Diagnosis& diagnosis) {
  std::vector<CandidatePlan> out;
  const std::vector<Row>& rows = Table();
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string skip = rows[i].skip(base, diagnosis);
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

std::string NextGenerationGpu(const std::string& gpu_name) {
  // Substrings of a device name (lower case, most specific first) -> the
  // lib/gpus.lua key of the generation a user would move to.
  static constexpr std::pair<const char*, const char*> kNext[] = {
      {"gp100", "V100-SXM2"},      {"p100", "V100-SXM2"},        {"v100", "A100-SXM4-80GB"},
      {"t4", "L4"},                {"2080 ti", "RTX3090"},        {"3090", "RTX4090"},
      {"3080", "RTX4090"},         {"a100", "H100-SXM"},          {"a10", "L40S"},
      {"h100", "B200"},            {"h200", "B200"},              {"mi250", "MI300X"},
      {"mi210", "MI300X"},         {"mi300x", "MI325X"},
  };
  const std::string name = Lower(gpu_name);
  for (const auto& [match, next] : kNext) {
    if (name.find(match) != std::string::npos) return next;
  }
  return "";
}

bool HasBf16(const LoadedTrace& base) {
  const depgraph::GpuFact& gpu = base.model.facts.gpu;
  for (const depgraph::DeviceInfo& d : base.model.devices) {
    if (d.name != gpu.name) continue;
    if (d.vendor == "nvidia" || gpu.vendor == "nvidia") return d.compute_major >= 8;
    if (d.vendor == "amd" || gpu.vendor == "amd") {
      const std::string n = Lower(d.name);
      return n.find("mi2") != std::string::npos || n.find("mi3") != std::string::npos;
    }
  }
  return false;
}

}  // namespace reverie::whatif
