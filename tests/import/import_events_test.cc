// Unit tests of the Kineto importer, one event kind at a time, on small
// hand-written JSON documents.
#include <string>
#include <vector>

#include "frameworks/kineto/kineto_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/import/import_test_util.h"

namespace reverie {
namespace {

using testing::ImportEvents;
using testing::Str;

constexpr char kLaunch[] =
    R"J({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":11,)J"
    R"J("ts":1000.5,"dur":4.25,"args":{"External id":7,"cbid":211,"correlation":42}})J";
constexpr char kKernel[] =
    R"J({"ph":"X","cat":"kernel","name":"gemm_kernel","pid":0,"tid":7,"ts":1010,"dur":20.001,)J"
    R"J("args":{"External id":7,"device":0,"context":1,"stream":7,"correlation":42,)J"
    R"J("registers per thread":64,"shared memory":4096,"grid":[8,2,1],"block":[256,1,1]}})J";

TEST(ImportEvents, RuntimeCallAndKernel) {
  Trace t = ImportEvents(std::string(kLaunch) + "," + kKernel);
  ASSERT_EQ(t.events().api_calls_size(), 1);
  const proto::ApiCall& a = t.events().api_calls(0);
  EXPECT_EQ(a.kind(), proto::ApiCall::RUNTIME);
  EXPECT_EQ(Str(t, a.name_sid()), "cudaLaunchKernel");
  EXPECT_EQ(a.pid(), 10);
  EXPECT_EQ(a.tid(), 11);
  EXPECT_EQ(a.start_ns(), 1000500);
  EXPECT_EQ(a.end_ns(), 1004750);
  EXPECT_EQ(a.correlation_id(), 42u);
  EXPECT_EQ(a.external_id(), 7u);
  EXPECT_EQ(a.cbid(), 211u);

  ASSERT_EQ(t.events().gpu_activities_size(), 1);
  const proto::GpuActivity& k = t.events().gpu_activities(0);
  EXPECT_EQ(k.kind(), proto::GpuActivity::KERNEL);
  EXPECT_EQ(Str(t, k.name_sid()), "gemm_kernel");
  EXPECT_EQ(k.device(), 0);
  EXPECT_EQ(k.stream(), 7);
  EXPECT_EQ(k.context(), 1);
  EXPECT_EQ(k.start_ns(), 1010000);
  EXPECT_EQ(k.end_ns(), 1030001);
  EXPECT_EQ(k.correlation_id(), 42u);
  EXPECT_EQ(k.grid_x(), 8);
  EXPECT_EQ(k.grid_y(), 2);
  EXPECT_EQ(k.grid_z(), 1);
  EXPECT_EQ(k.block_x(), 256);
  EXPECT_EQ(k.registers_per_thread(), 64);
  EXPECT_EQ(k.shared_memory_bytes(), 4096);
  EXPECT_EQ(t.events().counters_size(), 0) << "a clean launch + kernel has no anomalies";
  EXPECT_EQ(t.header().producer(), "reverie import (kineto json)");
}

// record_shapes: an op's input sizes, element types and scalar values, a
// tensor list among them (what the cost model computes work from).
TEST(ImportEvents, OpInputShapes) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":10,"dur":5,"args":{)J"
      R"J("Input Dims":[[256],[16,2056],[2056,256],[],[]],)J"
      R"J("Input type":["float","float","float","Scalar","Scalar"],)J"
      R"J("Concrete Inputs":["","","","1","1"]}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::_foreach_mul_","pid":1,"tid":1,"ts":20,"dur":5,"args":{)J"
      R"J("Concrete Inputs":["","0.9"],"Input type":["TensorList","Scalar"],)J"
      R"J("Input Dims":[[[256,2056],[256],[]],[]]}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":30,"dur":5,"args":{}})J");
  ASSERT_EQ(t.events().ranges_size(), 3);
  const proto::Range& addmm = t.events().ranges(0);
  ASSERT_EQ(addmm.inputs_size(), 5);
  EXPECT_THAT(addmm.inputs(1).dims(), ::testing::ElementsAre(16, 2056));
  EXPECT_EQ(Str(t, addmm.inputs(1).type_sid()), "float");
  EXPECT_FALSE(addmm.inputs(1).is_list());
  EXPECT_EQ(addmm.inputs(3).dims_size(), 0);
  EXPECT_EQ(Str(t, addmm.inputs(3).type_sid()), "Scalar");
  EXPECT_EQ(Str(t, addmm.inputs(3).concrete_sid()), "1");
  const proto::Range& foreach = t.events().ranges(1);
  ASSERT_EQ(foreach.inputs_size(), 2);
  EXPECT_TRUE(foreach.inputs(0).is_list());
  EXPECT_THAT(foreach.inputs(0).list_ranks(), ::testing::ElementsAre(2, 1, 0));
  EXPECT_THAT(foreach.inputs(0).dims(), ::testing::ElementsAre(256, 2056, 256));
  EXPECT_EQ(Str(t, foreach.inputs(1).concrete_sid()), "0.9");
  EXPECT_EQ(t.events().ranges(2).inputs_size(), 0);
}

// Hostile sizes: more inputs and dims than the limits are cut and counted.
TEST(ImportEvents, OpInputShapesAreBounded) {
  std::string dims, types;
  for (int i = 0; i < 70; ++i) {
    dims += std::string(i ? "," : "") + "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]";
    types += std::string(i ? "," : "") + "\"float\"";
  }
  Trace t = ImportEvents(R"J({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":10,"dur":5,)J"
                         R"J("args":{"Input Dims":[)J" + dims + R"J(],"Input type":[)J" + types + "]}}");
  ASSERT_EQ(t.events().ranges_size(), 1);
  EXPECT_EQ(t.events().ranges(0).inputs_size(), 64);
  EXPECT_EQ(t.events().ranges(0).inputs(0).dims_size(), 16);
  EXPECT_EQ(t.GetCounter(TraceCounter::op_inputs_truncated), 1);
}

TEST(ImportEvents, DriverCall) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":5,"dur":1,)J"
      R"J("args":{"correlation":9}},)J"
      R"J({"ph":"X","cat":"kernel","name":"triton_k","pid":0,"tid":7,"ts":6,"dur":1,)J"
      R"J("args":{"device":0,"stream":7,"correlation":9}})J");
  ASSERT_EQ(t.events().api_calls_size(), 1);
  EXPECT_EQ(t.events().api_calls(0).kind(), proto::ApiCall::DRIVER);
  EXPECT_EQ(t.GetCounter(TraceCounter::unmatched_correlation), 0);
}

TEST(ImportEvents, MemcpyAndMemset) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1}},)J"
      R"J({"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pinned)","pid":0,"tid":7,"ts":3,"dur":2,)J"
      R"J("args":{"device":0,"stream":7,"correlation":1,"bytes":4096}},)J"
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":2}},)J"
      R"J({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":6,"dur":2,)J"
      R"J("args":{"device":0,"stream":7,"correlation":2,"bytes":8}},)J"
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":8,"dur":1,"args":{"correlation":3}},)J"
      R"J({"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":9,"dur":1,)J"
      R"J("args":{"device":0,"stream":7,"correlation":3,"bytes":256}})J");
  ASSERT_EQ(t.events().gpu_activities_size(), 3);
  const auto& d2h = t.events().gpu_activities(0);
  EXPECT_EQ(d2h.kind(), proto::GpuActivity::MEMCPY);
  EXPECT_EQ(d2h.copy_kind(), proto::GpuActivity::DTOH);
  EXPECT_EQ(d2h.bytes(), 4096);
  EXPECT_EQ(t.events().gpu_activities(1).copy_kind(), proto::GpuActivity::HTOD);
  const auto& set = t.events().gpu_activities(2);
  EXPECT_EQ(set.kind(), proto::GpuActivity::MEMSET);
  EXPECT_EQ(set.bytes(), 256);
  EXPECT_EQ(t.events().counters_size(), 0);
}

TEST(ImportEvents, AmdCopyKindFromArgs) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_runtime","name":"hipMemcpyWithStream","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":5}},)J"
      R"J({"ph":"X","cat":"gpu_memcpy","name":"Memcpy","pid":0,"tid":0,"ts":3,"dur":2,)J"
      R"J("args":{"device":0,"stream":0,"correlation":5,"kind":"DtoD","bytes":64}})J",
      R"J("deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","numSms":304,"warpSize":64}])J");
  ASSERT_EQ(t.events().gpu_activities_size(), 1);
  EXPECT_EQ(t.events().gpu_activities(0).copy_kind(), proto::GpuActivity::DTOD);
  ASSERT_EQ(t.header().devices_size(), 1);
  EXPECT_EQ(t.header().devices(0).vendor(), "amd");
  EXPECT_EQ(t.header().devices(0).sm_count(), 304);
  EXPECT_EQ(t.header().devices(0).warp_size(), 64);
}

// A process that saw one GPU lists it in deviceProperties by its ordinal in
// the process (0), while roctracer numbers the work by the GPU's index in
// the machine (TraceLens' MI300X traces: kernels on device 2). That device
// takes the listed GPU's properties; with two listed GPUs nothing is guessed.
TEST(ImportEvents, WorkOnAnUnlistedDeviceTakesTheOnlyListedGpu) {
  const std::string kernel =
      R"J({"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":5}},)J"
      R"J({"ph":"X","cat":"kernel","name":"k","pid":2,"tid":2,"ts":3,"dur":2,)J"
      R"J("args":{"device":2,"stream":0,"correlation":5}})J";
  Trace t = ImportEvents(
      kernel,
      R"J("deviceProperties":[{"id":0,"name":"AMD Instinct MI300X","numSms":304,"warpSize":64}])J");
  ASSERT_EQ(t.header().devices_size(), 2);
  EXPECT_EQ(t.header().devices(1).id(), 2);
  EXPECT_EQ(t.header().devices(1).name(), "AMD Instinct MI300X");
  EXPECT_EQ(t.header().devices(1).sm_count(), 304);
  EXPECT_EQ(t.GetCounter(TraceCounter::device_numbered_apart), 1);
  Trace two = ImportEvents(
      kernel,
      R"J("deviceProperties":[{"id":0,"name":"AMD Instinct MI300X"},{"id":1,"name":"AMD Instinct MI300X"}])J");
  ASSERT_EQ(two.header().devices_size(), 3);
  EXPECT_EQ(two.header().devices(2).name(), "");
  EXPECT_EQ(two.GetCounter(TraceCounter::device_numbered_apart), 0);
}

TEST(ImportEvents, SyncKindsTakeTheBlockedThread) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":3,"tid":4,"ts":10,"dur":5,"args":{"correlation":20}},)J"
      R"J({"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":11,"dur":4,)J"
      R"J("args":{"cuda_sync_kind":"Stream Sync","stream":7,"correlation":20,"device":0,"context":1}},)J"
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":3,"tid":4,"ts":20,"dur":1,"args":{"correlation":21}},)J"
      R"J({"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":24,"ts":20,"dur":1,)J"
      R"J("args":{"cuda_sync_kind":"Stream Wait Event","wait_on_stream":20,)J"
      R"J("wait_on_cuda_event_record_corr_id":19,"wait_on_cuda_event_id":9,"stream":24,"correlation":21,"device":0}},)J"
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":3,"tid":4,"ts":30,"dur":3,"args":{"correlation":22}},)J"
      R"J({"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":-1,"ts":30,"dur":3,)J"
      R"J("args":{"cuda_sync_kind":"Context Sync","stream":-1,"correlation":22,"device":0}},)J"
      R"J({"ph":"X","cat":"cuda_runtime","name":"cudaEventSynchronize","pid":3,"tid":4,"ts":40,"dur":3,"args":{"correlation":23}},)J"
      R"J({"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":-1,"ts":40,"dur":3,)J"
      R"J("args":{"cuda_sync_kind":"Event Sync","wait_on_cuda_event_id":9,"correlation":23,"device":0}})J");
  ASSERT_EQ(t.events().syncs_size(), 4);
  const proto::Sync& stream = t.events().syncs(0);
  EXPECT_EQ(stream.kind(), proto::Sync::STREAM);
  EXPECT_EQ(stream.pid(), 3);
  EXPECT_EQ(stream.tid(), 4);
  EXPECT_EQ(stream.stream(), 7);
  const proto::Sync& wait = t.events().syncs(1);
  EXPECT_EQ(wait.kind(), proto::Sync::STREAM_WAIT_EVENT);
  EXPECT_EQ(wait.stream(), 24);
  EXPECT_EQ(wait.wait_on_stream(), 20);
  EXPECT_EQ(wait.event_id(), 9);
  EXPECT_EQ(wait.event_record_correlation_id(), 19u);
  EXPECT_EQ(t.events().syncs(2).kind(), proto::Sync::CONTEXT);
  EXPECT_EQ(t.events().syncs(3).kind(), proto::Sync::EVENT);
  EXPECT_EQ(t.events().counters_size(), 0);
}

TEST(ImportEvents, CudaEventRecord) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cuda_event","name":"cudaEventRecord","pid":0,"tid":20,"ts":5,"dur":0,)J"
      R"J("args":{"correlation":19,"event_id":9,"device":0,"stream":20,"context":1}})J");
  ASSERT_EQ(t.events().event_records_size(), 1);
  const proto::EventRecord& r = t.events().event_records(0);
  EXPECT_EQ(r.correlation_id(), 19u);
  EXPECT_EQ(r.event_id(), 9);
  EXPECT_EQ(r.stream(), 20);
  EXPECT_EQ(r.context(), 1);
}

TEST(ImportEvents, RangesNestPerThread) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":100},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":10,"dur":50,"args":{"External id":5,"Sequence number":77}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":12,"dur":40},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":70,"dur":5},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"other_thread_op","pid":1,"tid":2,"ts":11,"dur":5},)J"
      R"J({"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#3","pid":0,"tid":7,"ts":20,"dur":60})J");
  ASSERT_EQ(t.events().ranges_size(), 6);
  // Sorted parents-first: thread 1 (step, linear, addmm, relu), thread 2, GPU.
  const auto& r = t.events().ranges();
  EXPECT_EQ(Str(t, r[0].name_sid()), "ProfilerStep#3");
  EXPECT_EQ(r[0].kind(), proto::Range::USER_ANNOTATION);
  EXPECT_EQ(r[0].parent(), 0u);
  EXPECT_EQ(Str(t, r[1].name_sid()), "aten::linear");
  EXPECT_EQ(r[1].kind(), proto::Range::CPU_OP);
  EXPECT_EQ(r[1].parent(), 1u);  // global index + 1
  EXPECT_EQ(r[1].depth(), 1u);
  EXPECT_EQ(r[1].external_id(), 5u);
  EXPECT_EQ(r[1].sequence_number(), 77);
  EXPECT_EQ(Str(t, r[2].name_sid()), "aten::addmm");
  EXPECT_EQ(r[2].parent(), 2u);
  EXPECT_EQ(r[2].depth(), 2u);
  EXPECT_EQ(r[2].sequence_number(), -1) << "absent sequence number";
  EXPECT_EQ(Str(t, r[3].name_sid()), "aten::relu");
  EXPECT_EQ(r[3].parent(), 1u);
  EXPECT_EQ(Str(t, r[4].name_sid()), "other_thread_op");
  EXPECT_EQ(r[4].parent(), 0u) << "ranges on another thread never nest";
  EXPECT_EQ(r[5].kind(), proto::Range::GPU_ANNOTATION);
  EXPECT_EQ(r[5].tid(), 7);
  EXPECT_EQ(r[5].device(), 0);
  // One step, from the CPU ProfilerStep only.
  ASSERT_EQ(t.events().steps_size(), 1);
  EXPECT_EQ(t.events().steps(0).index(), 3);
  EXPECT_EQ(t.events().steps(0).end_ns() - t.events().steps(0).start_ns(), 100000);
  EXPECT_EQ(t.events().counters_size(), 0);
}

TEST(ImportEvents, LayersFromModuleHierarchy) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"python_function","name":"nn.Module: MLP_0","pid":1,"tid":1,"ts":0,"dur":100,"args":{"Python id":2,"Python parent id":1}},)J"
      R"J({"ph":"X","cat":"python_function","name":"torch/nn/modules/module.py(1520): _call_impl","pid":1,"tid":1,"ts":1,"dur":98,"args":{"Python id":3,"Python parent id":2}},)J"
      R"J({"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":2,"dur":40,"args":{"Python id":4,"Python parent id":3}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":3,"dur":30},)J"
      R"J({"ph":"X","cat":"python_function","name":"nn.Module: Linear_1","pid":1,"tid":1,"ts":50,"dur":40,"args":{"Python id":6,"Python parent id":3}})J");
  EXPECT_EQ(t.GetCounter(TraceCounter::skipped_python_function), 1);
  ASSERT_EQ(t.events().ranges_size(), 4);
  const auto& r = t.events().ranges();
  EXPECT_EQ(r[0].kind(), proto::Range::LAYER);
  EXPECT_EQ(Str(t, r[0].module_path_sid()), "MLP_0");
  EXPECT_EQ(Str(t, r[1].module_path_sid()), "MLP_0.Linear_0");
  EXPECT_EQ(r[1].phase(), proto::FORWARD);
  EXPECT_EQ(r[2].kind(), proto::Range::CPU_OP);
  EXPECT_EQ(Str(t, r[2].module_path_sid()), "MLP_0.Linear_0") << "ops inherit their layer";
  EXPECT_EQ(r[2].phase(), proto::FORWARD);
  EXPECT_EQ(Str(t, r[3].module_path_sid()), "MLP_0.Linear_1");
}

TEST(ImportEvents, BackwardOpsTakeTheirForwardLayer) {
  // Forward op on the main thread inside Linear_0, its autograd node on the
  // backward thread linked by a fwdbwd flow; AccumulateGrad follows it.
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"python_function","name":"nn.Module: Linear_0","pid":1,"tid":1,"ts":0,"dur":50,"args":{"Python id":2,"Python parent id":1}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":5,"dur":20,"args":{"Sequence number":100,"Fwd thread id":0}},)J"
      R"J({"ph":"s","id":1,"pid":1,"tid":1,"ts":5,"cat":"fwdbwd","name":"fwdbwd"},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddmmBackward0","pid":1,"tid":9,"ts":200,"dur":30,"args":{"Sequence number":100,"Fwd thread id":1}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"AddmmBackward0","pid":1,"tid":9,"ts":201,"dur":28,"args":{"Sequence number":100}},)J"
      R"J({"ph":"f","id":1,"pid":1,"tid":9,"ts":201,"cat":"fwdbwd","name":"fwdbwd","bp":"e"},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":9,"ts":202,"dur":10},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: torch::autograd::AccumulateGrad","pid":1,"tid":9,"ts":240,"dur":5},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"Optimizer.step#Adam.step","pid":1,"tid":1,"ts":300,"dur":40},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::_foreach_add_","pid":1,"tid":1,"ts":305,"dur":10})J");
  ASSERT_EQ(t.events().flows_size(), 1);
  const proto::Flow& f = t.events().flows(0);
  EXPECT_EQ(f.kind(), proto::Flow::FWD_BWD);
  EXPECT_EQ(f.from_tid(), 1);
  EXPECT_EQ(f.to_tid(), 9);
  EXPECT_EQ(f.to_ns(), 201000);
  std::map<std::string, const proto::Range*> by_name;
  for (const proto::Range& r : t.events().ranges()) by_name[Str(t, r.name_sid())] = &r;
  const proto::Range* fwd = by_name["aten::addmm"];
  EXPECT_EQ(fwd->phase(), proto::FORWARD);
  const proto::Range* eval = by_name["autograd::engine::evaluate_function: AddmmBackward0"];
  EXPECT_EQ(eval->phase(), proto::BACKWARD);
  EXPECT_EQ(Str(t, eval->module_path_sid()), "Linear_0");
  EXPECT_EQ(eval->fwd_tid(), 1);
  EXPECT_EQ(Str(t, by_name["aten::mm"]->module_path_sid()), "Linear_0");
  EXPECT_EQ(by_name["aten::mm"]->phase(), proto::BACKWARD);
  const proto::Range* acc =
      by_name["autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"];
  EXPECT_EQ(Str(t, acc->module_path_sid()), "Linear_0");
  EXPECT_EQ(by_name["Optimizer.step#Adam.step"]->phase(), proto::UPDATE);
  EXPECT_EQ(by_name["aten::_foreach_add_"]->phase(), proto::UPDATE);
  EXPECT_EQ(t.GetCounter(TraceCounter::backward_op_without_forward_layer), 0);
  EXPECT_EQ(t.GetCounter(TraceCounter::unmatched_flow), 0);
}

TEST(ImportEvents, PhaseMarkersAndSequenceNumbers) {
  // No modules, no flows: "## forward ##" markers and the autograd sequence
  // number still give phases; the backward thread's ops are BACKWARD while
  // the main thread sits in "## backward ##".
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"## forward ##","pid":1,"tid":1,"ts":10,"dur":100},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":20,"dur":50,"args":{"Sequence number":5}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":120,"dur":5,"args":{"Sequence number":6}},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"## backward ##","pid":1,"tid":1,"ts":200,"dur":300},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: MulBackward0","pid":1,"tid":2,"ts":210,"dur":20,"args":{"Sequence number":6}},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":1,"tid":2,"ts":240,"dur":20},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"## optimizer ##","pid":1,"tid":1,"ts":600,"dur":100},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::add_","pid":1,"tid":1,"ts":610,"dur":10})J");
  std::map<std::string, proto::Phase> phase;
  for (const proto::Range& r : t.events().ranges()) phase[Str(t, r.name_sid())] = r.phase();
  EXPECT_EQ(phase["ProfilerStep#1"], proto::PHASE_UNKNOWN);
  EXPECT_EQ(phase["aten::conv2d"], proto::FORWARD);
  EXPECT_EQ(phase["aten::mul"], proto::FORWARD) << "its sequence number has a backward node";
  EXPECT_EQ(phase["autograd::engine::evaluate_function: MulBackward0"], proto::BACKWARD);
  EXPECT_EQ(phase["nccl:all_reduce"], proto::BACKWARD);
  EXPECT_EQ(phase["aten::add_"], proto::UPDATE);
  ASSERT_EQ(t.events().collectives_size(), 1);
  EXPECT_EQ(Str(t, t.events().collectives(0).name_sid()), "all_reduce");
}

// PyTorch 2.x (HTA's nccl_data): the annotation opens inside the sized call.
TEST(ImportEvents, AnnotationInsideRecordParamCommsIsTheSameCall) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":0,"dur":50,)J"
      R"J("args":{"Collective name":"broadcast","In msg nelems":10,"dtype":"Float"}},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"nccl:broadcast","pid":1,"tid":1,"ts":5,"dur":30},)J"
      R"J({"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":1,"tid":1,"ts":90,"dur":30})J");
  ASSERT_EQ(t.events().collectives_size(), 2) << "the nested annotation is not a second call";
  std::vector<std::string> names;
  for (const proto::Collective& c : t.events().collectives()) names.push_back(Str(t, c.name_sid()));
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("broadcast", "all_reduce"));
}

TEST(ImportEvents, CollectiveFromRecordParamComms) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":1,"tid":1,"ts":0,"dur":50},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":1,"dur":40,)J"
      R"J("args":{"External id":3,"Collective name":"allreduce","In msg nelems":1000,"Out msg nelems":1000,)J"
      R"J("Group size":8,"dtype":"BFloat16","Process Group Name":"0","Seq":12}})J");
  ASSERT_EQ(t.events().collectives_size(), 1) << "the annotation around it is not a second call";
  const proto::Collective& c = t.events().collectives(0);
  EXPECT_EQ(Str(t, c.name_sid()), "allreduce");
  EXPECT_EQ(c.in_nelems(), 1000);
  EXPECT_EQ(c.out_nelems(), 1000);
  EXPECT_EQ(c.element_bytes(), 2);
  EXPECT_EQ(c.bytes(), 2000);
  EXPECT_EQ(c.group_size(), 8);
  EXPECT_EQ(Str(t, c.dtype_sid()), "BFloat16");
  EXPECT_EQ(Str(t, c.process_group_sid()), "0");
  EXPECT_EQ(c.seq(), 12);
  EXPECT_EQ(c.external_id(), 3u);
}

TEST(ImportEvents, Schema2021) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"Operator","name":"ProfilerStep#4","pid":24572,"tid":"24572","ts":1621401187223000,"dur":500},)J"
      R"J({"ph":"X","cat":"Operator","name":"aten::conv2d","pid":24572,"tid":"24572","ts":1621401187223100,"dur":50,"args":{"Sequence number":9}},)J"
      R"J({"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":24572,"tid":"24572","ts":1621401187223110,"dur":5,)J"
      R"J("args":{"cbid":211,"correlation":311,"external id":31}},)J"
      R"J({"ph":"X","cat":"Kernel","name":"implicit_gemm","pid":0,"tid":"stream 7","ts":1621401187223120,"dur":30,)J"
      R"J("args":{"device":0,"context":1,"stream":7,"correlation":311,"external id":31}},)J"
      R"J({"ph":"X","cat":"Memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":"stream 7","ts":1621401187223160,"dur":1,)J"
      R"J("args":{"device":0,"stream":7,"correlation":312,"bytes":640}},)J"
      R"J({"ph":"X","cat":"Runtime","name":"cudaMemcpyAsync","pid":24572,"tid":"24572","ts":1621401187223150,"dur":20,"args":{"correlation":312}},)J"
      R"J({"ph":"s","id":311,"pid":24572,"tid":24572,"ts":1621401187223110,"cat":"async","name":"launch"},)J"
      R"J({"ph":"f","id":311,"pid":0,"tid":"stream 7","ts":1621401187223120,"cat":"async","name":"launch","bp":"e"},)J"
      R"J({"ph":"X","cat":"Operator","name":"CudnnConvolutionBackward","pid":24572,"tid":"24610","ts":1621401187223300,"dur":50,"args":{"Sequence number":9}})J");
  ASSERT_EQ(t.events().api_calls_size(), 2);
  EXPECT_EQ(t.events().api_calls(0).tid(), 24572);
  EXPECT_EQ(t.events().api_calls(0).external_id(), 31u);
  ASSERT_EQ(t.events().gpu_activities_size(), 2);
  EXPECT_EQ(t.events().gpu_activities(0).stream(), 7);
  EXPECT_EQ(t.events().gpu_activities(0).start_ns(), 1621401187223120000);
  EXPECT_EQ(t.events().gpu_activities(1).copy_kind(), proto::GpuActivity::HTOD);
  ASSERT_EQ(t.events().steps_size(), 1);
  EXPECT_EQ(t.events().steps(0).index(), 4);
  std::map<std::string, proto::Phase> phase;
  for (const proto::Range& r : t.events().ranges()) phase[Str(t, r.name_sid())] = r.phase();
  EXPECT_EQ(phase["aten::conv2d"], proto::FORWARD);
  EXPECT_EQ(phase["CudnnConvolutionBackward"], proto::BACKWARD);
  EXPECT_EQ(t.events().counters_size(), 0);
}

TEST(ImportEvents, HeaderMetadataThreadsAndProcesses) {
  Trace t = ImportEvents(
      R"J({"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"python3"}},)J"
      R"J({"name":"process_labels","ph":"M","ts":0,"pid":1,"tid":0,"args":{"labels":"CPU"}},)J"
      R"J({"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":2,"args":{"name":"thread 2 (python3)"}},)J"
      R"J({"name":"process_sort_index","ph":"M","ts":0,"pid":"Spans","tid":0,"args":{"sort_index":5}},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":2,"ts":1,"dur":1})J",
      R"J("traceName":"run.json","baseTimeNanoseconds":1700000000000000000,)J"
      R"J("deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB","totalGlobalMem":85000000000,)J"
      R"J("computeMajor":8,"computeMinor":0,"numSms":108,"maxThreadsPerMultiprocessor":2048,)J"
      R"J("regsPerMultiprocessor":65536,"sharedMemPerMultiprocessor":167936,"warpSize":32}],)J"
      R"J("distributedInfo":{"backend":"nccl","rank":1,"world_size":2,"nccl_version":"2.17.1",)J"
      R"J("pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":2,"ranks":[0,1]}]})J");
  const proto::TraceHeader& h = t.header();
  EXPECT_EQ(h.base_time_ns(), 1700000000000000000);
  EXPECT_EQ(h.metadata().at("traceName"), "run.json");
  EXPECT_EQ(h.metadata().at("schemaVersion"), "1");
  ASSERT_EQ(h.devices_size(), 1);
  EXPECT_EQ(h.devices(0).name(), "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(h.devices(0).vendor(), "nvidia");
  EXPECT_EQ(h.devices(0).total_memory_bytes(), 85000000000);
  EXPECT_EQ(h.devices(0).compute_major(), 8);
  EXPECT_EQ(h.devices(0).max_threads_per_sm(), 2048);
  EXPECT_EQ(h.devices(0).registers_per_sm(), 65536);
  EXPECT_EQ(h.devices(0).shared_memory_per_sm_bytes(), 167936);
  EXPECT_EQ(h.distributed().backend(), "nccl");
  EXPECT_EQ(h.distributed().rank(), 1);
  EXPECT_EQ(h.distributed().world_size(), 2);
  EXPECT_EQ(h.distributed().nccl_version(), "2.17.1");
  ASSERT_EQ(h.distributed().groups_size(), 1);
  EXPECT_EQ(h.distributed().groups(0).desc(), "default_pg");
  EXPECT_EQ(h.distributed().groups(0).ranks_size(), 2);
  ASSERT_EQ(t.events().threads_size(), 1);
  EXPECT_EQ(t.events().threads(0).name(), "thread 2 (python3)");
  ASSERT_EQ(t.events().processes_size(), 1);
  EXPECT_EQ(t.events().processes(0).name(), "python3");
  EXPECT_EQ(t.events().processes(0).label(), "CPU");
}

TEST(ImportEvents, TimestampsAreExactNanoseconds) {
  // 1712184698519123.457 us needs more than a double's 53 bits in ns.
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1712184698519123.457,"dur":0.001},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":2,"ts":1712184698519123,"dur":1.5e-3},)J"
      R"J({"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":3,"ts":"17.25","dur":1})J");
  ASSERT_EQ(t.events().ranges_size(), 3);
  EXPECT_EQ(t.events().ranges(0).start_ns(), 1712184698519123457);
  EXPECT_EQ(t.events().ranges(0).end_ns(), 1712184698519123458);
  EXPECT_EQ(t.events().ranges(1).start_ns(), 1712184698519123000);
  EXPECT_EQ(t.events().ranges(1).end_ns(), 1712184698519123002);  // 1.5 ns rounds up
  EXPECT_EQ(t.events().ranges(2).start_ns(), 17250);
}

TEST(ImportEvents, BeginEndPairsBecomeRanges) {
  Trace t = ImportEvents(
      R"J({"ph":"B","cat":"user_annotation","name":"outer","pid":1,"tid":1,"ts":10},)J"
      R"J({"ph":"B","cat":"user_annotation","name":"inner","pid":1,"tid":1,"ts":12},)J"
      R"J({"ph":"E","pid":1,"tid":1,"ts":15},)J"
      R"J({"ph":"E","pid":1,"tid":1,"ts":20})J");
  ASSERT_EQ(t.events().ranges_size(), 2);
  EXPECT_EQ(Str(t, t.events().ranges(0).name_sid()), "outer");
  EXPECT_EQ(t.events().ranges(0).end_ns(), 20000);
  EXPECT_EQ(t.events().ranges(1).end_ns(), 15000);
  EXPECT_EQ(t.events().ranges(1).parent(), 1u);
  EXPECT_EQ(t.GetCounter(TraceCounter::unbalanced_annotation), 0);
}

TEST(ImportEvents, CpuOnlyTraceIsValid) {
  Trace t = ImportEvents(R"J({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":1})J");
  EXPECT_EQ(t.events().gpu_activities_size(), 0);
  EXPECT_EQ(t.events().ranges_size(), 1);
}

TEST(ImportEvents, EscapedStringsAreUnescaped) {
  Trace t = ImportEvents(
      R"J({"ph":"X","cat":"kernel","name":"k<\"q\">\u00e9\\n","pid":0,"tid":7,"ts":1,"dur":1,)J"
      R"J("args":{"device":0,"stream":7,"correlation":0}})J");
  ASSERT_EQ(t.events().gpu_activities_size(), 1);
  EXPECT_EQ(Str(t, t.events().gpu_activities(0).name_sid()), "k<\"q\">\xc3\xa9\\n");
}

}  // namespace
}  // namespace reverie
