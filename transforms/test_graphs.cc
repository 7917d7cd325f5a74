#include "transforms/test_graphs.h"

#include <string>
#include <vector>

namespace reverie::transforms::testing {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::LayerId;
using depgraph::Phase;
using depgraph::ResourceId;
using depgraph::TaskId;
using depgraph::TaskKind;
using depgraph::TaskSpec;

namespace {

struct Ctx {
  Graph g;
  ResourceId cpu, gpu;
};

void Launch(Ctx& c, const char* kernel, int64_t us, LayerId layer, Phase phase, int32_t it) {
  TaskSpec l{
      .kind = TaskKind::kCpuApi, .name = "cudaLaunchKernel", .resource = c.cpu,
      .duration_ns = 5'000, .gap_ns = 2'000, .layer = layer, .phase = phase, .step = it};
  const TaskId lt = c.g.AppendTask(l);
  TaskSpec k{
      .kind = TaskKind::kKernel, .name = kernel, .resource = c.gpu, .duration_ns = us * 1'000,
      .layer = layer, .phase = phase, .step = it};
  const TaskId kt = c.g.AppendTask(k);
  c.g.AddEdge(lt, kt, EdgeKind::kLaunch);
}

// Thread 100 (resource 0) and stream 7 of GPU 0 (resource 1).
Ctx OneThreadOneStream() {
  Ctx c;
  c.cpu = c.g.AddResource({depgraph::ResourceKind::kCpuThread, 1, 100, -1, "thread 100", true});
  c.gpu = c.g.AddResource({depgraph::ResourceKind::kGpuStream, 1, 7, 0, "stream 7 (gpu 0)", true});
  return c;
}

// The step's closing cudaStreamSynchronize (2us, gap 10us), waiting for
// the stream's last task.
void AppendSync(Ctx& c, int32_t it) {
  TaskSpec sync{
      .kind = TaskKind::kCpuApi, .name = "cudaStreamSynchronize", .resource = c.cpu,
      .duration_ns = 2'000, .gap_ns = 10'000, .phase = Phase::kUpdate, .step = it};
  const TaskId s = c.g.AppendTask(sync);
  c.g.AddEdge(c.g.last_on_resource(c.gpu), s, EdgeKind::kSync);
}

}  // namespace

Graph MakeTrainingGraph(int steps) {
  Ctx c = OneThreadOneStream();
  const LayerId l1 = c.g.AddLayer("layer1", LayerId());
  const LayerId l10 = c.g.AddLayer("layer1.0", l1);
  const LayerId conv = c.g.AddLayer("layer1.0.conv1", l10);
  const LayerId relu = c.g.AddLayer("layer1.0.relu", l10);
  const LayerId bn = c.g.AddLayer("layer1.0.bn1", l10);
  const LayerId fc = c.g.AddLayer("fc", LayerId());
  for (int it = 0; it < steps; ++it) {
    c.g.AddStep({"ProfilerStep#" + std::to_string(it), 0, 0});
    Launch(c, "volta_scudnn_128x64_relu_interior_nn_v1", 100, conv, Phase::kForward, it);
    Launch(c, "void at::native::vectorized_elementwise_kernel<4, relu>", 20, relu,
           Phase::kForward, it);
    Launch(c, "volta_sgemm_64x64_nn", 50, fc, Phase::kForward, it);
    Launch(c, "volta_sgemm_64x64_nt", 60, fc, Phase::kBackward, it);
    Launch(c, "void cudnn::bn_bw_1C11_kernel_new<float>", 30, bn, Phase::kBackward, it);
    Launch(c, "wgrad_alg0_engine<float>", 120, conv, Phase::kBackward, it);
    for (int k = 0; k < 3; ++k) {
      Launch(c, "multi_tensor_apply_kernel<SGD>", 10, LayerId(), Phase::kUpdate, it);
    }
    AppendSync(c, it);
  }
  return std::move(c.g);
}

Graph MakeDeepTrainingGraph(int layers, int steps) {
  Ctx c = OneThreadOneStream();
  std::vector<LayerId> fc;
  for (int i = 0; i < layers; ++i) fc.push_back(c.g.AddLayer("fc" + std::to_string(i), LayerId()));
  for (int it = 0; it < steps; ++it) {
    c.g.AddStep({"ProfilerStep#" + std::to_string(it), 0, 0});
    for (int i = 0; i < layers; ++i) {
      Launch(c, "volta_sgemm_128x64_nn", 50, fc[i], Phase::kForward, it);
      Launch(c, "void at::native::vectorized_elementwise_kernel<4, relu>", 20, fc[i], Phase::kForward, it);
    }
    for (int i = layers - 1; i >= 0; --i) {
      Launch(c, "void at::native::vectorized_elementwise_kernel<4, relu_backward>", 20, fc[i],
             Phase::kBackward, it);
      Launch(c, "volta_sgemm_128x64_nt", 60, fc[i], Phase::kBackward, it);
    }
    Launch(c, "multi_tensor_apply_kernel<SGD>", 10, LayerId(), Phase::kUpdate, it);
    AppendSync(c, it);
  }
  return std::move(c.g);
}

void AddActivationMemory(Graph& g) {
  constexpr int64_t kMiB = 1 << 20;
  int64_t ns = 0;
  auto add = [&](int64_t bytes, TaskId anchor, uint32_t alloc) {
    depgraph::MemoryEvent m{
        .measured_ns = ++ns, .bytes = bytes, .device = 0, .phase = g.phase(anchor),
        .layer = g.layer_of(anchor), .alloc = alloc, .has_addr = true, .anchor = anchor};
    g.AddMemoryEvent(m);
    return static_cast<uint32_t>(g.memory_events().size());  // 1 + its index
  };
  const ResourceId cpu(0);
  TaskId t = g.first_on_resource(cpu);
  add(4 * kMiB, t, 0);
  std::vector<uint32_t> saved;  // 1 + index of each live forward output
  for (; t.valid(); t = g.next_on_resource(t)) {
    if (g.kind(t) != TaskKind::kCpuApi || g.name(t) != "cudaLaunchKernel") continue;
    if (g.phase(t) == Phase::kForward) {
      saved.push_back(add(kMiB, t, 0));
    } else if (g.phase(t) == Phase::kBackward && !saved.empty()) {
      add(-kMiB, t, saved.back());
      saved.pop_back();
    }
  }
}

Graph MakeLargeGraph(int64_t n) {
  Ctx c = OneThreadOneStream();
  static const char* kNames[] = {
      "volta_sgemm_128x64_nn",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
      "cudnn::winograd_nonfused::winogradForwardData4x4<float, float>",
      "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>",
      "void at::native::reduce_kernel<512, 1>",
      "implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>",
  };
  const int32_t per_step = 10'000;
  for (int64_t i = 0; i < n / 2; ++i) {
    const int32_t it = static_cast<int32_t>(i / per_step);
    if (i % per_step == 0) c.g.AddStep({"step " + std::to_string(it), 0, 0});
    const Phase phase = (i % per_step) < per_step / 3       ? Phase::kForward
                        : (i % per_step) < per_step * 9 / 10 ? Phase::kBackward
                                                                       : Phase::kUpdate;
    Launch(c, kNames[i % 6], 10 + (i * 7919) % 90, LayerId(), phase, it);
  }
  return std::move(c.g);
}

}  // namespace reverie::transforms::testing
