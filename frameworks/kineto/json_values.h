// File: frameworks/kineto/json_values.h
//
// Reading simdjson On-Demand values the way the Kineto parser needs them,
// without copies: strings straight from the input when they hold no escape,
// numbers converted from their digits in one pass (exact integer
// nanoseconds, no double), integers that may be written as numeric strings.
// Internal to frameworks/kineto (kineto_parser.cc, kineto_header.cc).
//
// Readers return false when the value is absent, of another type, or out of
// range: the caller counts an anomaly. A token that simdjson typed as a
// number but that is not a JSON number ("2\u0000", "12abc") is invalid JSON,
// which On-Demand does not check by itself: the numeric readers report it
// through `bad_token`, and the parser turns it into an error.
#ifndef REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_
#define REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_

#include <cstdint>
#include <string_view>
#include <utility>

#include "frameworks/kineto/kineto_numbers.h"
#include "simdjson.h"

namespace reverie::kineto::json {

namespace od = simdjson::ondemand;

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

// The text of a string value; straight from the input when it needs no
// unescaping, else from simdjson's string buffer (valid until the parser's
// next document).
inline bool GetString(od::value& v, std::string_view* out) {
  const std::string_view tok = TrimRight(v.raw_json_token());
  if (tok.size() >= 2 && tok.front() == '"' && tok.back() == '"') {
    const std::string_view inner = tok.substr(1, tok.size() - 2);
    if (inner.find('\\') == std::string_view::npos) {
      *out = inner;
      return true;
    }
  }
  return v.get_string().get(*out) == simdjson::SUCCESS;
}

// The first character of the value, which decides its JSON type.
inline char FirstChar(od::value& v) {
  const std::string_view tok = v.raw_json_token();
  return tok.empty() ? '\0' : tok.front();
}

inline bool StartsNumber(char c) { return c == '-' || (c >= '0' && c <= '9'); }

// Integers may be JSON numbers or numeric strings ("tid": "24572").
// `bad_token` is set to a number token that is not valid JSON.
inline bool ReadInt(od::value& v, int64_t* out, const char** bad_token) {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty()) return false;
  if (StartsNumber(tok.front())) {
    const std::string_view num = TrimRight(tok);
    if (ParseIntegerText(num, out)) return true;
    if (!IsJsonNumber(num)) *bad_token = tok.data();
    return false;
  }
  std::string_view s;
  return tok.front() == '"' && GetString(v, &s) && ParseIntegerText(s, out);
}

// Microseconds (a number or a numeric string) -> integer nanoseconds.
inline bool ReadMicros(od::value& v, int64_t* ns, const char** bad_token) {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty()) return false;
  if (StartsNumber(tok.front())) {
    const std::string_view num = TrimRight(tok);
    if (ParseMicrosToNanos(num, ns)) return true;
    if (!IsJsonNumber(num)) *bad_token = tok.data();
    return false;
  }
  std::string_view s;
  return tok.front() == '"' && GetString(v, &s) && ParseMicrosToNanos(s, ns);
}

}  // namespace reverie::kineto::json

#endif  // REVERIE_FRAMEWORKS_KINETO_JSON_VALUES_H_
