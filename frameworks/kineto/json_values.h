// File: frameworks/kineto/json_values.h
//
// Reading simdjson On-Demand values the way the Kineto parser needs them,
// without copies: strings straight from the input when they hold no escape,
// numbers converted from their digits in one pass (exact integer
// nanoseconds, no double), integers that may be written as numeric strings.
// Internal to frameworks/kineto (kineto_parser.cc, kineto_header.cc).
//
// Readers return false when the value is absent, of another type, or out of
// range: the caller counts an anomaly. What makes the document unreadable
// goes to a ReadState that the parser turns into an error: a token that
// simdjson typed as a number but that is not a JSON number ("12abc"), which
// On-Demand does not check by itself, and any simdjson error but a type
// mismatch (after which On-Demand abandons the document, and a loop over it
// would end early as if the document had ended: events silently lost).
#ifndef REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_
#define REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_

#include <cstdint>
#include <string_view>
#include <utility>

#include "frameworks/kineto/kineto_numbers.h"
#include "simdjson.h"

namespace reverie::kineto::json {

namespace od = simdjson::ondemand;

// A simdjson error after which the document cannot be read on.
inline bool Fatal(simdjson::error_code e) {
  return e != simdjson::SUCCESS && e != simdjson::INCORRECT_TYPE;
}

// The first reason the document cannot be read as JSON, if any.
struct ReadState {
  const char* bad_number = nullptr;  // a number token that is not a JSON number
  simdjson::error_code fatal = simdjson::SUCCESS;

  bool ok() const { return bad_number == nullptr && fatal == simdjson::SUCCESS; }
  simdjson::error_code error() const {
    return fatal != simdjson::SUCCESS ? fatal : bad_number != nullptr ? simdjson::NUMBER_ERROR
                                                                      : simdjson::SUCCESS;
  }
  // Records `e` when fatal; true when `e` is no error at all.
  bool Note(simdjson::error_code e) {
    if (Fatal(e) && fatal == simdjson::SUCCESS) fatal = e;
    return e == simdjson::SUCCESS;
  }
  void NoteNumber(const char* token) {
    if (bad_number == nullptr) bad_number = token;
  }
};

// The value held by `r` (whose error the caller has checked), by reference:
// copying simdjson's iterator structs right after they are built stalls
// store-to-load forwarding, which cost ~20% of the event walk.
template <typename T>
inline T& Held(simdjson::simdjson_result<T>& r) {
  T&& held = std::move(r).value_unsafe();
  return held;
}

inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

inline std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsJsonSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Key of an object field, read from the input without unescaping (the keys
// we look for have no escapes, so an escaped key simply matches nothing).
inline std::string_view KeyOf(od::field& f) {
  const char* p = f.key().raw();
  const char* q = p;
  while (*q != '"') q += (*q == '\\') ? 2 : 1;
  return std::string_view(p, static_cast<size_t>(q - p));
}

inline bool HasBackslash(std::string_view s) {
  if (s.size() >= 32) return s.find('\\') != std::string_view::npos;  // memchr pays off
  for (char c : s) {
    if (c == '\\') return true;
  }
  return false;
}

// The text of a string value; straight from the input when it needs no
// unescaping, else from simdjson's string buffer (valid until the parser's
// next document).
inline bool GetString(od::value& v, std::string_view* out, ReadState* st) {
  const std::string_view tok = TrimRight(v.raw_json_token());
  if (tok.size() >= 2 && tok.front() == '"' && tok.back() == '"') {
    const std::string_view inner = tok.substr(1, tok.size() - 2);
    if (!HasBackslash(inner)) {
      *out = inner;
      return true;
    }
  }
  return st->Note(v.get_string().get(*out));
}

inline bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

// The common number tokens in one pass over their digits: an integer of up
// to 18 digits, or microseconds with at most 3 decimals (nanoseconds), then
// only whitespace. Anything else returns false for the general parser.
inline bool FastDigits(std::string_view tok, bool micros, int64_t* out) {
  const char* p = tok.data();
  const char* const end = p + tok.size();
  const bool negative = p < end && *p == '-';
  p += negative;
  const char* const first = p;
  uint64_t v = 0;
  while (p < end && IsDigit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  // 18 digits always fit in int64; so do 16 digits of microseconds below
  // 9223372036854775 (in ns), which covers epoch timestamps.
  if (p == first || p - first > (micros ? 16 : 18)) return false;
  if (micros) {
    if (v > 9'223'372'036'854'774) return false;
    uint64_t frac = 0;
    int taken = 0;
    if (p < end && *p == '.') {
      for (++p; p < end && IsDigit(*p); ++p) {
        if (++taken > 3) return false;  // rounding: the general parser
        frac = frac * 10 + static_cast<uint64_t>(*p - '0');
      }
      if (taken == 0) return false;
    }
    for (; taken < 3; ++taken) frac *= 10;
    v = v * 1000 + frac;
  }
  for (; p < end; ++p) {
    if (!IsJsonSpace(*p)) return false;
  }
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

// The first character of the value, which decides its JSON type.
inline char FirstChar(od::value& v) {
  const std::string_view tok = v.raw_json_token();
  return tok.empty() ? '\0' : tok.front();
}

inline bool StartsNumber(char c) { return c == '-' || (c >= '0' && c <= '9'); }

// A number, or a numeric string ("tid": "24572"): an integer, or (kMicros)
// microseconds converted to integer nanoseconds.
template <bool kMicros>
inline bool ReadNumber(od::value& v, int64_t* out, ReadState* st) {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty()) return false;
  auto parse = [out](std::string_view text) {
    return kMicros ? ParseMicrosToNanos(text, out) : ParseIntegerText(text, out);
  };
  if (StartsNumber(tok.front())) {
    if (FastDigits(tok, kMicros, out)) return true;
    const std::string_view num = TrimRight(tok);
    if (parse(num)) return true;
    if (!IsJsonNumber(num)) st->NoteNumber(tok.data());
    return false;
  }
  std::string_view s;
  return tok.front() == '"' && GetString(v, &s, st) && parse(s);
}

inline bool ReadInt(od::value& v, int64_t* out, ReadState* st) {
  return ReadNumber<false>(v, out, st);
}
inline bool ReadMicros(od::value& v, int64_t* ns, ReadState* st) {
  return ReadNumber<true>(v, ns, st);
}

// fn(key, value) for each field of `obj`, stopping at the first error.
template <typename Fn>
inline simdjson::error_code ForEachField(od::object& obj, Fn&& fn) {
  for (auto field_result : obj) {
    if (auto err = field_result.error(); err) return err;
    od::field& f = Held(field_result);
    if (auto err = fn(KeyOf(f), f.value()); err) return err;
  }
  return simdjson::SUCCESS;
}

// fn(object) for each object in the array `v`; other elements, and a `v`
// that is not an array, are ignored.
template <typename Fn>
inline simdjson::error_code ForEachObject(od::value& v, Fn&& fn) {
  od::array arr;
  if (auto err = v.get_array().get(arr); err) return Fatal(err) ? err : simdjson::SUCCESS;
  for (auto item : arr) {
    od::object obj;
    if (auto err = item.get_object().get(obj); err) {
      if (Fatal(err)) return err;
      continue;
    }
    if (auto err = fn(obj); err) return err;
  }
  return simdjson::SUCCESS;
}

}  // namespace reverie::kineto::json

#endif  // REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_
