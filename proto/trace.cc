#include "proto/trace.h"

#include <new>
#include <utility>

#include "absl/strings/string_view.h"
#include "base/checked_math.h"
#include "base/huge_pages.h"
#include "base/sanitizers.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

// LeakSanitizer looks for pointers in the heap, stacks and globals, not in
// mmap'ed memory: the heap strings of messages on an arena whose blocks are
// mapped (below) would be reported as leaked while the Trace lives. Under
// ASan the blocks are registered as root regions.
#ifdef REVERIE_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace reverie {
namespace {

void* AllocateBlock(size_t bytes) {
  void* p = MapPages(bytes);
  if (p == nullptr) throw std::bad_alloc();  // what the default allocator does
#ifdef REVERIE_ASAN
  __lsan_register_root_region(p, bytes);
#endif
  return p;
}
void FreeBlock(void* p, size_t bytes) {
#ifdef REVERIE_ASAN
  __lsan_unregister_root_region(p, bytes);
#endif
  UnmapPages(p, bytes);
}

std::unique_ptr<google::protobuf::Arena> NewArena() {
  google::protobuf::ArenaOptions options;
  // Blocks double from 64 KiB (a small trace) to 16 MiB; those of 2 MiB
  // and more are backed by huge pages.
  options.start_block_size = size_t{64} << 10;
  options.max_block_size = size_t{16} << 20;
  options.block_alloc = &AllocateBlock;
  options.block_dealloc = &FreeBlock;
  return std::make_unique<google::protobuf::Arena>(options);
}

}  // namespace

Trace::Trace() : Trace(NewArena(), nullptr) {}

Trace::Trace(std::unique_ptr<google::protobuf::Arena> own, google::protobuf::Arena* shared)
    : arena_(std::move(own)),
      header_(google::protobuf::Arena::CreateMessage<proto::TraceHeader>(
          arena_ != nullptr ? arena_.get() : shared)),
      events_(google::protobuf::Arena::CreateMessage<proto::TraceChunk>(header_->GetArena())) {
  header_->set_magic(kTraceMagic);
  header_->set_schema_version(kTraceSchemaVersion);
  events_->add_strings();  // id 0 == ""
  Reindex();
}

Trace Trace::SiblingOf(Trace& owner) { return Trace(nullptr, owner.events_->GetArena()); }

Trace::Trace(Trace&& other) noexcept
    : arena_(std::move(other.arena_)),
      header_(std::exchange(other.header_, nullptr)),
      events_(std::exchange(other.events_, nullptr)),
      intern_(std::move(other.intern_)),
      counter_index_(std::move(other.counter_index_)) {}

Trace& Trace::operator=(Trace&& other) noexcept {
  if (this != &other) {
    // The indexes view strings in the old arena: drop them first.
    intern_ = std::move(other.intern_);
    counter_index_ = std::move(other.counter_index_);
    header_ = std::exchange(other.header_, nullptr);
    events_ = std::exchange(other.events_, nullptr);
    arena_ = std::move(other.arena_);
  }
  return *this;
}
Trace::~Trace() = default;

uint32_t Trace::Intern(std::string_view s) {
  auto it = intern_.find(s);
  if (it != intern_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(events_->strings_size());
  std::string* stored = events_->add_strings();
  stored->assign(s.data(), s.size());
  // RepeatedPtrField keeps each element at a stable address, so the view
  // into it stays valid as the table grows.
  intern_.emplace(std::string_view(*stored), id);
  return id;
}

std::string_view Trace::String(uint32_t sid) const {
  if (sid >= static_cast<uint32_t>(events_->strings_size())) return {};
  return events_->strings(static_cast<int>(sid));
}

void Trace::AddCounter(TraceCounter counter, int64_t delta) {
  const std::string_view name = Spec(counter).name;
  auto it = counter_index_.find(absl::string_view(name.data(), name.size()));
  if (it == counter_index_.end()) {
    proto::Counter* c = events_->add_counters();
    c->set_name(std::string(name));
    c->set_value(delta);
    counter_index_.emplace(std::string(name), events_->counters_size() - 1);
    return;
  }
  proto::Counter* c = events_->mutable_counters(it->second);
  c->set_value(SatAdd(c->value(), delta));  // a .pb's counters are untrusted
}

int64_t Trace::GetCounter(TraceCounter counter) const {
  const std::string_view name = Spec(counter).name;
  auto it = counter_index_.find(absl::string_view(name.data(), name.size()));
  return it == counter_index_.end() ? 0 : events_->counters(it->second).value();
}

void Trace::AddCountersOf(const Trace& other) {
  for (const proto::Counter& c : other.events().counters()) {
    auto it = counter_index_.find(c.name());
    if (it == counter_index_.end()) {
      *events_->add_counters() = c;
      counter_index_.emplace(c.name(), events_->counters_size() - 1);
    } else {
      proto::Counter* mine = events_->mutable_counters(it->second);
      mine->set_value(SatAdd(mine->value(), c.value()));
    }
  }
}

void Trace::Reindex() {
  intern_.clear();
  intern_.reserve(events_->strings_size());
  for (int i = 0; i < events_->strings_size(); ++i) {
    intern_.emplace(std::string_view(events_->strings(i)), static_cast<uint32_t>(i));
  }
  // Merge counters that arrived in several chunks under one name.
  counter_index_.clear();
  google::protobuf::RepeatedPtrField<proto::Counter> merged;
  for (const proto::Counter& c : events_->counters()) {
    auto it = counter_index_.find(c.name());
    if (it == counter_index_.end()) {
      *merged.Add() = c;
      counter_index_.emplace(c.name(), merged.size() - 1);
    } else {
      merged.Mutable(it->second)->set_value(SatAdd(merged.Get(it->second).value(), c.value()));
    }
  }
  events_->mutable_counters()->Swap(&merged);
}

std::string DeterministicBytes(const proto::TraceHeader& header, const proto::TraceChunk& events) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    header.SerializeToCodedStream(&coded);
    events.SerializeToCodedStream(&coded);
  }  // the stream writes its last bytes when destroyed
  return out;
}

}  // namespace reverie
