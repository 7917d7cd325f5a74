#include "report/json.h"

#include "base/json_writer.h"

namespace reverie::report {

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

}  // namespace reverie::report
