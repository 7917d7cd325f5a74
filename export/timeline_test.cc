#include "export/timeline.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gtest/gtest.h"
#include "simdjson.h"

namespace reverie::exporter {
namespace {

using depgraph::EdgeKind;
using depgraph::Graph;
using depgraph::TaskId;
using depgraph::TaskKind;

// One thread launching two kernels on stream 7 (one inside layer "fc"), one
// memcpy, one sync call without a launch.
Graph SmallGraph() {
  Graph g;
  const auto cpu =
      g.AddResource({depgraph::ResourceKind::kCpuThread, 100, 7, -1, "thread 7", true});
  const auto gpu = g.AddResource({depgraph::ResourceKind::kGpuStream, 100, 7, 0, "stream 7", true});
  const auto fc = g.AddLayer("fc", depgraph::LayerId());
  g.AddStep({"ProfilerStep#3", 1'000'000, 1'100'000});
  auto add = [&](TaskKind k, const char* name, depgraph::ResourceId r, int64_t start, int64_t dur,
                 depgraph::LayerId layer) {
    depgraph::TaskSpec s{.kind = k,
                         .name = name,
                         .resource = r,
                         .duration_ns = dur,
                         .layer = layer,
                         .phase = depgraph::Phase::kForward,
                         .step = 0,
                         .measured_start_ns = start};
    return g.AppendTask(s);
  };
  const TaskId l1 = add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 1'000'000, 5'000, fc);
  const TaskId l2 = add(TaskKind::kCpuApi, "cudaLaunchKernel", cpu, 1'010'000, 5'000, {});
  const TaskId l3 = add(TaskKind::kCpuApi, "cudaMemcpyAsync", cpu, 1'020'000, 5'000, {});
  add(TaskKind::kCpuApi, "cudaStreamSynchronize", cpu, 1'030'000, 60'000, {});
  const TaskId k1 = add(TaskKind::kKernel, "gemm<\"x\">", gpu, 1'006'000, 20'000, fc);
  const TaskId k2 = add(TaskKind::kKernel, "relu", gpu, 1'026'000, 10'000, {});
  const TaskId m = add(TaskKind::kMemcpy, "Memcpy DtoH", gpu, 1'040'000, 30'000, {});
  g.set_bytes(m, 4096);
  g.AddEdge(l1, k1, EdgeKind::kLaunch);
  g.AddEdge(l2, k2, EdgeKind::kLaunch);
  g.AddEdge(l3, m, EdgeKind::kLaunch);
  return g;
}

struct Parsed {
  std::map<std::string, int> by_cat;  // cat (or "M:name" for metadata)
  std::map<int64_t, int> by_pid;
  int flows_s = 0, flows_f = 0, flows_f_bp = 0;
  double max_ts = 0;
};

Parsed Parse(const std::string& json) {
  Parsed p;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json.substr(0, 400);
  simdjson::dom::array events;
  EXPECT_EQ(doc["traceEvents"].get(events), simdjson::SUCCESS);
  for (simdjson::dom::element e : events) {
    std::string_view ph = e["ph"].get_string().value();
    int64_t pid = e["pid"].get_int64().value();
    ++p.by_pid[pid];
    if (ph == "M") {
      ++p.by_cat["M:" + std::string(e["name"].get_string().value())];
      continue;
    }
    std::string_view cat = e["cat"].get_string().value();
    ++p.by_cat[std::string(cat)];
    double ts = e["ts"].get_double().value();
    p.max_ts = std::max(p.max_ts, ts);
    if (ph == "s") ++p.flows_s;
    if (ph == "f") {
      ++p.flows_f;
      std::string_view bp;
      if (e["bp"].get(bp) == simdjson::SUCCESS && bp == "e") ++p.flows_f_bp;
    }
  }
  return p;
}

TEST(TimelineTest, MeasuredAndSimulatedRuns) {
  const Graph g = SmallGraph();
  depgraph::SimResult sim;
  sim.start_ns.assign(g.task_count(), 0);
  sim.end_ns.assign(g.task_count(), 0);
  for (size_t i = 0; i < g.task_count(); ++i) {
    sim.start_ns[i] = static_cast<int64_t>(i) * 1000;
    sim.end_ns[i] = sim.start_ns[i] + g.duration_ns(TaskId(static_cast<uint32_t>(i)));
  }
  sim.steps = {{0, 0, 90'000}};
  TimelineStats st;
  const std::string json = RenderTimeline({{"measured", &g, nullptr}, {"baseline", &g, &sim}}, &st);
  const Parsed p = Parse(json);
  EXPECT_EQ(st.tasks, 14);
  EXPECT_EQ(st.flows, 6);
  EXPECT_EQ(p.by_cat.at("cuda_runtime"), 8);
  EXPECT_EQ(p.by_cat.at("kernel"), 4);
  EXPECT_EQ(p.by_cat.at("gpu_memcpy"), 2);
  EXPECT_EQ(p.by_cat.at("ac2g"), 12);
  EXPECT_EQ(p.flows_s, 6);
  EXPECT_EQ(p.flows_f_bp, 6);
  EXPECT_EQ(p.by_cat.at("python_function"), 2);  // nn.Module: fc, per run
  EXPECT_EQ(p.by_cat.at("user_annotation"), 2);  // ProfilerStep#3, per run
  EXPECT_EQ(p.by_cat.at("M:process_name"), 2);
  EXPECT_EQ(p.by_cat.at("M:thread_name"), 4);
  EXPECT_EQ(st.events, static_cast<int64_t>(json.empty() ? 0 : p.by_pid.at(1) + p.by_pid.at(2)));
  // Measured times are shifted to start at 0: the last event ends by 90 us.
  EXPECT_LE(p.max_ts, 90.0);
  EXPECT_NE(json.find("\"name\":\"nn.Module: fc\""), std::string::npos);
  EXPECT_NE(json.find("gemm<\\\"x\\\">"), std::string::npos);
  EXPECT_NE(json.find("\"bytes\":4096"), std::string::npos);
  EXPECT_NE(json.find("\"ts\":10.000"), std::string::npos);  // l2 at 1,010,000 ns
}

TEST(TimelineTest, RemovedAndUntimedTasksAreSkippedAndCounted) {
  Graph g = SmallGraph();
  g.RemoveTask(TaskId(4));  // k1 and its launch edge
  depgraph::TaskSpec s{.kind = TaskKind::kCpuWork,
                       .name = "inserted",
                       .resource = depgraph::ResourceId(0),
                       .duration_ns = 10};
  g.AppendTask(s);  // no measured time
  TimelineStats st;
  RenderTimeline({{"measured", &g, nullptr}}, &st);
  EXPECT_EQ(st.tasks, 6);
  EXPECT_EQ(st.flows, 2);
  EXPECT_EQ(st.skipped_untimed, 1);
}

TEST(TimelineTest, ValidatesRunsAndWritesFile) {
  const Graph g = SmallGraph();
  depgraph::SimResult wrong;
  wrong.start_ns.assign(2, 0);
  wrong.end_ns.assign(2, 0);
  EXPECT_EQ(ValidateRuns({{"x", &g, &wrong}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRuns({{"x", nullptr, nullptr}}).code(), absl::StatusCode::kInvalidArgument);
  const std::string path =
      (std::filesystem::temp_directory_path() / "reverie_timeline_test.json").string();
  ASSERT_TRUE(WriteTimeline(path, {{"measured", &g, nullptr}}).ok());
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(Parse(ss.str()).by_cat.at("kernel"), 2);
  std::filesystem::remove(path);
  EXPECT_FALSE(WriteTimeline("/nonexistent-dir/x.json", {{"m", &g, nullptr}}).ok());
}

}  // namespace
}  // namespace reverie::exporter
