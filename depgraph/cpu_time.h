// File: depgraph/cpu_time.h
//
// What the CPU threads spend their time on, by the kinds of CPU time the
// builder keeps apart (builder_cpu_time.cc): API calls, ops' own time
// (dispatcher, checks, allocation of the aten ops that issued calls),
// framework time between ops (Python, the data loader) and, on threads whose
// trace has no op spans, untraced gaps after calls (the old model, where the
// three are one number). What a thread's span holds beyond these is waiting
// for a dependency (a sync, another thread).
//
// Invariant: per thread, api + op + framework + untraced + waiting = span,
// for measured and simulated times alike (waiting >= 0 when the graph did
// not double-count CPU time).
#ifndef REVERIE_DEPGRAPH_CPU_TIME_H_
#define REVERIE_DEPGRAPH_CPU_TIME_H_

#include <cstdint>
#include <span>
#include <vector>

#include "depgraph/graph.h"

namespace reverie::depgraph {

struct CpuSplit {
  int64_t api_ns = 0;
  int64_t op_ns = 0;
  int64_t framework_ns = 0;
  int64_t untraced_ns = 0;
  int64_t busy_ns() const { return api_ns + op_ns + framework_ns + untraced_ns; }
};

struct ThreadCpuTime {
  ResourceId thread;
  int64_t span_ns = 0;  // first task's start to the last task's end + gap
  CpuSplit busy;
  int64_t waiting_ns() const { return span_ns - busy.busy_ns(); }
};

struct CpuTimeReport {
  std::vector<CpuSplit> by_step;  // per graph step, over every thread
  std::vector<ThreadCpuTime> by_thread;
  int64_t threads_without_ops = 0;  // threads whose time after calls is untraced gaps
};

// Under per-task times start/end (indexed by TaskId value; kNotMeasured = skip).
CpuTimeReport ComputeCpuTime(const Graph& graph, std::span<const int64_t> start,
                             std::span<const int64_t> end);

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_CPU_TIME_H_
