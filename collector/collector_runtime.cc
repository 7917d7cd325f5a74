#include "collector/collector_runtime.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/chunk_writer.h"
#include "collector/cupti_decoder.h"
#include "collector/host_event_processor.h"
#include "collector/step_window.h"
#include "collector/trace_sink.h"
#include "reverie/collector.h"

namespace reverie::collector {
namespace {

// CUPTI keeps one external-id stack per thread; this mirrors its depth so
// that a pop never reaches CUPTI without a matching push (markers may start
// or stop being recorded between a push and its pop).
thread_local int t_cupti_depth = 0;
thread_local int64_t t_tid = 0;
thread_local int64_t t_tid_pid = 0;

PhaseValue ToPhase(int phase) {
  return phase >= 0 && phase <= 5 ? static_cast<PhaseValue>(phase) : PhaseValue::kUnknown;
}

}  // namespace

uint64_t MonotonicNowNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void WarnLine(const std::string& message) {
  const std::string line = "reverie-collector: " + message + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(2, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

Collector::Collector(const CuptiApi* fake_api, const DriverApi* fake_driver)
    : fake_api_(fake_api), fake_driver_(fake_driver) {
  const std::vector<std::string> errors = config_.LoadFromEnvironment();
  if (!errors.empty()) WarnLine("warning: ignoring " + errors.front());
}

Collector::~Collector() {
  // Only test instances are destroyed; they are stopped first.
  if (state() == State::kCollecting || state() == State::kHostOnly) Stop();
  DetachBufferCallbacks();
}

Collector& Collector::Global() {
  static Collector* global = new Collector();  // leaked on purpose
  return *global;
}

bool Collector::InOwnerProcess() const { return pid_ == static_cast<int64_t>(::getpid()); }

bool Collector::IsCollecting() const {
  const State s = state();
  return (s == State::kCollecting || s == State::kHostOnly) && InOwnerProcess();
}

bool Collector::Recording() const {
  return IsCollecting() && !window_closed_.load(std::memory_order_relaxed);
}

int64_t Collector::Tid() {
  if (t_tid == 0 || t_tid_pid != pid_) {
    t_tid = static_cast<int64_t>(::syscall(SYS_gettid));
    t_tid_pid = pid_;
  }
  return t_tid;
}

int64_t Collector::Now() const {
  uint64_t t = 0;
  if (use_cupti_clock_ && api_.GetTimestamp != nullptr && api_.GetTimestamp(&t) == CUPTI_SUCCESS) {
    return static_cast<int64_t>(t);
  }
  return static_cast<int64_t>(MonotonicNowNs());
}

std::string Collector::output_path() const { return output_path_; }

int Collector::Configure(const char* key, const char* value) {
  if (key == nullptr || value == nullptr) return REVERIE_BAD_ARGUMENT;
  std::lock_guard<std::mutex> lock(control_mu_);
  if (state() != State::kIdle) return REVERIE_ALREADY_STARTED;
  std::string error;
  return config_.Set(key, value, &error) ? REVERIE_OK : REVERIE_BAD_ARGUMENT;
}

int Collector::Start(Mode mode) {
  std::lock_guard<std::mutex> lock(control_mu_);
  switch (state()) {
    case State::kCollecting: return InOwnerProcess() ? REVERIE_OK : REVERIE_NOT_COLLECTING;
    case State::kHostOnly: return InOwnerProcess() ? REVERIE_HOST_ONLY : REVERIE_NOT_COLLECTING;
    case State::kFailed:
    case State::kStopped: return REVERIE_NOT_COLLECTING;
    case State::kIdle: break;
  }
  if (config_.disable) {
    state_.store(State::kFailed, std::memory_order_release);
    return REVERIE_NOT_COLLECTING;
  }
  pid_ = static_cast<int64_t>(::getpid());
  // Injection runs inside cuInit, where the driver must not be re-entered;
  // there CUPTI's DEVICE records come with the first context anyway.
  if (mode != Mode::kInjection) QueryDevicesFromDriver();

  const size_t buffer_bytes = static_cast<size_t>(config_.buffer_kb) * 1024;
  size_t count = static_cast<size_t>(config_.buffer_mb) * 1024 * 1024 / buffer_bytes;
  if (count < 2) count = 2;
  pool_ = std::make_unique<BufferPool>(buffer_bytes, count);
  completed_ = std::make_unique<MpmcQueue<CompletedBuffer>>(2 * count + 16);

  std::string cupti_error;
  cupti_active_ = pool_->ok() && StartCupti(&cupti_error);
  if (!pool_->ok()) cupti_error = "cannot allocate the CUPTI buffer pool";
  if (!cupti_active_ && mode != Mode::kApi) {
    WarnLine("warning: CUPTI unavailable (" + cupti_error + "); not collecting");
    state_.store(State::kFailed, std::memory_order_release);
    return REVERIE_NOT_COLLECTING;
  }
  std::string writer_error;
  if (!StartWriter(&writer_error)) {
    if (cupti_active_) {
      EnableActivities(false);
      if (api_.Unsubscribe != nullptr && subscriber_ != nullptr) api_.Unsubscribe(subscriber_);
      cupti_active_ = false;
    }
    WarnLine("warning: " + writer_error + "; not collecting");
    state_.store(State::kFailed, std::memory_order_release);
    return REVERIE_NOT_COLLECTING;
  }
  if (!cupti_active_) {
    WarnLine("warning: CUPTI unavailable (" + cupti_error + "); recording host markers only to " +
             output_path_);
    state_.store(State::kHostOnly, std::memory_order_release);
    return REVERIE_HOST_ONLY;
  }
  state_.store(State::kCollecting, std::memory_order_release);
  return REVERIE_OK;
}

void Collector::QueryDevicesFromDriver() {
  // Before CUPTI is subscribed, so these queries are not traced.
  DriverApi driver;
  if (fake_driver_ != nullptr) {
    driver = *fake_driver_;
  } else if (fake_api_ != nullptr || !LoadLoadedDriver(&driver)) {
    return;
  }
  devices_ = QueryDevices(driver);
}

int Collector::Stop() {
  {
    std::lock_guard<std::mutex> lock(control_mu_);
    if (!IsCollecting()) return REVERIE_NOT_COLLECTING;
    state_.store(State::kStopped, std::memory_order_release);
  }
  // No lock held: flushing re-enters OnBufferCompleted on this thread. The
  // forced flush also runs when the window end already disabled CUPTI: the
  // last steps' records may still sit in CUPTI's buffers.
  if (cupti_active_) {
    api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (!cupti_stopped_.exchange(true)) EnableActivities(false);
  }
  StopWriter();
  return REVERIE_OK;
}

int Collector::Flush() { return FlushImpl(/*forced=*/false); }

int Collector::FlushImpl(bool forced) {
  if (!IsCollecting()) return REVERIE_NOT_COLLECTING;
  if (cupti_active_ && !cupti_stopped_.load()) {
    api_.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  }
  RequestWriterFlush(/*wait=*/true);
  return REVERIE_OK;
}

void Collector::Enqueue(HostEvent&& e) {
  if (!host_events_.Push(std::move(e))) return;
  work_pending_.store(true, std::memory_order_release);
}

void Collector::LayerPush(const char* name, int phase) {
  PushRange(RangeKind::kLayer, name, phase);
}

void Collector::RangePush(const char* name, int phase) {
  PushRange(RangeKind::kUserAnnotation, name, phase);
}

void Collector::PushRange(RangeKind kind, const char* name, int phase) {
  if (!Recording()) return;
  HostEvent e;
  e.type = HostEventType::kPush;
  e.kind = kind;
  e.phase = ToPhase(phase);
  e.pid = pid_;
  e.tid = Tid();
  e.time_ns = Now();
  e.id = next_external_id_.fetch_add(1, std::memory_order_relaxed);
  e.name = name != nullptr ? name : "";
  if (cupti_active_ && !cupti_stopped_.load(std::memory_order_relaxed) &&
      api_.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, e.id) ==
          CUPTI_SUCCESS) {
    ++t_cupti_depth;
  }
  Enqueue(std::move(e));
}

void Collector::LayerPop() {
  if (t_cupti_depth > 0 && cupti_active_) {
    uint64_t last = 0;
    api_.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    --t_cupti_depth;
  }
  if (!Recording()) return;
  HostEvent e;
  e.type = HostEventType::kPop;
  e.pid = pid_;
  e.tid = Tid();
  e.time_ns = Now();
  Enqueue(std::move(e));
}

void Collector::NvtxStartEnd(bool start, uint64_t id, const std::string& name) {
  if (!Recording()) return;
  HostEvent e;
  e.type = start ? HostEventType::kStart : HostEventType::kEnd;
  e.kind = RangeKind::kUserAnnotation;
  e.pid = pid_;
  e.tid = Tid();
  e.time_ns = Now();
  e.id = id;
  e.name = name;
  Enqueue(std::move(e));
}

void Collector::StepBegin() {
  if (!Recording()) {
    // The first step after the window: its predecessors' GPU work has
    // been handed over by now, so CUPTI can stop costing the host anything.
    if (IsCollecting() && window_closed_.load() && cupti_active_ &&
        !cupti_stopped_.exchange(true)) {
      StopCuptiCollection();
    }
    return;
  }
  HostEvent e;
  e.type = HostEventType::kStepBegin;
  e.pid = pid_;
  e.tid = Tid();
  e.time_ns = Now();
  const int64_t index = next_step_.fetch_add(1);
  open_step_.store(index);
  e.id = static_cast<uint64_t>(index);
  Enqueue(std::move(e));
}

void Collector::StepEnd() {
  if (!Recording()) return;
  HostEvent e;
  e.type = HostEventType::kStepEnd;
  e.pid = pid_;
  e.tid = Tid();
  e.time_ns = Now();
  const int64_t index = open_step_.exchange(-1);
  e.id = static_cast<uint64_t>(index);  // -1 becomes "no such step" for the processor
  Enqueue(std::move(e));
  if (index >= 0 && config_.steps > 0 && index == config_.warmup + config_.steps - 1) {
    window_closed_.store(true);
    RequestWriterFlush(/*wait=*/false);
  }
}

void Collector::CommBucket(int32_t index, int64_t bytes, const char* const* names, int32_t count) {
  if (!IsCollecting()) return;
  HostEvent e;
  e.type = HostEventType::kBucket;
  e.index = index;
  e.bytes = bytes;
  for (int32_t i = 0; names != nullptr && i < count; ++i) {
    e.names.emplace_back(names[i] != nullptr ? names[i] : "");
  }
  Enqueue(std::move(e));
}

void Collector::Parameter(const char* name, const char* layer, int64_t bytes, const char* dtype) {
  if (!IsCollecting()) return;
  HostEvent e;
  e.type = HostEventType::kParameter;
  e.name = name != nullptr ? name : "";
  e.layer = layer != nullptr ? layer : "";
  e.dtype = dtype != nullptr ? dtype : "";
  e.bytes = bytes;
  Enqueue(std::move(e));
}

void Collector::SetMetadata(const char* key, const char* value) {
  if (!IsCollecting() || key == nullptr) return;
  HostEvent e;
  e.type = HostEventType::kMetadata;
  e.name = key;
  e.layer = value != nullptr ? value : "";
  Enqueue(std::move(e));
}

}  // namespace reverie::collector
