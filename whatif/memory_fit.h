// File: whatif/memory_fit.h
//
// A prediction's memory: the peak its simulated run allocates on each GPU
// against the baseline's (the trace's allocations and frees replayed in
// simulated order, as scripts resized them: depgraph/memory_replay.h), and
// whether it fits the GPU. The capacity is the trace's own
// (deviceProperties' totalGlobalMem) where recorded, else the GPU table's
// (the vendor's figure); the answer warns, it never refuses: the
// allocator's reserve and fragmentation (a run needs more than it
// allocates), CUDA's context and libraries' handles are not in the peak.
#ifndef REVERIE_WHATIF_MEMORY_FIT_H_
#define REVERIE_WHATIF_MEMORY_FIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_writer.h"
#include "depgraph/graph.h"
#include "depgraph/model_info.h"
#include "depgraph/simulator.h"

namespace reverie::whatif {

struct MemoryFit {
  int32_t device = 0;
  bool absolute = true;        // levels include what was allocated before the trace
  int64_t base_peak = 0;       // bytes
  int64_t pred_peak = 0;
  // The phase of the op whose allocation reached each peak (where a memory
  // saver must act to lower it); kUnknown when the trace does not say.
  depgraph::Phase base_phase = depgraph::Phase::kUnknown;
  depgraph::Phase pred_phase = depgraph::Phase::kUnknown;
  int64_t capacity = 0;        // bytes; 0 = unknown
  std::string gpu;             // the GPU's name
  std::string capacity_from;   // "deviceProperties" or "GPU table"
  // Why pred_peak is an estimate, or why no peak is predicted (then
  // pred_peak is the baseline's and says nothing): the prediction graph's
  // Graph::memory_estimate / memory_unknown.
  std::string estimate;
  std::string unknown;
  // Meaningful only with absolute levels, a known capacity and a predicted peak.
  bool fits() const { return capacity <= 0 || pred_peak <= capacity; }
};

// Per GPU with memory events; empty when the trace recorded none.
// With `runs_on` (a GPU table key, reverie.runs_on), the capacity is that
// GPU's (the table's figure), for every device.
std::vector<MemoryFit> FitMemory(const depgraph::Graph& base_graph, const depgraph::SimResult& base,
                                 const depgraph::Graph& pred_graph, const depgraph::SimResult& pred,
                                 const std::vector<depgraph::DeviceInfo>& devices,
                                 std::string_view runs_on = "");

// "peak memory 47.1 MiB on GPU 0 in the backward (baseline 27.1 MiB in the
// update): fits on NVIDIA GeForce RTX 3080 (10.0 GiB, deviceProperties)",
// or "... does not fit ..." (a phase only where the trace says it); an
// estimate says so, and an unknown peak is not judged.
std::string MemoryFitLine(const MemoryFit& f);

// The "memory" array of predict --json (the caller writes the key).
void WriteMemoryFitJson(JsonWriter& w, const std::vector<MemoryFit>& fits);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_MEMORY_FIT_H_
