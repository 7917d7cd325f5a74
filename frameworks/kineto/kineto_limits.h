// File: frameworks/kineto/kineto_limits.h
//
// ClampEventNumbers: the bounds of base/checked_math.h applied to one parsed
// Kineto event before the builder does arithmetic on it, so that `ts + dur`,
// an 'E' event's `ts - begin.ts` and `nelems * element size` cannot overflow
// (issue 17, D7: a JSON ts of 9.2e15 us made UBSan report kineto_builder.cc).
// An event with a value out of range is clamped and counted once
// (`json_number_out_of_range`); the whole trace is checked again after the
// builder (proto/trace_validate.h: times far from the rest, geometry...).
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_LIMITS_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_LIMITS_H_

#include "frameworks/kineto/kineto_event.h"
#include "proto/trace.h"

namespace reverie::kineto {

// Called by the parser on every event, before KinetoTraceBuilder::AddEvent.
void ClampEventNumbers(RawEvent* e, Trace* trace);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_LIMITS_H_
