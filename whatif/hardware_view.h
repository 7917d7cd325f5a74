// File: whatif/hardware_view.h
//
// What `reverie info` says about the hardware model of a trace
// (transforms/cost_model.h): the GPU as the table and the trace describe
// it, with where each figure came from; each kernel class's efficiency
// curve and each copy kind's rate as calibrated on the trace; and, for the
// top kernels by time, their FLOPs and bytes (from the ops' recorded
// shapes), the FLOP/s and bandwidth they achieved and the share of their
// roofline they reached.
#ifndef REVERIE_WHATIF_HARDWARE_VIEW_H_
#define REVERIE_WHATIF_HARDWARE_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_writer.h"
#include "depgraph/graph.h"
#include "depgraph/model_info.h"
#include "transforms/cost_model.h"

namespace reverie::whatif {

// One kernel name's instances together.
struct KernelRoofline {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t with_work = 0;     // instances whose op recorded shapes
  double flops = 0;          // of those instances
  double bytes = 0;
  double roofline_ns = 0;    // their work at peak
  double measured_ns = 0;    // their measured time
  std::string math;          // "bf16 tensor cores", "fp32 CUDA cores", "memory"
  std::string kind;          // hardware::WorkKindName
  std::string formula;       // of one instance
  std::string why_not;       // without work: why
};

struct HardwareView {
  bool ok = false;
  std::string why_not;  // the model's error when !ok
  transforms::CostModel model;
  std::vector<KernelRoofline> top;  // by total time
};

// The model calibrated on `graph` as measured, and its top `n` kernels.
HardwareView AnalyzeHardware(const depgraph::Graph& graph,
                             const std::vector<depgraph::DeviceInfo>& devices, size_t n = 10);

// The "model" object under the matched device of `info --json`.
void WriteGpuModelJson(JsonWriter& w, const HardwareView& v);
// The "cost_model" object of `info --json`: calibration, copies, top kernels.
void WriteCostModelJson(JsonWriter& w, const HardwareView& v);
// The same as text, for `reverie info`.
std::string HardwareText(const HardwareView& v);

}  // namespace reverie::whatif

#endif  // REVERIE_WHATIF_HARDWARE_VIEW_H_
