// File: depgraph/host_speed.h
//
// How fast two runs' host CPUs ran the same work. The BEFORE and AFTER of a
// validation pair come from different processes; a host that runs a third
// slower in one of them moves a host-bound step by as much, and no
// prediction made from the other trace can see it (the H100 pairs of
// docs/ACCURACY.md: the same bf16 ResNet-50 took 35.2 ms per step in one
// process and 58.0 ms in another, its GPU work identical).
//
// Kernel launches are the host work both runs do many times and the same
// way whatever the change: AMP, a fused optimizer or a batch size change
// which kernels are launched, not what one launch costs the CPU. The ratio
// of their median durations therefore measures the two hosts' difference.
// Each launch API (cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel, ...)
// is compared with itself; the ratios are combined as a geometric mean
// weighted by the smaller of the two call counts.
//
// Copies to or from pageable memory are host work too, though they run on
// a copy engine: the driver stages them through a pinned buffer, a host
// memcpy and a DMA chunk by chunk, so their speed is the host memory's.
// They are compared the same way, copies of one name and size with
// themselves (GPUPuzzlers' S1: the same 4 MiB pageable host-to-device
// copies took 457 us a copy in one process and 823 us in the other, with
// nothing else running on the GPU).
#ifndef REVERIE_DEPGRAPH_HOST_SPEED_H_
#define REVERIE_DEPGRAPH_HOST_SPEED_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "depgraph/graph.h"
#include "depgraph/simulator.h"

namespace reverie::depgraph {

// Fewer launches of one API than this in either run: too few for a median.
inline constexpr int64_t kMinLaunchesCompared = 20;
// Fewer pageable copies of one name and size than this in either run.
inline constexpr int64_t kMinCopiesCompared = 10;

// AFTER's time over BEFORE's for one kind of host work (above 1: AFTER's
// host was slower): the geometric mean over the groups compared (launches
// of one API; copies of one name and size), each weighted by its smaller
// count.
struct SpeedRatio {
  double ratio = 0;  // 0: no group had enough in both runs
  // The group compared with the most: the launch API or the copy's name
  // (and its bytes), and its medians.
  std::string name;
  int64_t bytes = 0;
  double before_median_ns = 0;
  double after_median_ns = 0;
  // Launches or copies compared, over all groups.
  int64_t before_count = 0;
  int64_t after_count = 0;
  bool known() const { return ratio > 0; }
};

struct HostSpeed {
  SpeedRatio launches;         // kernel launch calls (kMinLaunchesCompared)
  SpeedRatio pageable_copies;  // copies to or from pageable memory (kMinCopiesCompared)
  bool known() const { return launches.known() || pageable_copies.known(); }
};

// A copy into or out of pageable host memory, by its name ("Memcpy HtoD
// (Pageable -> Device)", Kineto's and the collector's naming).
bool IsPageableCopy(std::string_view name);

// Reads measured durations of kCpuApi and kMemcpy tasks (removed tasks
// excluded).
HostSpeed CompareHostSpeed(const Graph& before, const Graph& after);

// The mean step of `g` simulated with `options` after every CPU task's
// duration and gap is made `cpu_ratio` times as long and every pageable
// copy's `copy_ratio` times (capped as any duration, base/checked_math.h);
// 0 when it cannot be simulated. `g` is scaled in place and given back
// exactly as it was (no copy of the graph), so nothing else may read it
// meanwhile.
double StepAtHostSpeed(Graph& g, const SimOptions& options, double cpu_ratio, double copy_ratio);

// How much a step moves with its host: the step's change, in percent, when
// the CPU and pageable copies take kHostProbe (10%) longer. A step bound by
// the GPU barely moves; one bound by the host moves by up to about 10%.
// The simulator is max-plus, so it is never negative. -1 when unknown.
inline constexpr double kHostProbe = 0.10;
// Above this change (%), a step is bound by the host: half of the most a
// 10% slower host can move it.
inline constexpr double kHostBoundPct = 5;
double HostSensitivityPct(Graph& g, const SimOptions& options, double step_ns);

// The words every command prints for a prediction whose step is bound by
// the host (sensitivity >= kHostBoundPct): "the predicted step is bound by
// the host's CPU (+9.8% with it 10% slower)"; "" below it.
std::string HostBoundPhrase(double sensitivity_pct);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_HOST_SPEED_H_
