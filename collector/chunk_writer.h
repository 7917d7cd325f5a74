// File: collector/chunk_writer.h
//
// ChunkWriter: the .pb file the collector produces (layout in
// proto/trace.proto): a delimited TraceHeader, then delimited TraceChunks.
//
// Records are encoded straight into the current chunk as they arrive: a
// TraceChunk is just a sequence of fields, and repeated fields may
// interleave, so a record is appended as one length-delimited field and a
// new string as one `strings` field, in the order they were interned. When
// the chunk reaches `chunk_bytes` it is framed and written with one write();
// a crash of the host therefore leaves every chunk written so far intact.
// Close() ends the file with the end marker that proves it complete; a file
// without it (a crash, a failed write) is refused by readers, and
// `reverie import --salvage` keeps its complete chunks.
//
// Invariants:
// - The first chunk's first string is "" (string id 0), and the first chunk
//   is written as soon as the file is opened, so even an empty trace reads.
// - A string id is only handed out after its string was appended to the
//   current chunk; chunks are written in order, so every id a record uses
//   resolves in the concatenated table.
// - Range ids (AddRange's return) are global indexes + 1 in file order.
// - The header occupies a fixed region at offset 0 (EncodeHeaderRegion) and
//   is rewritten in place; chunks start right after it.
// - Counters are written as deltas in the next chunk (readers add them up).
//
// Not thread-safe: owned by the collector's writer thread.
#ifndef REVERIE_COLLECTOR_CHUNK_WRITER_H_
#define REVERIE_COLLECTOR_CHUNK_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <sys/uio.h>

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>

#include "collector/records.h"
#include "collector/trace_encoder.h"
#include "collector/wire.h"
#include "proto/trace_counters.h"

namespace reverie::collector {

class ChunkWriter {
 public:
  struct Options {
    size_t chunk_bytes = 1 << 20;
    size_t header_region_bytes = 8192;
    bool fsync_each_chunk = false;
  };

  ChunkWriter() = default;
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Creates `path` (truncating an old file). When another process of the
  // same job already holds `path` (advisory lock), writes "<stem>.<pid><ext>"
  // instead. On failure returns false and sets `error` to one line.
  bool Open(const std::string& path, const HeaderInfo& header, const Options& options,
            std::string* error);
  bool is_open() const { return fd_ >= 0; }
  // The path actually written (may differ from the requested one, see Open).
  const std::string& path() const { return path_; }

  uint32_t Intern(std::string_view s);

  void AddApiCall(const ApiCallRecord& r) { AddEncoded(kChunkApiCalls, r, EncodeApiCall); }
  void AddGpuActivity(const GpuActivityRecord& r) {
    AddEncoded(kChunkGpuActivities, r, EncodeGpuActivity);
  }
  void AddSync(const SyncRecord& r) { AddEncoded(kChunkSyncs, r, EncodeSync); }
  void AddEventRecord(const EventRecordRecord& r) {
    AddEncoded(kChunkEventRecords, r, EncodeEventRecord);
  }
  void AddStep(const StepRecord& r) { AddEncoded(kChunkSteps, r, EncodeStep); }
  void AddGradientBucket(const GradientBucketRecord& r) {
    AddEncoded(kChunkGradientBuckets, r, EncodeGradientBucket);
  }
  void AddParameter(const ParameterRecord& r) { AddEncoded(kChunkParameters, r, EncodeParameter); }
  void AddThread(const ThreadRecord& r) { AddEncoded(kChunkThreads, r, EncodeThread); }
  void AddProcess(const ProcessRecord& r) { AddEncoded(kChunkProcesses, r, EncodeProcess); }
  // Returns the range's global index + 1 (what a child's `parent` holds).
  uint32_t AddRange(const RangeRecord& r);

  void AddCounter(TraceCounter counter, int64_t delta);

  // Rewrites the header region. Returns false (and counts
  // `header_overflow`) when the new header does not fit.
  bool UpdateHeader(const HeaderInfo& header);

  // Writes the current chunk if it holds anything; `sync` also fsyncs.
  bool FlushChunk(bool sync);
  // Flushes, writes the end marker and closes. Safe to call twice. A
  // writer that failed leaves no end marker: readers refuse the file.
  void Close();

  bool failed() const { return failed_; }
  int64_t bytes_written() const { return offset_; }
  int64_t chunks_written() const { return chunks_written_; }
  int64_t events_added() const { return events_added_; }

 private:
  template <typename R, typename F>
  void AddEncoded(ChunkField field, const R& r, F encode) {
    const size_t at = chunk_.BeginMessage(field);
    encode(r, &chunk_);
    chunk_.EndMessage(at);
    ++events_added_;
    MaybeFlush();
  }
  void MaybeFlush();
  bool WriteAll(const void* data, size_t size, int64_t offset);
  bool WriteEnd();
  bool WriteVec(struct iovec (&parts)[2], int64_t offset);

  int fd_ = -1;
  std::string path_;
  Options options_;
  WireBuffer chunk_;
  std::unordered_map<std::string, uint32_t> strings_;
  std::array<int64_t, kTraceCounterCount> pending_counters_{};  // by TraceCounter
  bool counters_pending_ = false;
  uint32_t next_range_ = 0;
  int64_t offset_ = 0;  // end of the data written so far
  int64_t chunks_written_ = 0;
  int64_t events_added_ = 0;
  bool failed_ = false;
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_CHUNK_WRITER_H_
