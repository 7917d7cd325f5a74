// File: depgraph/testing/named_graph.h
//
// A hand-built Graph whose tasks a test finds by name: the fixture the
// exporters' unit tests build their small training steps on.
#ifndef REVERIE_DEPGRAPH_TESTING_NAMED_GRAPH_H_
#define REVERIE_DEPGRAPH_TESTING_NAMED_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>

#include "depgraph/graph.h"

namespace reverie::depgraph::testing {

struct NamedGraph {
  Graph g;
  std::map<std::string, TaskId> task;  // by the name given to Add

  // Appends a task named `name` on `r` (duration, gap before it, bytes).
  TaskId Add(TaskKind kind, const std::string& name, ResourceId r, int64_t dur, int64_t gap = 0,
             int64_t bytes = 0) {
    return task[name] = g.AppendTask(TaskSpec{.kind = kind,
                                              .name = name,
                                              .resource = r,
                                              .duration_ns = dur,
                                              .gap_ns = gap,
                                              .bytes = bytes});
  }
};

}  // namespace reverie::depgraph::testing

#endif  // REVERIE_DEPGRAPH_TESTING_NAMED_GRAPH_H_
