#include "proto/trace.h"

#include "absl/strings/string_view.h"
#include "base/checked_math.h"

namespace reverie {

Trace::Trace()
    : header_(std::make_unique<proto::TraceHeader>()),
      events_(std::make_unique<proto::TraceChunk>()) {
  header_->set_magic(kTraceMagic);
  header_->set_schema_version(kTraceSchemaVersion);
  events_->add_strings();  // id 0 == ""
  Reindex();
}

Trace::Trace(Trace&&) noexcept = default;
Trace& Trace::operator=(Trace&&) noexcept = default;
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

void Trace::AddCounter(std::string_view name, int64_t delta) {
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

int64_t Trace::GetCounter(std::string_view name) const {
  auto it = counter_index_.find(absl::string_view(name.data(), name.size()));
  return it == counter_index_.end() ? 0 : events_->counters(it->second).value();
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

}  // namespace reverie
