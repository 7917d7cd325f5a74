#include "frameworks/kineto/kineto_parser.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/parallel.h"
#include "base/status_macros.h"
#include "base/sv.h"
#include "frameworks/kineto/json_scan.h"
#include "frameworks/kineto/json_values.h"
#include "frameworks/kineto/kineto_header.h"
#include "frameworks/kineto/kineto_walker.h"
#include "simdjson.h"

namespace reverie::kineto {
namespace {

namespace od = simdjson::ondemand;
using json::KeyOf;

constexpr size_t kNoOffset = JsonLayout::kNone;

// Where a byte of the buffer simdjson parsed is in the input text: a chunk
// is a copy of the text from `shift` on; the skeleton of an object-form
// trace is a copy that leaves the event array's contents out; a padded text
// parsed whole is parsed where it is.
struct TextMap {
  const char* base = nullptr;
  size_t gap_at = kNoOffset;  // buffer offsets past this one are shifted by `gap`
  size_t gap = 0;
  size_t shift = 0;
  size_t OffsetOf(const char* p) const {
    const size_t at = static_cast<size_t>(p - base);
    return (at > gap_at ? at + gap : at) + shift;
  }
};

// The chunks of the event array text[bounds[i] .. bounds[i + 1]] cut into at
// most `workers` runs of whole chunks of about equal bytes: the first chunk
// of each run is returned.
std::vector<size_t> SplitIntoParts(const std::vector<size_t>& bounds, int workers) {
  const size_t chunks = bounds.size() - 1;
  std::vector<size_t> firsts = {0};
  const size_t total = bounds.back() - bounds.front();
  for (size_t i = 1; i < chunks && static_cast<int>(firsts.size()) < workers; ++i) {
    const size_t due = bounds.front() + total / static_cast<size_t>(workers) * firsts.size();
    if (bounds[i] >= due) firsts.push_back(i);
  }
  return firsts;
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
  KinetoJsonParser(const JsonInput* input, const std::string& path, KinetoTraceBuilder* builder,
                   size_t chunk_bytes, int threads)
      : input_(input),
        path_(path),
        builder_(builder),
        walker_(builder),
        chunk_bytes_(chunk_bytes),
        threads_(threads) {}

  absl::Status Run();

 private:
  std::string Decompressed() const { return input_->was_gzip() ? " of the decompressed text" : ""; }
  absl::Status Invalid(size_t offset, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": invalid JSON at byte ", offset, Decompressed(), ": ", Sv(what)));
  }
  absl::Status Error(const TextMap& map, od::document* doc, simdjson::error_code code) const {
    return ErrorIn(map, walker_, doc, code);
  }
  absl::Status ErrorIn(const TextMap& map, const EventWalker& walker, od::document* doc,
                       simdjson::error_code code) const;
  absl::Status NoTraceEvents(bool cut) const;

  absl::Status ParseWhole();
  absl::Status ParseArrayForm(const JsonLayout& layout);
  absl::Status ParseObjectForm(const JsonLayout& layout);
  absl::Status ParseChunks(const JsonLayout& layout, size_t close);
  absl::Status ParseParts(const std::vector<size_t>& bounds, const std::vector<size_t>& firsts);
  // Chunks [first, last) of `bounds` with `walker` (and its builder).
  absl::Status ParseChunkRange(const std::vector<size_t>& bounds, size_t first, size_t last,
                               EventWalker* walker, od::parser* parser) const;
  absl::Status ParseTopLevel(od::document& doc, const TextMap& map, const JsonLayout* layout,
                             const char* blanked_events);

  const JsonInput* input_;
  const std::string& path_;
  KinetoTraceBuilder* builder_;
  EventWalker walker_;
  size_t chunk_bytes_;
  int threads_;
  od::parser chunk_parser_;  // reused: its index is sized for one chunk
};

absl::Status KinetoJsonParser::ErrorIn(const TextMap& map, const EventWalker& walker,
                                       od::document* doc, simdjson::error_code code) const {
  if (walker.state().bad_number != nullptr) {
    return Invalid(map.OffsetOf(walker.state().bad_number), "malformed number");
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
// at a time. Each chunk is copied, its separators at both ends made '[' and
// ']', and the copy parsed as a JSON array: the text is never written, and
// simdjson never reads a byte twice from a mapped file another process may
// be writing (mapped_file.h). With more than one thread, runs of chunks are
// decoded at once (ParseParts).
absl::Status KinetoJsonParser::ParseChunks(const JsonLayout& layout, size_t close) {
  std::vector<size_t> bounds;
  bounds.reserve(layout.cuts.size() + 2);
  bounds.push_back(layout.events_open);
  bounds.insert(bounds.end(), layout.cuts.begin(), layout.cuts.end());
  bounds.push_back(close);
  const std::vector<size_t> firsts =
      SplitIntoParts(bounds, WorkerCount(threads_, bounds.size() - 1));
  if (firsts.size() > 1) return ParseParts(bounds, firsts);
  return ParseChunkRange(bounds, 0, bounds.size() - 1, &walker_, &chunk_parser_);
}

// Each run of chunks on its own thread, the first into this parser's
// builder and each other into a part of it (KinetoTraceBuilder::PartOf),
// appended in file order: the Trace, and the first error in file order,
// are those of one thread. A part that saw "B" or "E" events (which pair
// across parts) is parsed again here with those after it.
absl::Status KinetoJsonParser::ParseParts(const std::vector<size_t>& bounds,
                                          const std::vector<size_t>& firsts) {
  const size_t n = firsts.size();
  std::vector<std::optional<KinetoTraceBuilder>> builders(n);
  std::vector<std::optional<EventWalker>> walkers(n);
  std::vector<absl::Status> status(n);
  // What a part throws (std::bad_alloc on a trace too large for memory) is
  // thrown again here, in file order, as one thread would have thrown it
  // (a worker must not throw: base/parallel.h).
  std::vector<std::exception_ptr> thrown(n);
  for (size_t k = 1; k < n; ++k) {
    builders[k].emplace(KinetoTraceBuilder::PartOf(*builder_));
    walkers[k].emplace(&*builders[k]);
  }
  const auto last_of = [&](size_t k) { return k + 1 < n ? firsts[k + 1] : bounds.size() - 1; };
  ParallelFor(n, static_cast<int>(n), [&](size_t k) {
    try {
      if (k == 0) {
        status[0] = ParseChunkRange(bounds, 0, last_of(0), &walker_, &chunk_parser_);
        return;
      }
      od::parser parser;
      status[k] = ParseChunkRange(bounds, firsts[k], last_of(k), &*walkers[k], &parser);
    } catch (...) {
      thrown[k] = std::current_exception();
    }
  });
  for (size_t k = 0; k < n; ++k) {
    if (thrown[k]) std::rethrow_exception(thrown[k]);
    REVERIE_RETURN_IF_ERROR(status[k]);
    if (k == 0) continue;
    if (!builder_->CanAbsorb(*builders[k])) {
      return ParseChunkRange(bounds, firsts[k], bounds.size() - 1, &walker_, &chunk_parser_);
    }
    builder_->Absorb(std::move(*builders[k]));
    walker_.CountEventsOf(*walkers[k]);
  }
  return absl::OkStatus();
}

absl::Status KinetoJsonParser::ParseChunkRange(const std::vector<size_t>& bounds, size_t first,
                                               size_t last, EventWalker* walker,
                                               od::parser* parser) const {
  const char* text = input_->data();
  // Sized once for the longest chunk, so the copy and the index are
  // allocated once and stay in cache.
  size_t longest = 0;
  for (size_t i = first; i < last; ++i) longest = std::max(longest, bounds[i + 1] - bounds[i] + 1);
  if (auto err = parser->allocate(longest); err) {
    return ErrorIn(TextMap{text}, *walker, nullptr, err);
  }
  std::unique_ptr<char[]> copy(new char[longest + kJsonPadding]);
  for (size_t i = first; i < last; ++i) {
    // text[from] is the separator before the chunk, text[to] the one after
    // (or, for an array cut off, one past the text): neither is copied.
    const size_t from = bounds[i], to = bounds[i + 1];
    const size_t size = to - from + 1;
    copy[0] = '[';
    std::memcpy(copy.get() + 1, text + from + 1, size - 2);
    copy[size - 1] = ']';
    std::memset(copy.get() + size, 0, kJsonPadding);
    const TextMap map{copy.get(), kNoOffset, 0, from};
    const simdjson::padded_string_view view(copy.get(), size, size + kJsonPadding);
    od::document doc;
    if (auto err = parser->iterate(view).get(doc); err) return ErrorIn(map, *walker, nullptr, err);
    od::array events;
    if (auto err = doc.get_array().get(events); err) return ErrorIn(map, *walker, &doc, err);
    if (auto err = walker->AddEvents(events); err) return ErrorIn(map, *walker, &doc, err);
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
  // simdjson parses a padded text where it is; a mapped one (no padding,
  // and possibly written by another process) is parsed from a copy.
  std::optional<JsonInput> copy;
  const JsonInput* in = input_;
  if (!in->padded()) {
    REVERIE_ASSIGN_OR_RETURN(copy, CopyJsonText(in->text(), path_));
    in = &*copy;
  }
  od::parser parser;
  const simdjson::padded_string_view view(in->data(), in->size(), in->size() + kJsonPadding);
  const TextMap map{in->data()};
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

absl::Status ParseKinetoJson(const JsonInput& input, const std::string& path,
                             KinetoTraceBuilder* builder, size_t chunk_bytes, int threads) {
  return KinetoJsonParser(&input, path, builder, chunk_bytes, threads).Run();
}

}  // namespace reverie::kineto
