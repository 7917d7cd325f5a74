/* File: collector/include/reverie/collector.h
 *
 * The C API of libreverie_collector.so, the CUPTI collector that writes a
 * reverie .pb trace (proto/trace.proto) from inside a CUDA program.
 *
 * The library works three ways (see collector/README.md):
 *   1. CUDA_INJECTION64_PATH=libreverie_collector.so: the CUDA driver calls
 *      InitializeInjection() at cuInit and collection starts by itself.
 *   2. LD_PRELOAD=libreverie_collector.so: a constructor starts collection
 *      only when the process visibly uses CUDA; any other program is untouched.
 *   3. Linked or dlopen()ed: the program calls reverie_start() itself and
 *      marks layers and steps with the functions below.
 *
 * Every function is safe to call at any time and from any thread: before
 * reverie_start(), after reverie_stop(), in a forked child, or when CUPTI
 * could not start. In those states the markers do nothing. No function ever
 * throws, aborts or exits.
 *
 * Configuration comes from REVERIE_* environment variables, or from
 * reverie_configure() before reverie_start() (same keys).
 */
#ifndef REVERIE_COLLECTOR_H_
#define REVERIE_COLLECTOR_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define REVERIE_API __attribute__((visibility("default")))
#else
#define REVERIE_API
#endif

/* The functions never throw; C++ callers may rely on it. */
#ifdef __cplusplus
#define REVERIE_NOEXCEPT noexcept
#else
#define REVERIE_NOEXCEPT
#endif

/* Training phase of a layer range; the values are trace.proto's Phase. */
enum {
  REVERIE_PHASE_UNKNOWN = 0,
  REVERIE_PHASE_FORWARD = 1,
  REVERIE_PHASE_BACKWARD = 2,
  REVERIE_PHASE_UPDATE = 3,
  REVERIE_PHASE_DATA_LOADING = 4,
  REVERIE_PHASE_OTHER = 5
};

/* Results of reverie_start() / reverie_stop() / reverie_flush() /
 * reverie_configure(). */
enum {
  REVERIE_OK = 0,
  /* CUPTI could not start (no driver, no GPU, another CUPTI subscriber such
   * as the PyTorch profiler or Nsight). One warning line went to stderr; the
   * trace still records the host-side markers (layers, steps,
   * parameters, buckets) and counts `cupti_unavailable`. */
  REVERIE_HOST_ONLY = 1,
  /* Not collecting: disabled by REVERIE_DISABLE, stopped, in a forked child,
   * or the output file could not be opened (one warning line). */
  REVERIE_NOT_COLLECTING = 2,
  /* reverie_configure(): unknown key or bad value (nothing changed). */
  REVERIE_BAD_ARGUMENT = 3,
  /* reverie_configure() after collection started. */
  REVERIE_ALREADY_STARTED = 4
};

/* Entry point the CUDA driver calls when this library is named by
 * CUDA_INJECTION64_PATH. Starts collection; always returns 1. */
REVERIE_API int InitializeInjection(void) REVERIE_NOEXCEPT;

/* Sets one configuration key (the environment variable names, e.g.
 * "REVERIE_OUTPUT", "REVERIE_STEPS") before reverie_start(). */
REVERIE_API int reverie_configure(const char* key, const char* value) REVERIE_NOEXCEPT;

/* Starts collection (idempotent). Returns REVERIE_OK, REVERIE_HOST_ONLY or
 * REVERIE_NOT_COLLECTING. */
REVERIE_API int reverie_start(void) REVERIE_NOEXCEPT;

/* Flushes everything and closes the trace. Collection cannot restart in the
 * same process. Also runs at exit when collection is still active. */
REVERIE_API int reverie_stop(void) REVERIE_NOEXCEPT;

/* Forces CUPTI to hand over its buffers and writes them, so the file on disk
 * is complete up to now. Blocks until written (or a few seconds at most). */
REVERIE_API int reverie_flush(void) REVERIE_NOEXCEPT;

/* 1 while collecting (CUPTI or host-only), 0 otherwise. */
REVERIE_API int reverie_is_collecting(void) REVERIE_NOEXCEPT;

/* Sets a header metadata entry; the key "framework" sets
 * TraceHeader.framework (e.g. "pytorch 2.4.0"). */
REVERIE_API void reverie_set_metadata(const char* key, const char* value) REVERIE_NOEXCEPT;

/* Opens a layer range on the calling thread (module path such as
 * "layer1.0.conv1"; phase REVERIE_PHASE_*). GPU work launched until the
 * matching pop is attributed to it through CUPTI external correlation. */
REVERIE_API void reverie_layer_push(const char* name, int phase) REVERIE_NOEXCEPT;
/* Closes the innermost range opened on the calling thread (layer or not). */
REVERIE_API void reverie_layer_pop(void) REVERIE_NOEXCEPT;

/* Like reverie_layer_push for a range that is not a model layer (data
 * loading, the optimizer step, any code region): written as a
 * USER_ANNOTATION range with its phase, attributed the same way.
 * reverie_range_pop is reverie_layer_pop under a matching name. */
REVERIE_API void reverie_range_push(const char* name, int phase) REVERIE_NOEXCEPT;
REVERIE_API void reverie_range_pop(void) REVERIE_NOEXCEPT;

/* Marks the start and end of a training step (numbered 0, 1, ...).
 * REVERIE_WARMUP / REVERIE_STEPS select which steps are kept. */
REVERIE_API void reverie_step_begin(void) REVERIE_NOEXCEPT;
REVERIE_API void reverie_step_end(void) REVERIE_NOEXCEPT;
/* Deprecated: the names reverie_step_begin/end had in reverie 0.1.0. */
REVERIE_API void reverie_iteration_begin(void) REVERIE_NOEXCEPT;
REVERIE_API void reverie_iteration_end(void) REVERIE_NOEXCEPT;

/* Declares a DDP gradient bucket: its index, payload bytes and the names of
 * the parameters all-reduced together. */
REVERIE_API void reverie_comm_bucket(int32_t index, int64_t bytes, const char* const* param_names,
                                     int32_t param_count) REVERIE_NOEXCEPT;

/* Declares a parameter's gradient size and the layer (module path) it
 * belongs to. reverie_parameter_typed also names the dtype ("Float"). */
REVERIE_API void reverie_parameter(const char* name, const char* layer,
                                   int64_t bytes) REVERIE_NOEXCEPT;
REVERIE_API void reverie_parameter_typed(const char* name, const char* layer, int64_t bytes,
                                         const char* dtype) REVERIE_NOEXCEPT;

/* Version of this library, e.g. "reverie-collector 0.1". */
REVERIE_API const char* reverie_collector_version(void) REVERIE_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REVERIE_COLLECTOR_H_ */
