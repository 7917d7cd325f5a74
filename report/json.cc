#include "report/json.h"

#include "base/json_writer.h"

#include <cmath>
#include <cstdio>

namespace reverie::report {

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

}  // namespace reverie::report
