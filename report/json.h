// File: report/json.h
//
// JSON string quoting for the writers that stream JSON by hand (the
// timeline view, the browser test driver). Numbers go through JsonWriter
// (base/json_writer.h), the one number format of every JSON reverie writes.
#ifndef REVERIE_REPORT_JSON_H_
#define REVERIE_REPORT_JSON_H_

#include <string>
#include <string_view>

#include "base/json_writer.h"

namespace reverie::report {

// AppendJsonString (base/json_writer.h) is the one escaper; these wrap it.
using ::reverie::AppendJsonString;
std::string JsonString(std::string_view s);

}  // namespace reverie::report

#endif  // REVERIE_REPORT_JSON_H_
