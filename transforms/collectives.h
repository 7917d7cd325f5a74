// File: transforms/collectives.h
//
// Which recorded GPU task carried out each collective call the framework
// recorded (depgraph::CollectiveInfo, from Kineto's record_param_comms or the
// collector). A communication kernel's name does not always say what it
// does (RCCL and NCCL >= 2.19 launch every collective as
// ncclDevKernel_Generic), but the call that launched it lies inside the
// framework's record of the collective on the same CPU thread: that record
// gives its kind and its size.
#ifndef REVERIE_TRANSFORMS_COLLECTIVES_H_
#define REVERIE_TRANSFORMS_COLLECTIVES_H_

#include <vector>

#include "depgraph/graph.h"
#include "depgraph/model_info.h"

namespace reverie::transforms {

// For each collective of `collectives` (same order), the first measured
// communication task (class communication, depgraph/kernel_class.h) whose
// launch call started on the collective's thread within its recorded span;
// invalid when none did (a record without a GPU task, such as c10d's wait,
// or one whose end was not recorded).
std::vector<depgraph::TaskId> KernelsOfCollectives(
    const depgraph::Graph& g, const std::vector<depgraph::CollectiveInfo>& collectives);

}  // namespace reverie::transforms

#endif  // REVERIE_TRANSFORMS_COLLECTIVES_H_
