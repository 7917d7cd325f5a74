// The Collector's writer thread: takes completed CUPTI buffers and host
// events, decodes them (CuptiDecoder, HostEventProcessor) and writes chunks.
// Everything it touches after StartWriter() is its own; the hand-off with
// other threads is the two queues plus `wake_mu_` for flush/stop requests.
#include <time.h>

#include <chrono>
#include <system_error>

#include "collector/chunk_writer.h"
#include "collector/collector_runtime.h"
#include "collector/cupti_decoder.h"
#include "collector/host_event_processor.h"
#include "collector/step_window.h"
#include "collector/trace_sink.h"

namespace reverie::collector {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(50);
constexpr auto kFlushWaitLimit = std::chrono::seconds(10);
constexpr size_t kBuffersPerRound = 64;

const char* ApiName(void* context, uint32_t domain, uint32_t cbid) {
  const auto* api = static_cast<const CuptiApi*>(context);
  const char* name = nullptr;
  if (api == nullptr || api->GetCallbackName == nullptr ||
      api->GetCallbackName(static_cast<CUpti_CallbackDomain>(domain), cbid, &name) !=
          CUPTI_SUCCESS) {
    return nullptr;
  }
  return name;
}

int64_t RealtimeNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

bool Collector::StartWriter(std::string* error) {
  window_ = std::make_unique<StepWindow>(config_.warmup, config_.steps);
  HeaderInfo header;
  header.producer = "reverie-collector 0.1";
  header.base_time_ns = RealtimeNs() - Now();
  header.metadata.emplace_back("collector.pid", std::to_string(static_cast<long long>(pid_)));
  header.metadata.emplace_back("collector.cupti", cupti_active_ ? "active" : "unavailable");
  if (!api_.library_path.empty()) header.metadata.emplace_back("collector.cupti_library", api_.library_path);
  if (!unavailable_kinds_.empty()) {
    header.metadata.emplace_back("collector.unavailable_activity_kinds", unavailable_kinds_);
  }
  header.metadata.emplace_back("collector.warmup", std::to_string(static_cast<long long>(config_.warmup)));
  header.metadata.emplace_back("collector.steps",
                               std::to_string(static_cast<long long>(config_.steps)));
  header.metadata.emplace_back("collector.clock", use_cupti_clock_ ? "cupti" : "CLOCK_MONOTONIC");
  header.metadata.emplace_back("collector.api_filter", api_filter_description_);
  if (!devices_.empty()) {
    header.devices = devices_;
    header.metadata.emplace_back("collector.device_properties", "driver");
  }

  ChunkWriter::Options options;
  options.chunk_bytes = static_cast<size_t>(config_.chunk_kb) * 1024;
  options.fsync_each_chunk = config_.fsync_each_chunk;
  file_ = std::make_unique<ChunkWriter>();
  if (!file_->Open(config_.OutputPath(pid_), header, options, error)) return false;
  output_path_ = file_->path();
  sink_ = std::make_unique<TraceSink>(file_.get(), window_.get(), header);
  decoder_ = std::make_unique<CuptiDecoder>(sink_.get(), &ApiName, &api_, pid_,
                                            config_.api_filter != ApiFilter::kNone);
  processor_ = std::make_unique<HostEventProcessor>(sink_.get());
  if (!cupti_active_) sink_->Count(TraceCounter::cupti_unavailable, 1);
  last_write_ns_ = MonotonicNowNs();
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    stop_requested_ = false;
    writer_running_ = true;
  }
  try {
    writer_ = std::thread(&Collector::WriterLoop, this);
  } catch (const std::system_error& e) {
    *error = std::string("cannot start the writer thread: ") + e.what();
    std::lock_guard<std::mutex> lock(wake_mu_);
    writer_running_ = false;
    return false;
  }
  return true;
}

void Collector::DecodeBuffer(const CompletedBuffer& buffer) {
  CUpti_Activity* record = nullptr;
  while (true) {
    const CUptiResult r = api_.ActivityGetNextRecord(buffer.data, buffer.valid_bytes, &record);
    if (r == CUPTI_SUCCESS) {
      decoder_->Decode(record);
      continue;
    }
    if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) sink_->Count(TraceCounter::cupti_buffer_parse_error, 1);
    break;
  }
}

void Collector::ProcessPending(std::vector<HostEvent>* host) {
  while (true) {
    CompletedBuffer taken[kBuffersPerRound];
    size_t n = 0;
    while (n < kBuffersPerRound && completed_->TryPop(&taken[n])) ++n;
    // Host events after the buffers (step_window.h explains why).
    host_events_.Drain(host);
    for (const HostEvent& e : *host) processor_->Process(e);
    for (size_t i = 0; i < n; ++i) {
      DecodeBuffer(taken[i]);
      pool_->Release(taken[i].data);
      // A kernel's record precedes its launch's in a thread's buffer: most
      // records held by the window are placed by the end of their buffer.
      sink_->ResolveHeld(/*final=*/false);
    }
    if (n < kBuffersPerRound) break;
  }
  decoder_->ResolvePending(/*final=*/false);
  sink_->Count(TraceCounter::cupti_dropped_records, dropped_records_.exchange(0));
  sink_->Count(TraceCounter::cupti_buffer_pool_exhausted, pool_exhausted_.exchange(0));
  sink_->Count(TraceCounter::cupti_buffer_malloc_fallback, fallback_buffers_.exchange(0));
  sink_->Count(TraceCounter::cupti_buffers_lost, buffers_lost_.exchange(0));
  sink_->Count(TraceCounter::cupti_fatal_error, cupti_errors_.exchange(0));
  sink_->Count(TraceCounter::host_events_dropped, host_events_.TakeOverflow());
}

void Collector::WriterLoop() {
  try {
    WriterLoopImpl();
    return;
  } catch (...) {
    // Nothing may escape into the host (std::terminate). Keep recycling
    // CUPTI's buffers so it never runs dry, drop the data, and finish.
    WarnLine("warning: the trace writer failed (out of memory?); the trace ends here");
  }
  std::vector<HostEvent> host;
  while (true) {
    bool stop = false;
    {
      std::unique_lock<std::mutex> lock(wake_mu_);
      wake_cv_.wait_for(lock, kPollPeriod, [&] { return stop_requested_; });
      stop = stop_requested_;
      flush_done_ = flush_requested_;
      done_cv_.notify_all();
    }
    CompletedBuffer b;
    while (completed_->TryPop(&b)) pool_->Release(b.data);
    host_events_.Drain(&host);
    if (stop) break;
  }
  std::lock_guard<std::mutex> lock(wake_mu_);
  writer_running_ = false;
  done_cv_.notify_all();
}

void Collector::WriterLoopImpl() {
  std::vector<HostEvent> host;
  uint64_t flushed_gen = 0;
  while (true) {
    bool stop = false;
    uint64_t flush_gen = 0;
    {
      std::unique_lock<std::mutex> lock(wake_mu_);
      wake_cv_.wait_for(lock, kPollPeriod, [&] {
        return stop_requested_ || flush_requested_ > flushed_gen ||
               work_pending_.load(std::memory_order_acquire);
      });
      stop = stop_requested_;
      flush_gen = flush_requested_;
    }
    work_pending_.store(false, std::memory_order_release);
    ProcessPending(&host);
    if (stop) break;
    const uint64_t now = MonotonicNowNs();
    if (flush_gen > flushed_gen) {
      file_->FlushChunk(/*sync=*/true);
      last_write_ns_ = now;
      flushed_gen = flush_gen;
      std::lock_guard<std::mutex> lock(wake_mu_);
      flush_done_ = flush_gen;
      done_cv_.notify_all();
    } else if (now - last_write_ns_ > static_cast<uint64_t>(config_.flush_interval_ms) * 1000000) {
      // Bounded loss on a crash: nothing stays unwritten for long.
      file_->FlushChunk(/*sync=*/false);
      last_write_ns_ = now;
    }
  }
  // Final round: Stop() flushed CUPTI before asking us to stop.
  ProcessPending(&host);
  decoder_->ResolvePending(/*final=*/true);
  sink_->ResolveHeld(/*final=*/true);
  processor_->Finish(Now());
  if (file_->failed()) WarnLine("warning: writing " + file_->path() + " failed; the trace is truncated");
  file_->Close();
  if (config_.verbose) {
    WarnLine("wrote " + file_->path() + " (" + std::to_string(file_->bytes_written()) + " bytes, " +
             std::to_string(file_->events_added()) + " records)");
  }
  std::lock_guard<std::mutex> lock(wake_mu_);
  writer_running_ = false;
  flush_done_ = flush_requested_;
  done_cv_.notify_all();
}

void Collector::RequestWriterFlush(bool wait) {
  uint64_t gen = 0;
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    if (!writer_running_) return;
    gen = ++flush_requested_;
  }
  wake_cv_.notify_one();
  if (!wait) return;
  std::unique_lock<std::mutex> lock(wake_mu_);
  done_cv_.wait_for(lock, kFlushWaitLimit, [&] { return flush_done_ >= gen || !writer_running_; });
}

void Collector::StopWriter() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    stop_requested_ = true;
  }
  wake_cv_.notify_one();
  if (writer_.joinable()) writer_.join();
}

}  // namespace reverie::collector
