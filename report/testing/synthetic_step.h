// File: report/testing/synthetic_step.h
//
// A synthetic training graph of any size for the timeline's tests and
// benchmark: `steps` steps of `ops` ops each on one CPU thread; every op is
// a cudaLaunchKernel call launching one kernel on the compute stream (every
// 16th op also a memcpy on a copy stream), in 60 layers, forward then
// backward then update, with step-mark tasks and a closing
// cudaStreamSynchronize that waits for the step's last kernel. Durations
// come from a fixed pseudo-random sequence, so the graph is the same on
// every run. A step has about 2 * ops + ops / 8 tasks.
#ifndef REVERIE_REPORT_TESTING_SYNTHETIC_STEP_H_
#define REVERIE_REPORT_TESTING_SYNTHETIC_STEP_H_

#include <cstdint>
#include <string>

#include "depgraph/graph.h"

namespace reverie::testing {

inline depgraph::Graph SyntheticStepGraph(int steps, int ops) {
  using depgraph::Phase;
  using depgraph::TaskKind;
  using depgraph::TaskSpec;
  depgraph::Graph g;
  const auto cpu =
      g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 100, -1, "thread 100 (main)", true});
  const auto compute =
      g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  const auto copy =
      g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 8, 0, "stream 8 (gpu 0)", true});
  constexpr int kLayers = 60;
  depgraph::LayerId layers[kLayers];
  for (int l = 0; l < kLayers; ++l) {
    layers[l] = g.AddLayer("model.block" + std::to_string(l) + ".conv", depgraph::LayerId());
  }
  static constexpr const char* kKernels[] = {"volta_sgemm_128x64_nn",
                                             "void at::native::vectorized_elementwise_kernel<4>",
                                             "cudnn::bn_fw_tr_1C11_kernel_NCHW",
                                             "void at::native::reduce_kernel<512, 1>",
                                             "ampere_scudnn_winograd_128x128",
                                             "void at::native::unrolled_elementwise_kernel"};
  uint64_t seed = 12345;
  auto next = [&seed](int64_t lo, int64_t hi) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + static_cast<int64_t>((seed >> 33) % static_cast<uint64_t>(hi - lo + 1));
  };
  int64_t clock = 0;
  auto add = [&](TaskKind kind, const std::string& name, depgraph::ResourceId r, int64_t dur,
                 int32_t step, Phase phase, depgraph::LayerId layer) {
    TaskSpec s{
        .kind = kind, .name = name, .resource = r, .duration_ns = dur,
        .gap_ns = kind == TaskKind::kCpuApi ? next(200, 2'000) : 0, .layer = layer, .phase = phase,
        .step = step, .measured_start_ns = clock};
    return g.AppendTask(s);
  };
  for (int step = 0; step < steps; ++step) {
    const std::string step_name = "ProfilerStep#" + std::to_string(step + 1);
    g.AddStep({step_name, clock, clock + 1});
    TaskSpec mark{
        .kind = TaskKind::kCpuWork, .name = step_name, .resource = cpu, .step = step,
        .measured_start_ns = clock, .step_mark = depgraph::StepMark::kBegin};
    g.AppendTask(mark);
    depgraph::TaskId last_kernel;
    for (int op = 0; op < ops; ++op) {
      const Phase phase = op < ops * 2 / 5    ? Phase::kForward
                          : op < ops * 9 / 10 ? Phase::kBackward
                                              : Phase::kUpdate;
      const depgraph::LayerId layer = layers[(op * kLayers / std::max(ops, 1)) % kLayers];
      const depgraph::TaskId call =
          add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, next(2'000, 6'000), step, phase, layer);
      clock += 4'000;
      last_kernel = add(TaskKind::kKernel, kKernels[next(0, 5)], compute, next(1'000, 60'000), step,
                        phase, layer);
      g.AddEdge(call, last_kernel, depgraph::EdgeKind::kLaunch);
      if (op % 16 == 15) {
        const depgraph::TaskId c =
            add(TaskKind::kCpuApi, "cudaMemcpyAsync", cpu, next(3'000, 8'000), step, phase, layer);
        g.AddEdge(c,
                  add(TaskKind::kMemcpy, "Memcpy HtoD (Pageable -> Device)", copy,
                      next(5'000, 40'000), step, phase, layer),
                  depgraph::EdgeKind::kLaunch);
      }
    }
    const depgraph::TaskId sync = add(TaskKind::kCpuApi, "cudaStreamSynchronize", cpu, 1'000, step,
                                      Phase::kUpdate, depgraph::LayerId());
    if (last_kernel.valid()) g.AddEdge(last_kernel, sync, depgraph::EdgeKind::kSync);
    mark.step_mark = depgraph::StepMark::kEnd;
    const std::string end_name = step_name + " end";  // TaskSpec.name is a view
    mark.name = end_name;
    g.AppendTask(mark);
  }
  return g;
}

}  // namespace reverie::testing

#endif  // REVERIE_REPORT_TESTING_SYNTHETIC_STEP_H_
