// File: report/json.h
//
// JSON string quoting for the report writers (timeline, compare, sweep),
// which stream their output by hand so that a timeline of millions of events
// is never held as a DOM.
#ifndef REVERIE_REPORT_JSON_H_
#define REVERIE_REPORT_JSON_H_

#include <string>
#include <string_view>

#include "base/json_writer.h"

namespace reverie::report {

// AppendJsonString (base/json_writer.h) is the one escaper; these wrap it.
using ::reverie::AppendJsonString;
std::string JsonString(std::string_view s);
// A finite double as JSON (NaN / inf become null).
std::string JsonNumber(double v);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_JSON_H_
