// File: frameworks/kineto/kineto_walker.h
//
// EventWalker: decodes the trace events of a Kineto JSON array (simdjson
// On-Demand values) into RawEvents and hands each to a KinetoTraceBuilder,
// in order. kineto_parser.cc owns the document; this owns one event's
// fields.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_WALKER_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_WALKER_H_

#include <cstdint>
#include <string_view>

#include "frameworks/kineto/json_values.h"
#include "frameworks/kineto/kineto_builder.h"
#include "frameworks/kineto/kineto_event.h"
#include "frameworks/kineto/kineto_limits.h"
#include "simdjson.h"

namespace reverie::kineto {

// Decodes trace events into RawEvents for the builder, and remembers the
// first number token that is not valid JSON. One per thread: a parallel
// import gives each part of the event array its own walker and builder.
class EventWalker {
 public:
  explicit EventWalker(KinetoTraceBuilder* builder) : builder_(builder) {}

  const json::ReadState& state() const { return state_; }
  json::ReadState* mutable_state() { return &state_; }
  int64_t trace_events() const { return trace_events_; }
  // Counts the trace events of a later part, walked by `other`.
  void CountEventsOf(const EventWalker& other) { trace_events_ += other.trace_events_; }

  simdjson::error_code AddEvents(simdjson::ondemand::array& events) {
    for (auto item : events) {
      if (auto err = item.error(); err) return err;
      simdjson::ondemand::value& ev = json::Held(item);
      if (json::FirstChar(ev) != '{') {
        builder_->trace().AddCounter(TraceCounter::malformed_event);
        continue;
      }
      simdjson::ondemand::object obj;
      if (auto err = ev.get_object().get(obj); err) return err;
      RawEvent e;
      inputs_.Clear();
      if (auto err = ParseEvent(obj, &e); err) return err;
      if (!state_.ok()) return state_.error();
      if (e.ph != 0) ++trace_events_;
      ClampEventNumbers(&e, &builder_->trace());  // D7: before any arithmetic
      builder_->AddEvent(e);
    }
    return simdjson::SUCCESS;
  }

 private:
  bool Int(simdjson::ondemand::value& v, int64_t* out) { return json::ReadInt(v, out, &state_); }
  bool Str(simdjson::ondemand::value& v, std::string_view* out) {
    return json::GetString(v, out, &state_);
  }

  void ReadTriple(simdjson::ondemand::value& v, int32_t out[3]) {
    simdjson::ondemand::array arr;
    if (!state_.Note(v.get_array().get(arr))) return;
    int i = 0;
    for (auto item : arr) {
      if (!state_.Note(item.error())) return;
      simdjson::ondemand::value& x = json::Held(item);
      int64_t n = 0;
      if (i < 3 && Int(x, &n)) out[i] = static_cast<int32_t>(n);
      ++i;
    }
  }

  simdjson::error_code ParseArgs(simdjson::ondemand::value& v, RawEvent* e);
  simdjson::error_code ParseEvent(simdjson::ondemand::object& obj, RawEvent* e);

  KinetoTraceBuilder* builder_;
  OpInputsScratch inputs_;
  json::ReadState state_;
  int64_t trace_events_ = 0;  // objects with a "ph"
};

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_WALKER_H_
