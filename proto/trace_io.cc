#include "proto/trace_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/parallel.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "proto/trace_validate.h"

namespace reverie {
namespace {

using google::protobuf::RepeatedPtrField;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::CopyingOutputStream;
using google::protobuf::io::CopyingOutputStreamAdaptor;
using google::protobuf::io::FileInputStream;

// Writes to a file descriptor, whole buffers at a time. libprotobuf 3.21's
// FileOutputStream drops its block_size argument and writes 8 KiB a call
// (994 write calls for df_index_resolver's 8 MB .pb, 10,000 for 85 MB), so
// WriteTrace gives the adaptor its block size itself.
class FdOutput final : public CopyingOutputStream {
 public:
  explicit FdOutput(int fd) : fd_(fd) {}
  bool Write(const void* buffer, int size) override {
    const char* p = static_cast<const char*>(buffer);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(size));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        errno_ = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
      size -= static_cast<int>(n);
    }
    return true;
  }
  int error() const { return errno_; }

 private:
  int fd_;
  int errno_ = 0;
};

bool WriteDelimited(const google::protobuf::MessageLite& m, CodedOutputStream* out) {
  const size_t size = m.ByteSizeLong();
  if (size > static_cast<size_t>(INT32_MAX)) return false;
  out->WriteVarint32(static_cast<uint32_t>(size));
  return m.SerializeWithCachedSizes(out), !out->HadError();
}

// Records the end marker counts: every repeated field but strings/counters.
uint64_t CountRecords(const proto::TraceChunk& c) {
  return static_cast<uint64_t>(c.processes_size()) + c.threads_size() + c.api_calls_size() +
         c.gpu_activities_size() + c.syncs_size() + c.event_records_size() + c.ranges_size() +
         c.steps_size() + c.collectives_size() + c.gradient_buckets_size() +
         c.parameters_size() + c.flows_size() + c.memory_events_size();
}

// One TraceChunk written straight from the trace's own records: the bytes
// libprotobuf writes for a chunk holding copies of them (its fields in number
// order, each element length-delimited), without copying a record. Copying
// every record into a chunk message took a third of `reverie import`.
class ChunkWriter {
 public:
  // The whole of a repeated field (strings: field 1).
  template <typename T>
  void AddAll(int field, const RepeatedPtrField<T>& src) {
    int pos = 0;
    size_t unlimited = src.size();
    Take(field, src, &pos, &unlimited);
  }

  // Up to `*budget` elements of `src` from `*pos` on.
  template <typename T>
  void Take(int field, const RepeatedPtrField<T>& src, int* pos, size_t* budget) {
    Part part{field, {}, {}};
    for (; *pos < src.size() && *budget > 0; ++*pos, --*budget) {
      if constexpr (std::is_same_v<T, std::string>) {
        part.strings.push_back(&src.Get(*pos));
      } else {
        part.messages.push_back(&src.Get(*pos));
      }
    }
    // The end marker's count, as CountRecords: every field but strings and counters.
    if (field != proto::TraceChunk::kCountersFieldNumber) records_ += part.messages.size();
    if (!part.strings.empty() || !part.messages.empty()) parts_.push_back(std::move(part));
  }

  uint64_t records() const { return records_; }

  // As WriteDelimited: the size, then the fields in number order.
  bool Write(CodedOutputStream* out) {
    std::sort(parts_.begin(), parts_.end(),
              [](const Part& a, const Part& b) { return a.field < b.field; });
    size_t body = 0;
    for (const Part& p : parts_) {
      const size_t tag = CodedOutputStream::VarintSize32(Tag(p.field));
      for (const std::string* s : p.strings) body += Element(tag, s->size());
      for (const google::protobuf::MessageLite* m : p.messages) {
        body += Element(tag, m->ByteSizeLong());  // caches the sizes Serialize uses
      }
    }
    if (body > static_cast<size_t>(INT32_MAX)) return false;
    out->WriteVarint32(static_cast<uint32_t>(body));
    for (const Part& p : parts_) {
      for (const std::string* s : p.strings) {
        out->WriteTag(Tag(p.field));
        out->WriteVarint32(static_cast<uint32_t>(s->size()));
        out->WriteRaw(s->data(), static_cast<int>(s->size()));
      }
      for (const google::protobuf::MessageLite* m : p.messages) {
        out->WriteTag(Tag(p.field));
        out->WriteVarint32(static_cast<uint32_t>(m->GetCachedSize()));
        m->SerializeWithCachedSizes(out);
      }
    }
    return !out->HadError();
  }

 private:
  struct Part {
    int field;
    std::vector<const std::string*> strings;
    std::vector<const google::protobuf::MessageLite*> messages;
  };
  static uint32_t Tag(int field) { return static_cast<uint32_t>(field) << 3 | 2; }  // delimited
  static size_t Element(size_t tag_size, size_t n) {
    return tag_size + CodedOutputStream::VarintSize64(n) + n;
  }

  std::vector<Part> parts_;
  uint64_t records_ = 0;
};

// The trace's records cut into chunks of about `per_chunk` events, in the
// order they are written.
std::vector<ChunkWriter> PlanChunks(const proto::TraceChunk& all, size_t per_chunk) {
  using C = proto::TraceChunk;
  int api = 0, gpu = 0, sync = 0, ev = 0, range = 0, step = 0, coll = 0, flow = 0, mem = 0;
  if (per_chunk == 0) per_chunk = 1;
  std::vector<ChunkWriter> chunks;
  while (true) {
    const bool first = chunks.empty();
    ChunkWriter chunk;
    if (first) {
      // The first chunk carries the string table and the small tables, so
      // a reader that stops early still resolves every name it has seen.
      chunk.AddAll(C::kStringsFieldNumber, all.strings());
      chunk.AddAll(C::kProcessesFieldNumber, all.processes());
      chunk.AddAll(C::kThreadsFieldNumber, all.threads());
      chunk.AddAll(C::kCountersFieldNumber, all.counters());
      chunk.AddAll(C::kGradientBucketsFieldNumber, all.gradient_buckets());
      chunk.AddAll(C::kParametersFieldNumber, all.parameters());
    }
    size_t budget = per_chunk;
    chunk.Take(C::kRangesFieldNumber, all.ranges(), &range, &budget);
    chunk.Take(C::kStepsFieldNumber, all.steps(), &step, &budget);
    chunk.Take(C::kApiCallsFieldNumber, all.api_calls(), &api, &budget);
    chunk.Take(C::kGpuActivitiesFieldNumber, all.gpu_activities(), &gpu, &budget);
    chunk.Take(C::kSyncsFieldNumber, all.syncs(), &sync, &budget);
    chunk.Take(C::kEventRecordsFieldNumber, all.event_records(), &ev, &budget);
    chunk.Take(C::kCollectivesFieldNumber, all.collectives(), &coll, &budget);
    chunk.Take(C::kFlowsFieldNumber, all.flows(), &flow, &budget);
    chunk.Take(C::kMemoryEventsFieldNumber, all.memory_events(), &mem, &budget);
    if (budget == per_chunk && !first) break;  // nothing left
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

// Collects what libprotobuf would print on stderr ("[libprotobuf ERROR ...]
// String field ... contains invalid UTF-8 data") while a file is parsed, so
// that the reader reports it in its own one-line error instead (D11).
// The handler is process-wide and traces may be read on several threads at
// once (whatif::LoadAndSimulateAll): the first capture installs it, the last
// one to end puts back what was there; each thread keeps its own message.
class ProtobufLogCapture {
 public:
  ProtobufLogCapture() {
    Last().clear();
    std::lock_guard<std::mutex> lock(Mu());
    if (Installed()++ == 0) Previous() = google::protobuf::SetLogHandler(&Handle);
  }
  ~ProtobufLogCapture() {
    std::lock_guard<std::mutex> lock(Mu());
    if (--Installed() == 0) google::protobuf::SetLogHandler(Previous());
  }
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // Why the last parse failed, in our words ("" when protobuf said nothing).
  static std::string Why() {
    const std::string& m = Last();
    if (m.empty()) return "";
    if (m.find("invalid UTF-8") != std::string::npos) {
      const size_t q = m.find('\'');
      const size_t e = q == std::string::npos ? q : m.find('\'', q + 1);
      return e == std::string::npos
                 ? "a string is not valid UTF-8"
                 : absl::StrCat("a string is not valid UTF-8 (", m.substr(q + 1, e - q - 1), ")");
    }
    return m.substr(0, std::min<size_t>(m.find('\n'), 200));
  }

 private:
  static std::string& Last() {
    static thread_local std::string last;
    return last;
  }
  static void Handle(google::protobuf::LogLevel, const char*, int, const std::string& message) {
    Last() = message;
  }
  static std::mutex& Mu() {
    static std::mutex mu;
    return mu;
  }
  static int& Installed() {
    static int n = 0;
    return n;
  }
  static google::protobuf::LogHandler*& Previous() {
    static google::protobuf::LogHandler* previous = nullptr;
    return previous;
  }
};

}  // namespace

absl::Status WriteTrace(const Trace& trace, const std::string& path,
                        const WriteOptions& options) {
  REVERIE_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Open(path));
  bool ok = true;
  {
    // Written 1 MiB at a time (8 KiB was 10,000 write calls for an 85 MB
    // trace).
    FdOutput fd_out(file->fd());
    CopyingOutputStreamAdaptor zero_copy(&fd_out, 1 << 20);
    CodedOutputStream out(&zero_copy);
    // Map fields (the header's metadata) in key order: the same trace gives
    // the same bytes, whichever process or thread count produced it.
    out.SetSerializationDeterministic(true);
    // Whatever schema the trace was read with, this file is written in ours.
    proto::TraceHeader header = trace.header();
    header.set_schema_version(kTraceSchemaVersion);
    ok = WriteDelimited(header, &out);

    std::vector<ChunkWriter> chunks = PlanChunks(trace.events(), options.events_per_chunk);
    // Chunks are serialized a batch at a time on every worker, each into a
    // buffer of its own (so no more than a batch is held), and written in
    // order: the bytes of one thread.
    const int workers = WorkerCount(options.threads, chunks.size());
    const size_t batch = 2 * static_cast<size_t>(workers);
    std::vector<std::string> bytes(batch);
    std::vector<char> written(batch);
    uint64_t records = 0;
    for (size_t first = 0; ok && first < chunks.size(); first += batch) {
      const size_t n = std::min(batch, chunks.size() - first);
      ParallelForRethrowing(n, workers, [&](size_t i) {
        bytes[i].clear();
        google::protobuf::io::StringOutputStream buffer(&bytes[i]);
        CodedOutputStream chunk_out(&buffer);
        chunk_out.SetSerializationDeterministic(true);
        written[i] = chunks[first + i].Write(&chunk_out);
      });
      for (size_t i = 0; i < n && ok; ++i) {
        ok = written[i] != 0;
        out.WriteRaw(bytes[i].data(), static_cast<int>(bytes[i].size()));
        records += chunks[first + i].records();
      }
    }
    // The end marker proves the file complete (trace.proto).
    proto::TraceChunk chunk;
    chunk.mutable_end()->set_chunks(chunks.size());
    chunk.mutable_end()->set_records(records);
    ok = ok && WriteDelimited(chunk, &out);
    out.Trim();
    ok = ok && !out.HadError() && zero_copy.Flush();
    if (!ok) {
      errno = fd_out.error();
      file->Fail(absl::DataLossError(absl::StrCat(
          path, ": write failed", errno != 0 ? absl::StrCat(": ", std::strerror(errno)) : "")));
    }
  }
  return file->Commit();
}

bool LooksLikeReverieTrace(std::string_view first_bytes) {
  // varint length, then field 1 (magic, wire type 2) = 0x0a, its length, magic.
  size_t i = 0;
  while (i < first_bytes.size() && i < 5 && (first_bytes[i] & 0x80)) ++i;
  ++i;
  const std::string_view magic = kTraceMagic;
  if (first_bytes.size() < i + 2 + magic.size()) return false;
  if (first_bytes[i] != 0x0a || static_cast<size_t>(first_bytes[i + 1]) != magic.size()) {
    return false;
  }
  return first_bytes.substr(i + 2, magic.size()) == magic;
}

namespace {

// Read 1 MiB at a time (the default, 8 KiB, was 994 read calls for an 8 MB
// .pb).
constexpr int kReadBlock = 1 << 20;

// A .pb file being read: one framed message at a time.
class Reader {
 public:
  explicit Reader(int fd) : raw_(fd, kReadBlock) {
    raw_.SetCloseOnDelete(true);
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) file_size_ = st.st_size;
  }

  // kCut: the message runs past the end of the file (a truncated file).
  enum Result { kOk, kEof, kCut, kBad };
  // Reads the next framed message into *m.
  Result Next(google::protobuf::MessageLite* m) {
    // A fresh CodedInputStream per message: its byte limit applies per chunk.
    CodedInputStream in(&raw_);
    in.SetTotalBytesLimit(INT32_MAX);
    uint32_t size = 0;
    const int64_t at = offset_;
    last_at_ = at;
    if (!in.ReadVarint32(&size)) {
      const bool eof = in.CurrentPosition() == 0;
      offset_ += in.CurrentPosition();
      return eof ? kEof : kCut;
    }
    const int64_t end = offset_ + in.CurrentPosition() + size;
    const auto limit = in.PushLimit(static_cast<int>(size));
    const bool ok = m->ParseFromCodedStream(&in) && in.BytesUntilLimit() == 0;
    in.PopLimit(limit);
    offset_ += in.CurrentPosition();
    if (ok) return kOk;
    return file_size_ >= 0 && end > file_size_ ? kCut : kBad;
  }

  // Whether any byte is left.
  bool AtEnd() {
    const void* data = nullptr;
    int size = 0;
    while (raw_.Next(&data, &size)) {
      if (size > 0) return false;
    }
    return true;
  }

  int64_t last_at() const { return last_at_; }

 private:
  FileInputStream raw_;
  int64_t file_size_ = -1;  // unknown for a pipe
  int64_t offset_ = 0;
  int64_t last_at_ = 0;
};

std::string ParseProblem() {
  const std::string why = ProtobufLogCapture::Why();
  return why.empty() ? "corrupt data" : why;
}

// Text from the file, fit for a one-line message: control characters (a
// newline) become '?', and at most 200 bytes are kept.
std::string Printable(std::string_view s) {
  std::string out(s.substr(0, 200));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  if (s.size() > 200) out += "...";
  return out;
}

// How to get a complete file again, for the messages below. The recorded
// source path is the file's own text: pasted into the command quoted for a
// shell, and only when it is printable and not too long (issue 29, D31: a
// path holding "; curl ... | sh" became part of the suggested command).
std::string Remedy(const proto::TraceHeader& h, bool salvaging) {
  const std::string& src = h.source_path();
  const bool pasteable = !src.empty() && src.size() <= 1024 && EscapeControl(src) == src;
  const std::string again =
      src.empty()  ? std::string("record it again")
      : pasteable  ? absl::StrCat("import it again (reverie import ", ShellQuote(src), " -o OUT.pb)")
                   : absl::StrCat("import its source again (recorded as ", Printable(src),
                                  "; reverie import SOURCE -o OUT.pb)");
  if (salvaging) return absl::StrCat("nothing to salvage; ", again);
  return absl::StrCat(again, " or keep what it holds (reverie import --salvage)");
}

// The header: a reverie trace of a schema this reverie reads.
absl::Status ReadHeader(Reader& reader, const std::string& path, const ReadOptions& options,
                        proto::TraceHeader* header) {
  header->Clear();
  switch (reader.Next(header)) {
    case Reader::kOk: break;
    case Reader::kEof: return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
    case Reader::kCut:
    case Reader::kBad: {
      const std::string why = ProtobufLogCapture::Why();
      if (!why.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": damaged trace header: ", why));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a reverie trace (unreadable header at byte 0)"));
    }
  }
  if (header->magic() != kTraceMagic) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a reverie trace (bad magic)"));
  }
  if (header->schema_version() > kTraceSchemaVersion) {
    return absl::UnimplementedError(absl::StrCat(path, ": schema version ", header->schema_version(),
                                                 " is newer than this reverie (",
                                                 kTraceSchemaVersion, ")"));
  }
  if (header->schema_version() < 2 && !options.salvage) {
    return absl::DataLossError(absl::StrCat(
        path, ": written by an older reverie (trace schema ", header->schema_version(),
        ") without an end marker, so it cannot be checked for completeness; ",
        Remedy(*header, false)));
  }
  return absl::OkStatus();
}

struct ChunksRead {
  uint64_t chunks = 0;
  bool ended = false;   // the end marker was read and matches
  bool cut = false;     // a chunk was truncated or damaged (else: clean end of file)
  std::string problem;  // why the chunks stop early, when they do
};

// The chunks up to the end marker, merged into `all`.
ChunksRead ReadChunks(Reader& reader, proto::TraceChunk* all) {
  ChunksRead out;
  proto::TraceChunk chunk;
  uint64_t records = 0;
  while (!out.ended) {
    chunk.Clear();
    const Reader::Result r = reader.Next(&chunk);
    if (r == Reader::kEof) {
      out.problem = absl::StrCat("truncated: it ends after ", out.chunks,
                                 " chunks without the end marker (the writer stopped or the disk "
                                 "filled)");
      break;
    }
    if (r == Reader::kCut || r == Reader::kBad) out.cut = true;
    if (r == Reader::kCut) {
      out.problem = absl::StrCat("truncated: chunk ", out.chunks + 1, " at byte ", reader.last_at(),
                                 " runs past the end of the file (the writer stopped or the disk "
                                 "filled)");
      break;
    }
    if (r == Reader::kBad) {
      out.problem = absl::StrCat("damaged trace: chunk ", out.chunks + 1, " at byte ", reader.last_at(),
                                 " does not parse (", ParseProblem(), ")");
      break;
    }
    if (chunk.has_end()) {
      const proto::TraceEnd end = chunk.end();
      chunk.clear_end();
      if (chunk.ByteSizeLong() != 0) {
        out.problem = "damaged trace: the end marker's chunk holds events";
      } else if (end.chunks() != out.chunks || end.records() != records) {
        out.problem = absl::StrCat("damaged trace: the end marker counts ", end.chunks(), " chunks and ",
                                   end.records(), " records, the file holds ", out.chunks, " and ",
                                   records);
      } else if (!reader.AtEnd()) {
        out.problem = "damaged trace: data after the end marker";
      } else {
        out.ended = true;
      }
      break;
    }
    ++out.chunks;
    records += CountRecords(chunk);
    all->MergeFrom(chunk);
  }
  return out;
}

}  // namespace

absl::StatusOr<Trace> ReadTrace(const std::string& path, const ReadOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  Reader reader(fd);
  ProtobufLogCapture capture;

  Trace trace;
  REVERIE_RETURN_IF_ERROR(ReadHeader(reader, path, options, &trace.header()));
  proto::TraceChunk& all = trace.events();
  all.Clear();
  const ChunksRead read = ReadChunks(reader, &all);
  // Salvaging nothing is no salvage: say why.
  if (!read.ended && (!options.salvage || read.chunks == 0)) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", read.problem, "; ", Remedy(trace.header(), options.salvage)));
  }
  if (all.strings_size() == 0 || !all.strings(0).empty()) {
    // A producer that forgot the empty string at id 0 would shift every name.
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": damaged trace (string table does not start with \"\")"));
  }
  trace.Reindex();
  if (!read.ended) trace.AddCounter(TraceCounter::missing_end_marker, 1);
  if (read.cut) trace.AddCounter(TraceCounter::truncated_chunk, 1);
  ValidateTrace(&trace);
  return trace;
}

}  // namespace reverie
