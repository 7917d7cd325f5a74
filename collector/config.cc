#include "collector/config.h"

#include <charconv>
#include <cstdlib>

namespace reverie::collector {

// REVERIE_ITERATIONS, the deprecated name of REVERIE_STEPS, comes first so
// that the new name wins where both are set.
const char* const kConfigKeys[] = {
    "REVERIE_ITERATIONS", "REVERIE_OUTPUT",    "REVERIE_STEPS", "REVERIE_WARMUP",
    "REVERIE_BUFFER_MB", "REVERIE_BUFFER_KB",  "REVERIE_CHUNK_KB",
    "REVERIE_FLUSH_INTERVAL_MS", "REVERIE_CUPTI_FLUSH_PERIOD_MS", "REVERIE_FSYNC",
    "REVERIE_DRIVER_API", "REVERIE_NVTX",      "REVERIE_DISABLE",
    "REVERIE_VERBOSE",   "REVERIE_CUPTI_LIB",  "REVERIE_API_FILTER", nullptr,
};

namespace {

bool ParseInt(std::string_view s, int64_t lo, int64_t hi, int64_t* out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseBool(std::string_view s, bool* out) {
  if (s == "1" || s == "true" || s == "yes" || s == "on") {
    *out = true;
    return true;
  }
  if (s == "0" || s == "false" || s == "no" || s == "off" || s.empty()) {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace

bool Config::Set(std::string_view key, std::string_view value, std::string* error) {
  struct IntKey {
    const char* name;
    int64_t* field;
    int64_t lo, hi;
  };
  const IntKey ints[] = {
      {"REVERIE_STEPS", &steps, 0, int64_t{1} << 40},
      {"REVERIE_ITERATIONS", &steps, 0, int64_t{1} << 40},  // deprecated name of REVERIE_STEPS
      {"REVERIE_WARMUP", &warmup, 0, int64_t{1} << 40},
      {"REVERIE_BUFFER_MB", &buffer_mb, 1, 64 * 1024},
      {"REVERIE_BUFFER_KB", &buffer_kb, 64, 256 * 1024},
      {"REVERIE_CHUNK_KB", &chunk_kb, 4, 1024 * 1024},
      {"REVERIE_FLUSH_INTERVAL_MS", &flush_interval_ms, 10, 3600 * 1000},
      {"REVERIE_CUPTI_FLUSH_PERIOD_MS", &cupti_flush_period_ms, 0, 3600 * 1000},
  };
  for (const IntKey& k : ints) {
    if (key != k.name) continue;
    if (ParseInt(value, k.lo, k.hi, k.field)) return true;
    *error = std::string(key) + "=" + std::string(value) + ": expected an integer in [" +
             std::to_string(static_cast<long long>(k.lo)) + ", " +
             std::to_string(static_cast<long long>(k.hi)) + "]";
    return false;
  }
  struct BoolKey {
    const char* name;
    bool* field;
  };
  const BoolKey bools[] = {
      {"REVERIE_FSYNC", &fsync_each_chunk}, {"REVERIE_DRIVER_API", &driver_api},
      {"REVERIE_NVTX", &nvtx},              {"REVERIE_DISABLE", &disable},
      {"REVERIE_VERBOSE", &verbose},
  };
  for (const BoolKey& k : bools) {
    if (key != k.name) continue;
    if (ParseBool(value, k.field)) return true;
    *error = std::string(key) + "=" + std::string(value) + ": expected 0 or 1";
    return false;
  }
  if (key == "REVERIE_OUTPUT") {
    if (value.empty()) {
      *error = "REVERIE_OUTPUT is empty";
      return false;
    }
    output = std::string(value);
    return true;
  }
  if (key == "REVERIE_API_FILTER") {
    if (value == "none") {
      api_filter = ApiFilter::kNone;
    } else if (value == "queries") {
      api_filter = ApiFilter::kQueries;
    } else if (value == "cupti") {
      api_filter = ApiFilter::kCupti;
    } else {
      *error = "REVERIE_API_FILTER=" + std::string(value) + ": expected none, queries or cupti";
      return false;
    }
    return true;
  }
  if (key == "REVERIE_CUPTI_LIB") {
    cupti_lib = std::string(value);
    return true;
  }
  *error = "unknown setting " + std::string(key);
  return false;
}

std::vector<std::string> Config::LoadFromEnvironment() {
  std::vector<std::string> errors;
  for (const char* const* key = kConfigKeys; *key != nullptr; ++key) {
    const char* value = std::getenv(*key);
    if (value == nullptr) continue;
    std::string error;
    if (!Set(*key, value, &error)) errors.push_back(error);
  }
  return errors;
}

std::string Config::OutputPath(int64_t pid) const {
  std::string path;
  for (size_t i = 0; i < output.size(); ++i) {
    if (output[i] == '%' && i + 1 < output.size() && output[i + 1] == 'p') {
      path += std::to_string(static_cast<long long>(pid));
      ++i;
    } else {
      path += output[i];
    }
  }
  return path;
}

}  // namespace reverie::collector
