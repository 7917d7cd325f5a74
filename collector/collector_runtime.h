// File: collector/collector_runtime.h
//
// Collector: one collection session inside the host process. The C API
// (exports.cc) forwards to the process-wide instance; tests create their own
// with a fake CuptiApi.
//
// Threads and what they may do:
// - Application threads call Start/Stop/Flush and the markers. Markers only
//   read atomics, timestamp, push the CUPTI external id and queue a host
//   event; they never wait for the writer.
// - CUPTI's threads (and any thread inside cuptiActivityFlushAll) call
//   OnBufferRequested / OnBufferCompleted: pool pop / queue push only, no
//   lock of ours, no allocation, nothing that throws.
// - The writer thread (collector_writer.cc) owns every decoding and file
//   object (ChunkWriter, TraceSink, CuptiDecoder, HostEventProcessor) and is
//   the only thread that touches them after Start. It never calls CUPTI
//   except cuptiActivityGetNextRecord, which only parses a buffer.
//
// Locks: `control_mu_` serializes Start/Stop. It is never taken by a CUPTI
// callback, so holding it across CUPTI calls cannot deadlock with CUPTI's
// own locks; Flush() (which CUPTI API callbacks reach, e.g. on
// cudaProfilerStop) takes no lock of ours except the writer hand-off mutex
// `wake_mu_`, which is never held across a CUPTI call.
//
// States: kIdle -> (Start) kCollecting | kHostOnly | kFailed;
// kCollecting/kHostOnly -> (Stop or exit) kStopped. A forked child sees
// `pid_ != getpid()` and treats the session as absent.
#ifndef REVERIE_COLLECTOR_COLLECTOR_RUNTIME_H_
#define REVERIE_COLLECTOR_COLLECTOR_RUNTIME_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector/buffer_pool.h"
#include "collector/config.h"
#include "collector/cupti_api.h"
#include "collector/device_query.h"
#include "collector/host_events.h"
#include "collector/mpmc_queue.h"
#include "collector/nvtx_decode.h"

namespace reverie::collector {

class ChunkWriter;
class CuptiDecoder;
class HostEventProcessor;
class StepWindow;
class TraceSink;

// The collector's clock: CLOCK_MONOTONIC in ns. CUPTI is told to use it too
// (cuptiActivityRegisterTimestampCallback) so markers and activities share
// one clock.
uint64_t MonotonicNowNs();

// Prints "reverie-collector: <message>" as one line on stderr with a single
// write() (no stdio: the host's buffers and locks stay untouched).
void WarnLine(const std::string& message);

class Collector {
 public:
  enum class Mode { kApi, kInjection, kPreload };
  enum class State { kIdle, kCollecting, kHostOnly, kFailed, kStopped };

  // `fake_api`: use this CUPTI table instead of loading libcupti (tests).
  // `fake_driver`: the driver table for the device properties (tests); with
  // a fake CUPTI and no fake driver, no device is queried.
  explicit Collector(const CuptiApi* fake_api = nullptr, const DriverApi* fake_driver = nullptr);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // The instance the C API uses (created on first use, never destroyed so
  // that nothing runs after the driver is gone at exit).
  static Collector& Global();

  // C API semantics (REVERIE_* result codes, see collector.h).
  int Configure(const char* key, const char* value);
  int Start(Mode mode);
  int Stop();
  int Flush();
  bool IsCollecting() const;
  State state() const { return state_.load(std::memory_order_acquire); }

  void LayerPush(const char* name, int phase);
  void RangePush(const char* name, int phase);  // a USER_ANNOTATION range
  void LayerPop();
  void StepBegin();
  void StepEnd();
  void CommBucket(int32_t index, int64_t bytes, const char* const* names, int32_t count);
  void Parameter(const char* name, const char* layer, int64_t bytes, const char* dtype);
  void SetMetadata(const char* key, const char* value);

  // CUPTI entry points (the static trampolines in collector_cupti.cc).
  void OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  void OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                         size_t valid_size);
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

  // The file being written ("" before Start).
  std::string output_path() const;
  const Config& config() const { return config_; }

 private:
  // collector_cupti.cc
  bool StartCupti(std::string* error);
  void EnableActivities(bool enable);
  void ApplyApiFilter();  // REVERIE_API_FILTER=cupti: tell CUPTI to skip the queries
  void StopCuptiCollection();  // flush + disable, for the window end
  void DetachBufferCallbacks();  // CUPTI's buffer callbacks stop reaching this
  // collector_writer.cc
  bool StartWriter(std::string* error);
  void WriterLoop();      // never throws
  void WriterLoopImpl();
  void ProcessPending(std::vector<HostEvent>* host_scratch);
  void DecodeBuffer(const CompletedBuffer& buffer);
  void RequestWriterFlush(bool wait);
  void StopWriter();

  int FlushImpl(bool forced);
  void PushRange(RangeKind kind, const char* name, int phase);
  void NvtxStartEnd(bool start, uint64_t id, const std::string& name);

  void QueryDevicesFromDriver();
  bool InOwnerProcess() const;
  bool Recording() const;  // collecting, in the owner process, window still open
  int64_t Tid();
  // The markers' clock: ours, or CUPTI's when CUPTI could not adopt ours.
  int64_t Now() const;
  void Enqueue(HostEvent&& e);

  const CuptiApi* fake_api_;
  const DriverApi* fake_driver_;
  CuptiApi api_;
  // The GPUs as the driver reports them at Start (device_query.h), for the
  // header; CUPTI's DEVICE records, when they come, refine them.
  std::vector<DeviceRecord> devices_;
  bool cupti_active_ = false;
  bool use_cupti_clock_ = false;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::string unavailable_kinds_;  // activity kinds CUPTI refused, for the header
  std::string api_filter_description_ = "none";  // for the header
  NvtxStrings nvtx_strings_;

  Config config_;
  std::mutex control_mu_;
  std::atomic<State> state_{State::kIdle};
  int64_t pid_ = 0;
  std::string output_path_;  // set by the writer once the file is open

  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<MpmcQueue<CompletedBuffer>> completed_;
  bool allow_null_buffer_ = true;
  HostEventQueue host_events_;

  std::atomic<uint64_t> next_external_id_{1};
  std::atomic<int64_t> next_step_{0};
  std::atomic<int64_t> open_step_{-1};
  std::atomic<bool> window_closed_{false};
  std::atomic<bool> cupti_stopped_{false};

  // Counted on CUPTI's threads, written by the writer.
  std::atomic<int64_t> dropped_records_{0};
  std::atomic<int64_t> pool_exhausted_{0};
  std::atomic<int64_t> fallback_buffers_{0};
  std::atomic<int64_t> buffers_lost_{0};
  std::atomic<int64_t> cupti_errors_{0};

  // Writer hand-off.
  std::thread writer_;
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  std::condition_variable done_cv_;
  bool stop_requested_ = false;    // guarded by wake_mu_
  bool writer_running_ = false;    // guarded by wake_mu_
  uint64_t flush_requested_ = 0;   // guarded by wake_mu_
  uint64_t flush_done_ = 0;        // guarded by wake_mu_
  std::atomic<bool> work_pending_{false};

  // Owned by the writer thread after Start.
  std::unique_ptr<ChunkWriter> file_;
  std::unique_ptr<StepWindow> window_;
  std::unique_ptr<TraceSink> sink_;
  std::unique_ptr<CuptiDecoder> decoder_;
  std::unique_ptr<HostEventProcessor> processor_;
  uint64_t last_write_ns_ = 0;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_COLLECTOR_RUNTIME_H_
