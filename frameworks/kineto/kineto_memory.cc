#include "frameworks/kineto/kineto_memory.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace reverie::kineto {
namespace {

using Thread = std::pair<int64_t, int64_t>;  // (pid, tid)

// Sets each event's `range` to the innermost CPU range of its thread that
// contains its time. Ranges of one thread nest (the importer clips overlaps),
// so one sweep per thread over ranges by start and events by time, with the
// open ranges on a stack, finds it.
void AttachRanges(const proto::TraceChunk& ev, google::protobuf::RepeatedPtrField<proto::MemoryEvent>* mem) {
  absl::flat_hash_map<Thread, std::vector<int>> events_of;
  for (int i = 0; i < mem->size(); ++i) events_of[{(*mem)[i].pid(), (*mem)[i].tid()}].push_back(i);
  absl::flat_hash_map<Thread, std::vector<int>> ranges_of;
  for (int i = 0; i < ev.ranges_size(); ++i) {
    const proto::Range& r = ev.ranges(i);
    if (r.kind() == proto::Range::GPU_ANNOTATION) continue;
    auto it = events_of.find(Thread{r.pid(), r.tid()});
    if (it != events_of.end()) ranges_of[it->first].push_back(i);
  }
  std::vector<int> open;
  for (auto& [thread, events] : events_of) {
    auto rit = ranges_of.find(thread);
    if (rit == ranges_of.end()) continue;
    std::vector<int>& ranges = rit->second;
    // Outer first at equal starts: it has the later end.
    std::sort(ranges.begin(), ranges.end(), [&](int a, int b) {
      const proto::Range& x = ev.ranges(a);
      const proto::Range& y = ev.ranges(b);
      return std::make_tuple(x.start_ns(), y.end_ns(), a) < std::make_tuple(y.start_ns(), x.end_ns(), b);
    });
    open.clear();
    size_t next = 0;
    for (int i : events) {  // already in time order
      proto::MemoryEvent& m = (*mem)[i];
      const int64_t t = m.time_ns();
      while (next < ranges.size() && ev.ranges(ranges[next]).start_ns() <= t) {
        const int r = ranges[next++];
        while (!open.empty() && ev.ranges(open.back()).end_ns() < ev.ranges(r).start_ns()) {
          open.pop_back();
        }
        open.push_back(r);
      }
      while (!open.empty() && ev.ranges(open.back()).end_ns() < t) open.pop_back();
      // A range that only overlapped (not nested) may sit under the top:
      // the top is still the innermost that contains t when nesting holds.
      if (!open.empty()) m.set_range(static_cast<uint32_t>(open.back()) + 1);
    }
  }
}

// Ties each free to its allocation by (device type, device, address).
void MatchFrees(google::protobuf::RepeatedPtrField<proto::MemoryEvent>* mem, Trace* trace) {
  using Key = std::tuple<int32_t, int32_t, uint64_t>;
  absl::flat_hash_map<Key, int> live;  // -> index of the allocation
  int64_t no_addr = 0, unmatched = 0, mismatch = 0, doubled = 0;
  for (int i = 0; i < mem->size(); ++i) {
    proto::MemoryEvent& m = (*mem)[i];
    if (m.addr() == 0) {
      ++no_addr;
      continue;
    }
    const Key key{m.device_type(), m.device(), m.addr()};
    if (m.bytes() > 0) {
      auto [it, inserted] = live.try_emplace(key, i);
      if (!inserted) {
        ++doubled;
        it->second = i;
      }
    } else if (m.bytes() < 0) {
      auto it = live.find(key);
      if (it == live.end()) {
        ++unmatched;
        continue;
      }
      if ((*mem)[it->second].bytes() != -m.bytes()) ++mismatch;
      m.set_alloc(static_cast<uint32_t>(it->second) + 1);
      live.erase(it);
    }
  }
  auto add = [&](TraceCounter c, int64_t n) {
    if (n > 0) trace->AddCounter(c, n);
  };
  add(TraceCounter::memory_without_address, no_addr);
  add(TraceCounter::memory_free_without_allocation, unmatched);
  add(TraceCounter::memory_free_size_mismatch, mismatch);
  add(TraceCounter::memory_double_allocation, doubled);
  add(TraceCounter::memory_never_freed, static_cast<int64_t>(live.size()));
}

}  // namespace

void LinkMemoryEvents(Trace* trace) {
  auto* mem = trace->events().mutable_memory_events();
  if (mem->empty()) return;
  // Sorting the pointers keeps the messages where the arena put them.
  std::stable_sort(mem->pointer_begin(), mem->pointer_end(),
                   [](const proto::MemoryEvent* a, const proto::MemoryEvent* b) {
                     return a->time_ns() < b->time_ns();
                   });
  AttachRanges(trace->events(), mem);
  MatchFrees(mem, trace);
}

}  // namespace reverie::kineto
