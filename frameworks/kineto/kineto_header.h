// File: frameworks/kineto/kineto_header.h
//
// The top-level keys of a Kineto trace other than "traceEvents", read into
// the TraceHeader: deviceProperties, distributedInfo, baseTimeNanoseconds,
// and every other scalar (or one level of object) as metadata text.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_

#include <string_view>

#include "proto/trace.h"
#include "simdjson.h"

namespace reverie::kineto {

// Reads the value of top-level `key` into `header`. Values of an unexpected
// type are ignored; a malformed number token sets `*bad_token`.
simdjson::error_code ParseHeaderField(std::string_view key, simdjson::ondemand::value& v,
                                      proto::TraceHeader* header, const char** bad_token);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_HEADER_H_
