#include "frameworks/kineto/kineto_parser.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "frameworks/kineto/json_scan.h"
#include "frameworks/kineto/json_values.h"
#include "frameworks/kineto/kineto_header.h"
#include "frameworks/kineto/kineto_limits.h"
#include "frameworks/kineto/kineto_op_inputs.h"
#include "simdjson.h"

namespace reverie::kineto {
namespace {

namespace od = simdjson::ondemand;
using json::KeyOf;

constexpr size_t kNoOffset = JsonLayout::kNone;

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING + 1,
              "the last chunk of a cut array may write its ']' one byte past the text");

uint64_t NonNegative(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// Where a byte of the buffer simdjson parsed is in the input text: chunks
// are parsed in place; the skeleton of an object-form trace is a copy that
// leaves the event array's contents out.
struct TextMap {
  const char* base = nullptr;
  size_t gap_at = kNoOffset;  // buffer offsets past this one are shifted by `gap`
  size_t gap = 0;
  size_t OffsetOf(const char* p) const {
    const size_t at = static_cast<size_t>(p - base);
    return at > gap_at ? at + gap : at;
  }
};

// Decodes trace events into RawEvents for the builder, and remembers the
// first number token that is not valid JSON.
class EventWalker {
 public:
  explicit EventWalker(KinetoTraceBuilder* builder) : builder_(builder) {}

  const json::ReadState& state() const { return state_; }
  json::ReadState* mutable_state() { return &state_; }
  int64_t trace_events() const { return trace_events_; }

  simdjson::error_code AddEvents(od::array& events) {
    for (auto item : events) {
      if (auto err = item.error(); err) return err;
      od::value& ev = json::Held(item);
      if (json::FirstChar(ev) != '{') {
        builder_->trace().AddCounter(TraceCounter::malformed_event);
        continue;
      }
      od::object obj;
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
  bool Int(od::value& v, int64_t* out) { return json::ReadInt(v, out, &state_); }
  bool Str(od::value& v, std::string_view* out) { return json::GetString(v, out, &state_); }

  void ReadTriple(od::value& v, int32_t out[3]) {
    od::array arr;
    if (!state_.Note(v.get_array().get(arr))) return;
    int i = 0;
    for (auto item : arr) {
      if (!state_.Note(item.error())) return;
      od::value& x = json::Held(item);
      int64_t n = 0;
      if (i < 3 && Int(x, &n)) out[i] = static_cast<int32_t>(n);
      ++i;
    }
  }

  simdjson::error_code ParseArgs(od::value& v, RawEvent* e);
  simdjson::error_code ParseEvent(od::object& obj, RawEvent* e);

  KinetoTraceBuilder* builder_;
  OpInputsScratch inputs_;
  json::ReadState state_;
  int64_t trace_events_ = 0;  // objects with a "ph"
};

simdjson::error_code EventWalker::ParseArgs(od::value& v, RawEvent* e) {
  od::object obj;
  if (auto err = v.get_object().get(obj); err) {
    return json::Fatal(err) ? err : simdjson::SUCCESS;  // not an object: ignored
  }
  int64_t n = 0;
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = json::Held(field_result);
    const std::string_view k = KeyOf(f);
    od::value& x = f.value();
    if (k == "correlation") {
      if (Int(x, &n)) e->correlation = NonNegative(n), e->has_correlation = true;
    } else if (k == "External id" || k == "external id") {
      if (Int(x, &n)) e->external_id = NonNegative(n);
    } else if (k == "stream") {
      if (Int(x, &e->stream)) e->has_stream = true;
    } else if (k == "device") {
      if (Int(x, &n)) e->device = static_cast<int32_t>(n), e->has_device = true;
    } else if (k == "context") {
      Int(x, &e->context);
    } else if (k == "grid") {
      ReadTriple(x, e->grid);
    } else if (k == "block") {
      ReadTriple(x, e->block);
    } else if (k == "registers per thread") {
      if (Int(x, &n)) e->registers_per_thread = static_cast<int32_t>(n);
    } else if (k == "shared memory") {
      Int(x, &e->shared_memory);
    } else if (k == "bytes") {
      Int(x, &e->bytes);
    } else if (k == "kind") {
      Str(x, &e->copy_kind_arg);
    } else if (k == "graph id") {
      Int(x, &e->graph_id);
    } else if (k == "cbid") {
      if (Int(x, &n)) e->cbid = static_cast<uint32_t>(NonNegative(n));
    } else if (k == "Sequence number") {
      if (Int(x, &e->sequence_number)) e->has_sequence_number = true;
    } else if (k == "Fwd thread id") {
      Int(x, &e->fwd_thread_id);
    } else if (k == "Python id") {
      if (Int(x, &e->python_id)) e->has_python_id = true;
    } else if (k == "Python parent id") {
      Int(x, &e->python_parent_id);
    } else if (k == "cuda_sync_kind") {
      Str(x, &e->sync_kind);
    } else if (k == "wait_on_stream") {
      if (Int(x, &e->wait_on_stream)) e->has_wait_on_stream = true;
    } else if (k == "wait_on_cuda_event_record_corr_id") {
      Int(x, &e->wait_on_event_record_corr);
    } else if (k == "wait_on_cuda_event_id" || k == "event_id" || k == "event id") {
      if (Int(x, &e->event_id)) e->has_event_id = true;
    } else if (k == "Collective name") {
      Str(x, &e->collective_name);
    } else if (k == "In msg nelems") {
      Int(x, &e->in_nelems);
    } else if (k == "Out msg nelems") {
      Int(x, &e->out_nelems);
    } else if (k == "Group size") {
      Int(x, &e->group_size);
    } else if (k == "dtype") {
      Str(x, &e->dtype);
    } else if (k == "Process Group Name") {
      Str(x, &e->process_group_name);
    } else if (k == "Seq") {
      Int(x, &e->seq);
    } else if (k == "Input Dims") {
      ReadInputDims(x, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Input type") {
      ReadInputStrings(x, &OpInputsScratch::Input::type, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Concrete Inputs") {
      ReadInputStrings(x, &OpInputsScratch::Input::concrete, &inputs_, &state_);
      e->inputs = &inputs_;
    } else if (k == "Addr") {
      Int(x, &e->mem_addr);
    } else if (k == "Bytes") {
      e->has_mem_bytes = Int(x, &e->mem_bytes);
    } else if (k == "Total Allocated") {
      e->has_total_allocated = Int(x, &e->total_allocated);
    } else if (k == "Total Reserved") {
      e->has_total_reserved = Int(x, &e->total_reserved);
    } else if (k == "Device Type") {
      e->has_device_type = Int(x, &e->device_type);
    } else if (k == "Device Id") {
      Int(x, &e->device_id);
    } else if (k == "name") {
      Str(x, &e->meta_name);
    } else if (k == "labels") {
      Str(x, &e->meta_labels);
    }
  }
  return simdjson::SUCCESS;
}

// pid / tid: a number, a numeric string, or a label ("stream 7", "Spans").
void ReadId(od::value& v, int64_t* out, bool* is_text, json::ReadState* st) {
  if (json::ReadInt(v, out, st)) return;
  std::string_view s;
  if (json::FirstChar(v) != '"' || !json::GetString(v, &s, st)) return;
  if (!ParseTrailingInteger(s, out)) *is_text = true;
}

simdjson::error_code EventWalker::ParseEvent(od::object& obj, RawEvent* e) {
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = json::Held(field_result);
    const std::string_view k = KeyOf(f);
    od::value& v = f.value();
    // Dispatch on length first: every event has these few keys.
    switch (k.size()) {
      case 2:
        if (k == "ph") {
          std::string_view s;
          if (Str(v, &s) && !s.empty()) e->ph = s[0];
        } else if (k == "ts") {
          e->has_ts = json::ReadMicros(v, &e->ts_ns, &state_);
          e->bad_number |= !e->has_ts;
        } else if (k == "id") {
          int64_t id = 0;
          if (Int(v, &id)) e->flow_id = static_cast<uint64_t>(id), e->has_flow_id = true;
        } else if (k == "bp") {
          std::string_view s;
          e->binding_enclosing = Str(v, &s) && s == "e";
        }
        break;
      case 3:
        if (k == "cat") {
          Str(v, &e->cat_name);
          e->cat = CategoryFromName(e->cat_name);
        } else if (k == "pid") {
          e->has_pid = true;
          ReadId(v, &e->pid, &e->pid_is_text, &state_);
        } else if (k == "tid") {
          e->has_tid = true;
          ReadId(v, &e->tid, &e->tid_is_text, &state_);
        } else if (k == "dur") {
          e->has_dur = json::ReadMicros(v, &e->dur_ns, &state_);
          e->bad_number |= !e->has_dur;
        }
        break;
      case 4:
        if (k == "name") {
          e->has_name = Str(v, &e->name);
        } else if (k == "args") {
          if (auto err = ParseArgs(v, e); err) return err;
        }
        break;
      default:
        break;
    }
    // Launch flows (ac2g: the same link as args.correlation) and instant
    // events other than the CPU ones ([memory]) are only counted by their
    // phase and category: once both are known the rest is left to simdjson
    // to skip (a third of the events of a current trace).
    if (e->cat != Category::kNone &&
        (((e->ph == 'i' || e->ph == 'I') && e->cat != Category::kCpuInstantEvent) ||
         (e->cat == Category::kAc2g && (e->ph == 's' || e->ph == 'f' || e->ph == 't')))) {
      break;
    }
  }
  return simdjson::SUCCESS;
}

std::string_view TypeName(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "an unknown value";
}

// One trace file's parse: chooses between chunked and whole-text parsing
// (ScanJsonLayout), and turns every failure into one line naming the file.
class KinetoJsonParser {
 public:
  KinetoJsonParser(JsonInput* input, const std::string& path, KinetoTraceBuilder* builder,
                   size_t chunk_bytes)
      : input_(input), path_(path), builder_(builder), walker_(builder), chunk_bytes_(chunk_bytes) {}

  absl::Status Run();

 private:
  std::string Decompressed() const { return input_->was_gzip() ? " of the decompressed text" : ""; }
  absl::Status Invalid(size_t offset, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": invalid JSON at byte ", offset, Decompressed(), ": ", Sv(what)));
  }
  absl::Status Error(const TextMap& map, od::document* doc, simdjson::error_code code) const;
  absl::Status NoTraceEvents(bool cut) const;

  absl::Status ParseWhole();
  absl::Status ParseArrayForm(const JsonLayout& layout);
  absl::Status ParseObjectForm(const JsonLayout& layout);
  absl::Status ParseChunks(const JsonLayout& layout, size_t close);
  absl::Status ParseTopLevel(od::document& doc, const TextMap& map, const JsonLayout* layout,
                             const char* blanked_events);

  JsonInput* input_;
  const std::string& path_;
  KinetoTraceBuilder* builder_;
  EventWalker walker_;
  size_t chunk_bytes_;
  od::parser chunk_parser_;  // reused: its index is sized for one chunk
};

absl::Status KinetoJsonParser::Error(const TextMap& map, od::document* doc,
                                     simdjson::error_code code) const {
  if (walker_.state().bad_number != nullptr) {
    return Invalid(map.OffsetOf(walker_.state().bad_number), "malformed number");
  }
  if (code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
    // simdjson checks that the last character closes the top-level value.
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": invalid JSON: the top-level value is not closed at the end of the",
        input_->was_gzip() ? " decompressed" : "", " text (byte ", input_->size(),
        "): truncated, or followed by other content"));
  }
  const char* where = nullptr;
  if (code == simdjson::UNCLOSED_STRING) {
    return Invalid(input_->size(), "a string is not closed at the end of the input");
  }
  if (doc != nullptr && doc->current_location().get(where) == simdjson::SUCCESS) {
    return Invalid(map.OffsetOf(where), simdjson::error_message(code));
  }
  return absl::InvalidArgumentError(absl::StrCat(path_, ": invalid JSON",
                                                 input_->was_gzip() ? " (decompressed text)" : "",
                                                 ": ", simdjson::error_message(code)));
}

absl::Status KinetoJsonParser::NoTraceEvents(bool cut) const {
  return absl::InvalidArgumentError(absl::StrCat(
      path_, ": is a bare JSON array holding no trace events (no object with a \"ph\" field",
      cut ? "; it ends inside its first element" : "",
      "): not a PyTorch profiler or Chrome trace"));
}

absl::Status KinetoJsonParser::Run() {
  const JsonLayout layout = ScanJsonLayout(input_->text(), chunk_bytes_);
  if (layout.first_nul != kNoOffset) return Invalid(layout.first_nul, "a NUL byte");
  if (layout.mismatched_bracket != kNoOffset) {
    return Invalid(layout.mismatched_bracket, "a closing bracket that does not match its opening one");
  }
  if (layout.trailing != kNoOffset) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": invalid JSON: content after the top-level value, at byte ", layout.trailing,
        Decompressed(), " (only whitespace may follow it: two documents in one file?)"));
  }
  if (!layout.splittable()) return ParseWhole();
  builder_->ExpectEvents(layout.elements);
  if (layout.form == JsonLayout::Form::kArray) return ParseArrayForm(layout);
  return ParseObjectForm(layout);
}

// Events in text[layout.events_open .. close], one chunk (between two cuts)
// at a time. The separators at the chunk's ends are overwritten with '['
// and ']' so that each chunk is a JSON array parsed in place.
absl::Status KinetoJsonParser::ParseChunks(const JsonLayout& layout, size_t close) {
  char* text = input_->mutable_data();
  const TextMap map{text};
  // Sized once for the longest chunk, so the index is allocated once.
  size_t longest = 0, from = layout.events_open;
  for (size_t i = 0; i <= layout.cuts.size(); ++i) {
    const size_t to = i < layout.cuts.size() ? layout.cuts[i] : close;
    longest = std::max(longest, to - from + 1);
    from = to;
  }
  if (auto err = chunk_parser_.allocate(longest); err) return Error(map, nullptr, err);
  from = layout.events_open;
  for (size_t i = 0; i <= layout.cuts.size(); ++i) {
    const size_t to = i < layout.cuts.size() ? layout.cuts[i] : close;
    text[from] = '[';
    text[to] = ']';
    const simdjson::padded_string_view view(text + from, to - from + 1, input_->capacity() - from);
    od::document doc;
    if (auto err = chunk_parser_.iterate(view).get(doc); err) return Error(map, nullptr, err);
    od::array events;
    if (auto err = doc.get_array().get(events); err) return Error(map, &doc, err);
    if (auto err = walker_.AddEvents(events); err) return Error(map, &doc, err);
    from = to;
  }
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseArrayForm(const JsonLayout& layout) {
  const bool closed = layout.events_close != kNoOffset;
  if (absl::Status s = ParseChunks(layout, closed ? layout.events_close : layout.complete_end);
      !s.ok()) {
    return s;
  }
  builder_->EndOfEvents();
  if (layout.cut_element) builder_->trace().AddCounter(TraceCounter::truncated_event);
  if (walker_.trace_events() == 0) return NoTraceEvents(layout.cut_element);
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseObjectForm(const JsonLayout& layout) {
  // The skeleton: everything but the event array's contents.
  const std::string_view text = input_->text();
  const size_t head = layout.events_open + 1;
  const size_t tail = text.size() - layout.events_close;
  const size_t size = head + tail;
  std::unique_ptr<char[]> skeleton(new char[size + kJsonPadding]());
  std::memcpy(skeleton.get(), text.data(), head);
  std::memcpy(skeleton.get() + head, text.data() + layout.events_close, tail);
  const TextMap map{skeleton.get(), layout.events_open, layout.events_close - head};
  od::parser parser;
  od::document doc;
  const simdjson::padded_string_view view(skeleton.get(), size, size + kJsonPadding);
  if (auto err = parser.iterate(view).get(doc); err) return Error(map, nullptr, err);
  return ParseTopLevel(doc, map, &layout, skeleton.get() + layout.events_open);
}

absl::Status KinetoJsonParser::ParseWhole() {
  od::parser parser;
  const simdjson::padded_string_view view(input_->data(), input_->size(), input_->capacity());
  const TextMap map{input_->data()};
  od::document doc;
  if (auto err = parser.iterate(view).get(doc); err) return Error(map, nullptr, err);
  od::json_type type;
  if (auto err = doc.type().get(type); err) return Error(map, &doc, err);
  if (type == od::json_type::array) {
    od::array events;
    if (auto err = doc.get_array().get(events); err) return Error(map, &doc, err);
    if (auto err = walker_.AddEvents(events); err) return Error(map, &doc, err);
    builder_->EndOfEvents();
    if (walker_.trace_events() == 0) return NoTraceEvents(false);
    return absl::OkStatus();
  }
  if (type != od::json_type::object) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": is JSON but not a trace: the top-level value is ", Sv(TypeName(type)),
        " (expected an object with \"traceEvents\", or an array of events)"));
  }
  return ParseTopLevel(doc, map, nullptr, nullptr);
}

// The top-level object. With a layout, `blanked_events` is where the event
// array's (emptied) brackets are in the skeleton, and its events are parsed
// from the chunks; without, events are parsed in place.
absl::Status KinetoJsonParser::ParseTopLevel(od::document& doc, const TextMap& map,
                                             const JsonLayout* layout,
                                             const char* blanked_events) {
  od::object top;
  if (auto err = doc.get_object().get(top); err) return Error(map, &doc, err);
  bool has_events = false, has_nodes = false, has_schema = false;
  for (auto field_result : top) {
    if (auto err = field_result.error(); err) return Error(map, &doc, err);
    od::field& f = json::Held(field_result);
    const std::string_view key = KeyOf(f);
    od::value& v = f.value();
    simdjson::error_code err = simdjson::SUCCESS;
    if (key == "traceEvents") {
      const char first = json::FirstChar(v);
      if (first != '[') {
        od::json_type t;
        if ((err = v.type().get(t))) return Error(map, &doc, err);
        return absl::InvalidArgumentError(absl::StrCat(
            path_, ": \"traceEvents\" is ", Sv(TypeName(t)), ", not an array of events"));
      }
      has_events = true;
      if (layout != nullptr && v.raw_json_token().data() == blanked_events) {
        REVERIE_RETURN_IF_ERROR(ParseChunks(*layout, layout->events_close));
      } else {
        od::array events;
        if ((err = v.get_array().get(events))) return Error(map, &doc, err);
        if ((err = walker_.AddEvents(events))) return Error(map, &doc, err);
      }
      builder_->EndOfEvents();
    } else if (key == "nodes") {
      has_nodes = true;
      if (has_schema && !has_events) break;  // an execution trace: no need to read it all
    } else if (key == "schema") {
      has_schema = true;
    } else {
      err = ParseHeaderField(key, v, &builder_->header(), walker_.mutable_state());
      if (!err) err = walker_.state().error();
    }
    if (err) return Error(map, &doc, err);
  }
  if (!has_events) {
    if (has_nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": is a PyTorch execution trace, not a profiler trace (it has \"nodes\" and "
                 "\"schema\", no \"traceEvents\"); give the Kineto trace of the same run"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": is a JSON object without \"traceEvents\": not a PyTorch profiler trace"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseKinetoJson(JsonInput* input, const std::string& path,
                             KinetoTraceBuilder* builder, size_t chunk_bytes) {
  return KinetoJsonParser(input, path, builder, chunk_bytes).Run();
}

}  // namespace reverie::kineto
