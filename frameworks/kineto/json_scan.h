// File: frameworks/kineto/json_scan.h
//
// ScanJsonLayout: one pass over a JSON text, 64 bytes at a time, that finds
// where a Chrome trace keeps its events without parsing any value: the
// top-level form (the JSON Object form {"traceEvents": [...]} or the JSON
// Array form [...]), the byte span of the event array, cut points between
// whole events about every `chunk_bytes`, where an array cut off before its
// closing ']' has its last complete event, and whatever follows the
// top-level value. The parser then hands simdjson one chunk of whole events
// at a time, so simdjson's index (4 bytes per structural character, ~80% of
// the text's size) stays small and in cache instead of growing with the trace.
//
// The scanner tracks strings (quotes and backslash escapes) and brackets;
// it validates only what simdjson's On-Demand front end lets through: NUL
// bytes, brackets closed by the wrong kind, content after the value.
// simdjson parses every byte it is given, and the caller falls back to
// parsing the whole text when the layout is not one it can split (see
// JsonLayout::splittable).
//
// Invariants of the result: cuts are ascending, each is the offset of a ','
// at the event array's own depth, strictly between events_open and
// events_close (or complete_end when the array is not closed).
#ifndef REVERIE_FRAMEWORKS_KINETO_JSON_SCAN_H_
#define REVERIE_FRAMEWORKS_KINETO_JSON_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reverie::kineto {

struct JsonLayout {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  enum class Form : uint8_t { kObject, kArray, kOther };

  Form form = Form::kOther;
  // Offset of the event array's '[' (the top-level '[' in the array form,
  // the value of the first "traceEvents" key at depth 1 in the object form)
  // and of its closing ']' (kNone: the text ends inside the array).
  size_t events_open = kNone;
  size_t events_close = kNone;
  // Offsets of ',' separating two events of the event array.
  std::vector<size_t> cuts;
  // Complete bracketed elements of the event array (objects: events).
  size_t elements = 0;
  // Array not closed: offset just past its last complete bracketed element
  // (events_open + 1 when none), and whether anything but whitespace and
  // commas follows it (an element cut in the middle).
  size_t complete_end = kNone;
  bool cut_element = false;
  // Offset just past the top-level value (kNone: not closed), and of the
  // first non-whitespace byte after it (kNone: none).
  size_t value_end = kNone;
  size_t trailing = kNone;
  // First NUL byte in the text (never valid JSON, and simdjson's On-Demand
  // front end can mistake it for the end of the input); kNone when none.
  size_t first_nul = kNone;
  // A closing bracket of the wrong kind ('}' closing a '['); kNone when none.
  size_t mismatched_bracket = kNone;
  // More than one "traceEvents" array at depth 1, or a closing bracket with
  // nothing open: the caller must parse the whole text to say what is wrong.
  bool inconsistent = false;

  // The events can be parsed chunk by chunk: an object whose events array
  // and top-level value are both closed, or an array (closed or not).
  bool splittable() const {
    if (inconsistent || first_nul != kNone || mismatched_bracket != kNone ||
        events_open == kNone) {
      return false;
    }
    if (form == Form::kArray) return true;
    return form == Form::kObject && events_close != kNone && value_end != kNone;
  }
};

JsonLayout ScanJsonLayout(std::string_view text, size_t chunk_bytes);

namespace internal {

// Per-64-byte-block character masks (bit i = byte i).
struct BlockMasks {
  uint64_t quote = 0;      // '"'
  uint64_t backslash = 0;  // '\\'
  uint64_t open = 0;       // '{' or '['
  uint64_t close = 0;      // '}' or ']'
  uint64_t nul = 0;        // '\0'
};

// Classifies `blocks` consecutive 64-byte blocks starting at `p` into
// out[0 .. blocks). The vector versions are chosen at run time from what
// the CPU supports (AVX-512BW, AVX2, else SSE2); all give the same masks.
using ClassifyFn = void (*)(const char* p, size_t blocks, BlockMasks* out);
ClassifyFn BestClassifier();
// Every version this CPU can run, the portable one first (tests compare them).
std::vector<ClassifyFn> AvailableClassifiers();

// Bits of the characters escaped by a backslash in a block: every
// odd-length run of backslashes escapes the character after it. `carry` is
// 1 when the previous block's last character escapes this block's first,
// and is updated for the next block.
uint64_t EscapedChars(uint64_t backslash, uint64_t* carry);

}  // namespace internal
}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_JSON_SCAN_H_
