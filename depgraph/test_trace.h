// File: depgraph/test_trace.h
//
// Test-only helpers: synthetic raw traces written through the Trace API
// (times in ns) for the builder's tests.
#ifndef REVERIE_DEPGRAPH_TEST_TRACE_H_
#define REVERIE_DEPGRAPH_TEST_TRACE_H_

#include <string>
#include <string_view>

#include "depgraph/builder.h"
#include "depgraph/graph.h"
#include "gtest/gtest.h"
#include "proto/trace.h"

namespace reverie::depgraph::test_trace {

constexpr int64_t kPid = 100;

// Builds synthetic traces through the Trace API (times in ns).
class T {
 public:
  void Api(std::string_view name, int64_t tid, int64_t start, int64_t end, uint64_t corr = 0) {
    proto::ApiCall* a = tr.events().add_api_calls();
    a->set_kind(proto::ApiCall::RUNTIME);
    a->set_name_sid(tr.Intern(name));
    a->set_pid(kPid);
    a->set_tid(tid);
    a->set_start_ns(start);
    a->set_end_ns(end);
    a->set_correlation_id(corr);
  }
  void Gpu(std::string_view name, int64_t stream, int64_t start, int64_t end, uint64_t corr,
           proto::GpuActivity::Kind kind = proto::GpuActivity::KERNEL) {
    proto::GpuActivity* g = tr.events().add_gpu_activities();
    g->set_kind(kind);
    g->set_name_sid(tr.Intern(name));
    g->set_device(0);
    g->set_stream(stream);
    g->set_start_ns(start);
    g->set_end_ns(end);
    g->set_correlation_id(corr);
  }
  proto::Sync* Sync(proto::Sync::Kind kind, uint64_t corr, int64_t stream = 0) {
    proto::Sync* s = tr.events().add_syncs();
    s->set_kind(kind);
    s->set_correlation_id(corr);
    s->set_device(0);
    s->set_stream(stream);
    return s;
  }
  void Range(int64_t tid, int64_t start, int64_t end, std::string_view module,
             proto::Phase phase, std::string_view name = "r",
             proto::Range::Kind kind = proto::Range::USER_ANNOTATION) {
    proto::Range* r = tr.events().add_ranges();
    r->set_kind(kind);
    r->set_name_sid(tr.Intern(name));
    r->set_module_path_sid(module.empty() ? 0 : tr.Intern(module));
    r->set_phase(phase);
    r->set_pid(kPid);
    r->set_tid(tid);
    r->set_start_ns(start);
    r->set_end_ns(end);
  }
  // A framework op (Kineto's cpu_op) of no phase on thread `tid`.
  void Op(int64_t tid, int64_t start, int64_t end, std::string_view name) {
    Range(tid, start, end, "", proto::PHASE_UNKNOWN, name, proto::Range::CPU_OP);
  }
  void Step(int64_t index, int64_t tid, int64_t start, int64_t end) {
    proto::Step* it = tr.events().add_steps();
    it->set_index(index);
    it->set_name_sid(tr.Intern("ProfilerStep#" + std::to_string(index)));
    it->set_pid(kPid);
    it->set_tid(tid);
    it->set_start_ns(start);
    it->set_end_ns(end);
  }
  Graph Build(BuildStats* stats = nullptr, BuildOptions opts = {}) {
    absl::StatusOr<Graph> g = BuildGraph(tr, opts, stats);
    EXPECT_TRUE(g.ok()) << g.status();
    if (!g.ok()) return Graph();
    EXPECT_TRUE(g->Validate().ok()) << g->Validate();
    return *std::move(g);
  }
  Trace tr;
};

// Task whose name is `name` (the n-th one).
inline TaskId Find(const Graph& g, std::string_view name, int n = 0) {
  for (uint32_t t = 0; t < g.task_count(); ++t) {
    if (g.name(TaskId(t)) == name && n-- == 0) return TaskId(t);
  }
  ADD_FAILURE() << "no task " << name;
  return TaskId(0);
}

}  // namespace reverie::depgraph::test_trace

#endif  // REVERIE_DEPGRAPH_TEST_TRACE_H_
