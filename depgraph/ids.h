// File: depgraph/ids.h
//
// The graph's strong ids: a task, a resource, a layer, an edge and an op are
// each numbered from 0 in the order they were added, and one kind of id
// cannot be passed where another is expected.
#ifndef REVERIE_DEPGRAPH_IDS_H_
#define REVERIE_DEPGRAPH_IDS_H_

#include "base/strong_id.h"

namespace reverie::depgraph {

struct TaskTag {};
struct ResourceTag {};
struct LayerTag {};
struct EdgeTag {};
struct OpTag {};
using TaskId = StrongId<TaskTag>;
using ResourceId = StrongId<ResourceTag>;
using LayerId = StrongId<LayerTag>;
using EdgeId = StrongId<EdgeTag>;
using OpId = StrongId<OpTag>;

}  // namespace reverie::depgraph

#endif  // REVERIE_DEPGRAPH_IDS_H_
