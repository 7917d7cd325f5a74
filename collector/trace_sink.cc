#include "collector/trace_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <type_traits>
#include <utility>

namespace reverie::collector {

std::string ProcThreadName(int64_t pid, int64_t tid) {
  const std::string path =
      "/proc/" + std::to_string(static_cast<long long>(pid)) + "/task/" +
      std::to_string(static_cast<long long>(tid)) + "/comm";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return "";
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

TraceSink::TraceSink(ChunkWriter* writer, StepWindow* window, HeaderInfo header,
                     ThreadNameFn thread_name)
    : writer_(writer), window_(window), header_(std::move(header)), thread_name_(thread_name) {}

void TraceSink::NoteThread(int64_t pid, int64_t tid) {
  if (pids_.insert(pid).second) {
    ProcessRecord p;
    p.pid = pid;
    p.name = thread_name_(pid, pid);
    writer_->AddProcess(p);
  }
  const uint64_t key = (static_cast<uint64_t>(pid) << 32) ^ static_cast<uint64_t>(tid);
  if (threads_.insert(key).second) {
    ThreadRecord t;
    t.pid = pid;
    t.tid = tid;
    t.name = thread_name_(pid, tid);
    writer_->AddThread(t);
  }
}

void TraceSink::ApiCall(const ApiCallRecord& r) {
  if (!window_->KeepApiCall(r.correlation_id, r.start_ns, r.end_ns)) return Dropped();
  NoteThread(r.pid, r.tid);
  writer_->AddApiCall(r);
}

void TraceSink::FilteredApiCall(uint64_t correlation_id, int64_t start_ns, int64_t end_ns) {
  if (window_->KeepApiCall(correlation_id, start_ns, end_ns)) Count(TraceCounter::api_calls_filtered, 1);
}

void TraceSink::GpuActivity(const GpuActivityRecord& r) {
  switch (window_->Judge(r.correlation_id, r.start_ns)) {
    case StepWindow::Decision::kKeep: return writer_->AddGpuActivity(r);
    case StepWindow::Decision::kDrop: return Dropped();
    case StepWindow::Decision::kUndecided: break;
  }
  Held h;
  h.gpu = r;
  Hold(std::move(h));
}

void TraceSink::Sync(const SyncRecord& r) {
  if (!window_->KeepSpan(r.start_ns, r.end_ns)) return Dropped();
  if (r.tid != 0) NoteThread(r.pid, r.tid);
  writer_->AddSync(r);
}

void TraceSink::EventRecord(const EventRecordRecord& r) {
  switch (window_->Judge(r.correlation_id, 0)) {
    case StepWindow::Decision::kKeep: return writer_->AddEventRecord(r);
    case StepWindow::Decision::kDrop: return Dropped();
    case StepWindow::Decision::kUndecided: break;
  }
  Held h;
  h.is_event = true;
  h.event = r;
  Hold(std::move(h));
}

void TraceSink::Write(const Held& h) {
  if (h.is_event) {
    writer_->AddEventRecord(h.event);
  } else {
    writer_->AddGpuActivity(h.gpu);
  }
}

void TraceSink::Hold(Held h) {
  if (held_.size() >= kMaxHeld) {
    // Bounded memory: the oldest is judged with what is known now.
    const Held& oldest = held_.front();
    Count(TraceCounter::window_hold_overflow, 1);
    if (window_->KeepAtEnd(CorrelationOf(oldest), TimeOf(oldest))) {
      Write(oldest);
    } else {
      Dropped();
    }
    held_.pop_front();
  }
  held_.push_back(std::move(h));
}

void TraceSink::ResolveHeld(bool final) {
  if (held_.empty()) return;
  std::deque<Held> still;
  for (Held& h : held_) {
    const uint64_t corr = CorrelationOf(h);
    const int64_t t = TimeOf(h);
    bool keep = false;
    if (final) {
      keep = window_->KeepAtEnd(corr, t);
    } else {
      const StepWindow::Decision d = window_->Judge(corr, t);
      if (d == StepWindow::Decision::kUndecided) {
        still.push_back(std::move(h));
        continue;
      }
      keep = d == StepWindow::Decision::kKeep;
    }
    if (keep) {
      Write(h);
    } else {
      Dropped();
    }
  }
  held_.swap(still);
}

uint32_t TraceSink::Range(const RangeRecord& r) {
  NoteThread(r.pid, r.tid);
  return writer_->AddRange(r);
}

void TraceSink::Step(const StepRecord& r) {
  if (!window_->WantStep(r.index)) return;  // not an event of the window: not counted
  NoteThread(r.pid, r.tid);
  writer_->AddStep(r);
}

void TraceSink::Device(const DeviceRecord& d) {
  for (DeviceRecord& e : header_.devices) {
    if (e.id != d.id) continue;
    // CUPTI's record after the driver's: what CUPTI reports wins, what it
    // leaves out (memory clock, bus width) stays.
    const auto take = [](auto& field, const auto& value) {
      if (value != std::decay_t<decltype(value)>{}) field = value;
    };
    take(e.name, d.name);
    take(e.vendor, d.vendor);
    take(e.sm_count, d.sm_count);
    take(e.compute_major, d.compute_major);
    take(e.compute_minor, d.compute_minor);
    take(e.total_memory_bytes, d.total_memory_bytes);
    take(e.sm_clock_khz, d.sm_clock_khz);
    take(e.memory_clock_khz, d.memory_clock_khz);
    take(e.memory_bus_width_bits, d.memory_bus_width_bits);
    take(e.memory_bandwidth_gbps, d.memory_bandwidth_gbps);
    take(e.max_threads_per_sm, d.max_threads_per_sm);
    take(e.registers_per_sm, d.registers_per_sm);
    take(e.shared_memory_per_sm_bytes, d.shared_memory_per_sm_bytes);
    take(e.warp_size, d.warp_size);
    writer_->UpdateHeader(header_);
    return;
  }
  header_.devices.push_back(d);
  writer_->UpdateHeader(header_);
}

void TraceSink::SetMetadata(const std::string& key, const std::string& value) {
  if (key == "framework") {
    header_.framework = value;
  } else {
    bool found = false;
    for (auto& [k, v] : header_.metadata) {
      if (k == key) {
        v = value;
        found = true;
      }
    }
    if (!found) header_.metadata.emplace_back(key, value);
  }
  writer_->UpdateHeader(header_);
}

}  // namespace reverie::collector
