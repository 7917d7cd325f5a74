// File: frameworks/kineto/kineto_memory.h
//
// LinkMemoryEvents: what the importer adds to the [memory] events
// (trace.proto MemoryEvent) once every range is emitted: time order, the op
// that encloses each event (so its layer and phase), and for each free the
// allocation it frees, matched by device and address.
//
// Invariants after it: memory_events are sorted by time (ties in file
// order); `range` points at a CPU range of the event's thread that contains
// its time, the innermost one; `alloc` points at an earlier allocation of the
// same device and address with no free between them. What cannot be matched
// is counted (memory_free_without_allocation, memory_never_freed,
// memory_double_allocation, memory_free_size_mismatch,
// memory_without_address), never dropped.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_MEMORY_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_MEMORY_H_

#include "proto/trace.h"

namespace reverie::kineto {

void LinkMemoryEvents(Trace* trace);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_MEMORY_H_
