// File: proto/trace_counters.h
//
// Every counter a trace producer (the JSON importer, the .pb reader and
// validation, the CUPTI collector) may record, declared once with its
// severity and what it means, in the style of perfetto's stats.h. Code adds
// to a counter by its enumerator, so a name that nothing emits cannot be
// asserted or shown. Files keep counters by name (trace.proto Counter), so a
// .pb written by another version may hold names not declared here: they are
// kept and shown without a description.
//
// Header-only and dependency-free: the collector includes it too.
#ifndef REVERIE_PROTO_TRACE_COUNTERS_H_
#define REVERIE_PROTO_TRACE_COUNTERS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace reverie {

// kInfo: recorded data reverie deliberately does not use, or a fact about
// the capture; kAnomaly: data that contradicts itself, kept after a fix-up
// (clamped, closed, dropped edge) that the counter's description names;
// kDataLoss: data the file should hold and does not.
enum class CounterSeverity : uint8_t { kInfo, kAnomaly, kDataLoss };

// F(name, severity, description)
#define REVERIE_TRACE_COUNTERS(F)                                                                  \
  /* JSON importer */                                                                              \
  F(malformed_event, kDataLoss, "an element of traceEvents that is not an object (dropped)")        \
  F(truncated_event, kDataLoss, "the trace ends inside an event (a file cut while written)")        \
  F(missing_field, kAnomaly, "an event without a field it needs (ts, dur, name, flow id): dropped") \
  F(negative_duration, kAnomaly, "an event that ends before it starts: made to end at its start")   \
  F(unsupported_event_phase, kAnomaly, "an event of a phase (ph) reverie does not read: dropped")               \
  F(unknown_category, kAnomaly, "an event of a category (cat) reverie does not know: dropped")                  \
  F(skipped_flow, kInfo, "a flow event other than the CPU-to-GPU (ac2g) ones")                      \
  F(skipped_instant_event, kInfo, "an instant event (no duration)")                                 \
  F(skipped_cpu_instant_event, kInfo, "a CPU instant event (no duration)")                          \
  F(skipped_overhead, kInfo, "a profiler overhead span")                                            \
  F(skipped_profiler_span, kInfo, "a span the profiler itself records (Trace span)")                \
  F(skipped_cuda_profiler_range, kInfo, "a cudaProfilerStart/Stop range")                           \
  F(skipped_collective_comm, kInfo, "a collective-communication record without a CPU range")       \
  F(skipped_other_category, kInfo, "an event of another category reverie does not use")            \
  F(skipped_python_function, kInfo, "a Python function span that is not an nn.Module")              \
  F(unbalanced_annotation, kAnomaly, "a user annotation's end without a begin, or never ended")     \
  F(non_numeric_thread_id, kAnomaly, "a pid or tid given as text: numbered by its name")            \
  F(gpu_activity_without_correlation, kAnomaly, "a kernel or copy with no correlation id")         \
  F(unknown_sync_kind, kAnomaly, "a CUDA synchronization of a kind reverie does not know")          \
  F(duplicate_correlation, kAnomaly, "two CPU calls with one correlation id (the first is used)")   \
  F(unmatched_correlation, kAnomaly, "GPU work whose correlation id no CPU call has")               \
  F(gpu_starts_before_launch, kAnomaly, "GPU work that starts before the call that launched it")    \
  F(launch_without_kernel, kAnomaly, "a kernel launch call with no kernel recorded")                \
  F(memory_call_without_gpu_activity, kAnomaly, "a memcpy/memset call with no GPU copy recorded")   \
  F(sync_without_api_call, kAnomaly, "a synchronization with no CPU call to attribute it to")       \
  F(unmatched_flow, kAnomaly, "a forward-backward flow with only one end")                         \
  F(range_overlap, kAnomaly, "a CPU range that ends after its parent: clipped to the parent")      \
  F(backward_op_without_forward_layer, kAnomaly,                                                   \
    "a backward op whose forward op has no layer: it gets no layer")                               \
  F(op_inputs_truncated, kInfo,                                                                    \
    "an op's recorded input shapes beyond reverie's limits (64 inputs, 16 dims a tensor, 4096 tensors a list, 65536 dims an op): cut") \
  F(duplicate_profiler_step, kAnomaly, "two ProfilerStep#N spans with one N (the first is used)")   \
  F(memory_free_without_allocation, kInfo,                                                         \
    "a free of memory whose allocation the trace does not hold (made before the trace began)")     \
  F(memory_never_freed, kInfo, "an allocation still live when the trace ends")                     \
  F(memory_free_size_mismatch, kAnomaly,                                                           \
    "a free whose size differs from its allocation's (matched by address anyway)")                 \
  F(memory_double_allocation, kAnomaly,                                                            \
    "an allocation at an address already live (the earlier one is taken as freed)")               \
  F(memory_without_address, kInfo,                                                                 \
    "a [memory] event without an address (2021 schema): in the totals, not matched")              \
  F(memory_unknown_device, kAnomaly, "a [memory] event on a device type other than CPU/CUDA: dropped") \
  F(json_number_out_of_range, kAnomaly, "a number beyond the bounds of base/checked_math.h: clamped") \
  F(device_numbered_apart, kInfo,                                                                  \
    "GPU work on a device id deviceProperties does not list, which lists one GPU: that GPU's properties are the device's") \
  /* validation of every loaded trace (proto/trace_validate.h) */                                  \
  F(time_out_of_range, kAnomaly, "a timestamp beyond 2^62 ns or 2^50 ns from the rest: clamped")    \
  F(kernel_geometry_out_of_range, kAnomaly, "kernel launch geometry beyond bounds: unknown")        \
  F(bytes_out_of_range, kAnomaly, "a byte or element count beyond 2^50: clamped")                   \
  F(device_property_out_of_range, kAnomaly, "a GPU property, rank or group size out of range")      \
  F(memory_index_out_of_range, kAnomaly, "a memory event's op or allocation index that points nowhere: none") \
  F(module_path_out_of_range, kAnomaly,                                                            \
    "an nn.Module path deeper than 32 levels or longer than 1,024 bytes: cut to its outer levels") \
  /* .pb reader (reverie import --salvage) */                                                      \
  F(missing_end_marker, kDataLoss, "a .pb file without its end marker (a producer that stopped)")  \
  F(truncated_chunk, kDataLoss, "a damaged or cut chunk of a .pb file (dropped)")                   \
  /* CUPTI collector */                                                                            \
  F(records_outside_window, kInfo, "records outside the steps the collector was told to keep")  \
  F(window_hold_overflow, kDataLoss,                                                               \
    "GPU records judged before their API call was decoded (the collector's hold list was full): some may be missing") \
  F(header_overflow, kDataLoss, "the header did not fit the space reserved for it")                 \
  F(api_calls_filtered, kInfo,                                                                     \
    "CUDA calls that only query or set state (cudaGetDevice, ...), left out by REVERIE_API_FILTER")  \
  F(cupti_unavailable, kDataLoss, "CUPTI could not be enabled: no GPU activity recorded")           \
  F(cupti_buffer_parse_error, kDataLoss, "a CUPTI activity buffer that could not be read")          \
  F(cupti_record_unhandled_kind, kInfo, "a CUPTI activity record of a kind reverie does not read")  \
  F(cupti_dropped_records, kDataLoss, "activity records CUPTI dropped (buffers full)")               \
  F(cupti_buffer_pool_exhausted, kInfo, "the collector's buffer pool ran out (malloc used instead)") \
  F(cupti_buffer_malloc_fallback, kInfo, "activity buffers allocated outside the pool")             \
  F(cupti_buffers_lost, kDataLoss, "activity buffers that could not be allocated")                  \
  F(cupti_fatal_error, kDataLoss, "CUPTI calls that failed")                                        \
  F(cupti_overhead_count, kInfo, "CUPTI's own overhead records")                                    \
  F(cupti_overhead_ns, kInfo, "CUPTI's own overhead, ns")                                           \
  F(sync_thread_unknown, kAnomaly, "a synchronization whose CPU thread was never seen")             \
  F(sync_event_unresolved, kAnomaly, "an event synchronization whose event was never recorded")     \
  F(host_events_dropped, kDataLoss, "framework hook events dropped (the queue was full)")            \
  F(range_unbalanced_pop, kAnomaly, "a framework range closed that was not open")                   \
  F(range_unbalanced_end, kAnomaly, "a framework range ended that was not started")                 \
  F(range_parent_unknown, kAnomaly, "a framework range whose parent was never completed")           \
  F(range_unclosed, kAnomaly, "a framework range still open at the end: closed there")              \
  F(step_unclosed, kAnomaly, "a step begun while another was open")                      \
  F(step_end_without_begin, kAnomaly, "a step end without its begin")                    \
  F(bucket_parameter_unknown, kAnomaly, "a gradient bucket naming a parameter never registered")

struct CounterSpec {
  std::string_view name;
  CounterSeverity severity;
  std::string_view description;
};

// Expand a counter list F(name, severity, description) into an enum whose
// enumerators are the counters' own names (as perfetto's stats are, so the
// code reads as the output does) and into the matching CounterSpec array.
#define REVERIE_COUNTER_ENUMERATOR(name, severity, description) name,
#define REVERIE_COUNTER_SPEC(name, severity, description) \
  {#name, ::reverie::CounterSeverity::severity, description},

enum class TraceCounter : uint16_t { REVERIE_TRACE_COUNTERS(REVERIE_COUNTER_ENUMERATOR) };
inline constexpr CounterSpec kTraceCounterSpecs[] = {REVERIE_TRACE_COUNTERS(REVERIE_COUNTER_SPEC)};
inline constexpr size_t kTraceCounterCount = std::size(kTraceCounterSpecs);

inline constexpr const CounterSpec& Spec(TraceCounter c) {
  return kTraceCounterSpecs[static_cast<size_t>(c)];
}

// The declared counter of that name, or nullptr (a name from another
// version's file).
inline const CounterSpec* FindTraceCounter(std::string_view name) {
  for (const CounterSpec& s : kTraceCounterSpecs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Whether a trace counter of that name reports an anomaly or lost data
// (reports list it as such) rather than data reverie chose not to use: true
// for a name this version does not declare (a newer producer's).
inline bool IsTraceAnomaly(std::string_view name) {
  const CounterSpec* spec = FindTraceCounter(name);
  return spec == nullptr || spec->severity != CounterSeverity::kInfo;
}

inline constexpr std::string_view SeverityName(CounterSeverity s) {
  switch (s) {
    case CounterSeverity::kInfo: return "info";
    case CounterSeverity::kAnomaly: return "anomaly";
    case CounterSeverity::kDataLoss: return "data loss";
  }
  return "?";
}

}  // namespace reverie

#endif  // REVERIE_PROTO_TRACE_COUNTERS_H_
