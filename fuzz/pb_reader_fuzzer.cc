// Fuzz target: a reverie .pb trace from bytes (what `reverie import` and the
// CUPTI collector write), through the public loading API, then the graph
// builder and the simulator. Seeds start with the trace magic, so mutations
// reach the chunk reader, the end marker check and the event validation.
// A rejected input must come back as one line naming the file.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reverie::fuzz::LoadBuildSimulate(data, size);
  return 0;
}
