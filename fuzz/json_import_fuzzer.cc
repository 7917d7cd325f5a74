// Fuzz target: a Kineto JSON trace from bytes, through the public loading
// API (LoadTraceFile: content sniffing, then the importer), then the graph
// builder and the simulator every command runs next. A rejected input must
// come back as one line naming the file. The same bytes decoded on one
// thread and on three must then give the same Trace, or the same first
// error (kineto_parser.cc's parts, cut after every event so that even a
// small input is split).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frameworks/kineto/json_input.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_parser.h"
#include "fuzz/fuzz_util.h"

namespace {

// The Trace the bytes decode to on `threads` threads, or "error: " and the
// message.
std::string Decoded(std::string_view text, int threads) {
  using reverie::kineto::JsonInput;
  absl::StatusOr<JsonInput> input = reverie::kineto::CopyJsonText(text, "fuzz.json");
  if (!input.ok()) return "error: " + std::string(input.status().message());
  reverie::kineto::KinetoTraceBuilder builder("fuzz.json");
  const absl::Status s = reverie::kineto::ParseKinetoJson(*input, "fuzz.json", &builder,
                                                          /*chunk_bytes=*/1, threads);
  if (!s.ok()) return "error: " + std::string(s.message());
  const reverie::Trace t = builder.Finish(threads);
  return reverie::DeterministicBytes(t.header(), t.events());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reverie::fuzz::LoadBuildSimulate(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (Decoded(text, 1) != Decoded(text, 3)) std::abort();  // threads changed the answer
  return 0;
}
