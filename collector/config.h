// File: collector/config.h
//
// Collector settings: REVERIE_* environment variables, overridable with
// reverie_configure() before collection starts. Every key is documented in
// collector/README.md; kConfigKeys lists them.
//
// A bad value never stops the host: Set() reports it (the caller prints one
// warning) and the default stays.
#ifndef REVERIE_COLLECTOR_CONFIG_H_
#define REVERIE_COLLECTOR_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/api_filter.h"

namespace reverie::collector {

struct Config {
  std::string output = "reverie_trace.pb";  // REVERIE_OUTPUT ("%p" -> pid)
  int64_t steps = 0;                   // REVERIE_STEPS (0 = all)
  int64_t warmup = 0;                       // REVERIE_WARMUP
  int64_t buffer_mb = 64;                   // REVERIE_BUFFER_MB: CUPTI buffer pool, total
  int64_t buffer_kb = 4096;                 // REVERIE_BUFFER_KB: one CUPTI buffer
  int64_t chunk_kb = 1024;                  // REVERIE_CHUNK_KB: bytes per written chunk
  int64_t flush_interval_ms = 2000;         // REVERIE_FLUSH_INTERVAL_MS: max age of unwritten data
  int64_t cupti_flush_period_ms = 0;        // REVERIE_CUPTI_FLUSH_PERIOD_MS (0 = CUPTI default)
  bool fsync_each_chunk = false;            // REVERIE_FSYNC
  bool driver_api = true;                   // REVERIE_DRIVER_API: record driver API calls
  bool nvtx = true;                         // REVERIE_NVTX: capture NVTX ranges
  ApiFilter api_filter = ApiFilter::kQueries;  // REVERIE_API_FILTER: none|queries|cupti
  bool disable = false;                     // REVERIE_DISABLE
  bool verbose = false;                     // REVERIE_VERBOSE: summary line at stop
  std::string cupti_lib;                    // REVERIE_CUPTI_LIB: path of libcupti to load

  // Applies one key (the environment variable name). Returns false and sets
  // `error` when the key is unknown or the value malformed.
  bool Set(std::string_view key, std::string_view value, std::string* error);

  // Reads every REVERIE_* variable present; returns one message per bad one.
  std::vector<std::string> LoadFromEnvironment();

  // `output` with "%p" replaced by `pid`.
  std::string OutputPath(int64_t pid) const;
};

// The keys Set() understands.
extern const char* const kConfigKeys[];

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_CONFIG_H_
