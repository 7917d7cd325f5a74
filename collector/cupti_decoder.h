// File: collector/cupti_decoder.h
//
// CuptiDecoder: CUPTI activity records (the structs of CUDA 13's
// cupti_activity.h) -> the collector's records -> TraceSink. It uses CUPTI's
// *types* only and never calls CUPTI, so tests feed it records they build
// themselves; the one CUPTI service it needs, API names, comes in as a
// function.
//
// Joins done here (all by CUPTI ids, never by time):
// - API call -> external id: CUPTI writes an EXTERNAL_CORRELATION record
//   right before each API record made inside a pushed external id (a layer
//   or NVTX range); a small table keyed by correlation id carries it over,
//   and GPU activities of the same correlation id pick it up too.
// - Sync -> thread and API: SYNCHRONIZATION records have no thread; the API
//   record with the same correlation id gives pid/tid, and its callback id
//   tells cudaDeviceSynchronize (kind DEVICE) from a context sync.
// - Event sync / stream wait -> event record: CUDA 13 tags both the
//   CUDA_EVENT record and the sync record with `cudaEventSyncId`; the event
//   record gives the recording stream and correlation id.
// - Context -> device, from CONTEXT records, for syncs.
// - Context -> device also from kernel, memcpy, memset and CUDA event
//   records: a collector started after the context exists gets no CONTEXT
//   record.
// A sync whose partner records have not arrived yet waits in a bounded
// pending list, indexed by the correlation id and event sync id it waits
// for, and is completed the moment the partner is decoded: CUDA 13 writes
// a thread's records into that thread's buffer, and one buffer spans more
// API calls than the join tables hold, so a partner decoded later in the
// same buffer may already have left its slot by the end of the buffer.
// ResolvePending(final=true) writes the rest as they are and counts
// `sync_thread_unknown` / `sync_event_unresolved`.
//
// The join tables are direct-mapped on the id (newest wins) for partners
// decoded *before* the sync: a slot is reused 64K API calls later.
//
// Not thread-safe: owned by the writer thread.
#ifndef REVERIE_COLLECTOR_CUPTI_DECODER_H_
#define REVERIE_COLLECTOR_CUPTI_DECODER_H_

#include <cupti_activity.h>

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/records.h"
#include "collector/trace_sink.h"

namespace reverie::collector {

// Name of API `cbid` in CUPTI callback domain `domain` (1 = driver,
// 2 = runtime), or nullptr; `context` is the decoder's `name_context`.
using CallbackNameFn = const char* (*)(void* context, uint32_t domain, uint32_t cbid);

class CuptiDecoder {
 public:
  static constexpr size_t kMaxPendingSyncs = 4096;

  // `filter_queries`: drop the calls of api_filter.h (counted by the sink).
  CuptiDecoder(TraceSink* sink, CallbackNameFn callback_name, void* name_context, int64_t pid,
               bool filter_queries = false);

  void Decode(const CUpti_Activity* record);
  // Retries waiting syncs; `final` writes every one still waiting.
  void ResolvePending(bool final);

  size_t pending_syncs() const { return pending_.size(); }

 private:
  struct ApiSlot {
    uint64_t correlation_id = 0;
    int64_t pid = 0;
    int64_t tid = 0;
    uint32_t runtime_cbid = 0;
    uint32_t driver_cbid = 0;
  };
  struct ExternalSlot {
    uint64_t correlation_id = 0;
    uint64_t external_id = 0;
  };
  struct EventSlot {
    uint64_t sync_id = 0;
    uint64_t correlation_id = 0;
    int64_t stream = 0;
    int32_t device = 0;
  };
  struct PendingSync {
    SyncRecord record;
    uint32_t context = 0;
    uint64_t event_sync_id = 0;  // 0 = not an event sync
    bool have_thread = false;
    bool have_event = false;
    bool have_device = false;
    bool Complete() const { return have_thread && (event_sync_id == 0 || have_event); }
  };
  using PendingList = std::list<PendingSync>;
  struct KernelName {
    std::string mangled;
    uint32_t sid = 0;
  };

  void DecodeApi(const CUpti_ActivityAPI& r, ApiKind kind);
  void DecodeKernel(const CUpti_ActivityKernel10& r);
  void DecodeMemcpy(const CUpti_ActivityMemcpy6& r);
  void DecodeMemset(const CUpti_ActivityMemset4& r);
  void DecodeSync(const CUpti_ActivitySynchronization2& r);
  void DecodeCudaEvent(const CUpti_ActivityCudaEvent2& r);
  void DecodeExternal(const CUpti_ActivityExternalCorrelation& r);
  void DecodeDevice(const CUpti_ActivityDevice5& r);
  void DecodeContext(const CUpti_ActivityContext3& r);
  void DecodeOverhead(const CUpti_ActivityOverhead3& r);

  uint32_t ApiNameSid(uint32_t domain, uint32_t cbid);
  uint32_t KernelNameSid(const char* name);
  uint64_t ExternalIdOf(uint64_t correlation_id) const;
  template <typename Record>
  void FillPlacement(const Record& r, GpuActivityRecord* g);
  void NoteContext(uint32_t context, uint32_t device);
  bool TryResolve(PendingSync* p);
  void FillThread(const ApiSlot& api, PendingSync* p) const;
  void FillEvent(const EventSlot& ev, PendingSync* p) const;
  // A partner of waiting syncs was just decoded.
  void OnApiDecoded(const ApiSlot& api);
  void OnEventDecoded(const EventSlot& ev);
  void EmitResolved(const std::vector<PendingList::iterator>& filled);
  void Unindex(PendingList::iterator it);
  void EmitSync(PendingSync* p, bool final);

  TraceSink* sink_;
  CallbackNameFn callback_name_;
  void* name_context_;
  int64_t pid_;
  bool filter_queries_;
  std::vector<ApiSlot> api_;
  std::vector<ExternalSlot> external_;
  std::vector<EventSlot> events_;
  std::unordered_map<uint32_t, int32_t> context_device_;
  std::vector<uint32_t> api_name_sid_[3];  // by domain, then cbid
  std::unordered_map<const char*, KernelName> kernel_names_;
  PendingList pending_;
  std::unordered_multimap<uint64_t, PendingList::iterator> waiting_api_;    // by correlation id
  std::unordered_multimap<uint64_t, PendingList::iterator> waiting_event_;  // by event sync id
};

}  // namespace reverie::collector

#endif  // REVERIE_COLLECTOR_CUPTI_DECODER_H_
