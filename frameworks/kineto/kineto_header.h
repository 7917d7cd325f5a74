// File: frameworks/kineto/kineto_header.h
//
// The top-level keys of a Kineto trace other than "traceEvents", read into
// the TraceHeader: deviceProperties, distributedInfo, baseTimeNanoseconds,
// and every other scalar (or one level of object) as metadata text.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_

#include <string_view>

#include "frameworks/kineto/json_values.h"
#include "proto/trace.h"
#include "simdjson.h"

namespace reverie::kineto {

// Reads the value of top-level `key` into `header`. Values of an unexpected
// type are ignored; what makes the document unreadable is returned, or
// noted in `st` (json_values.h).
simdjson::error_code ParseHeaderField(std::string_view key, simdjson::ondemand::value& v,
                                      proto::TraceHeader* header, json::ReadState* st);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_
