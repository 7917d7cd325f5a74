// Fuzz target: a Kineto JSON trace from bytes, through the public loading
// API (LoadTraceFile: content sniffing, then the importer), then the graph
// builder and the simulator every command runs next. A rejected input must
// come back as one line naming the file.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reverie::fuzz::LoadBuildSimulate(data, size);
  return 0;
}
