// File: tests/metamorphic/trace_text.h
//
// A Kineto trace's JSON text rewritten for the metamorphic tests: its
// traceEvents in another order (Shuffled) and its times stretched
// (Stretched), both on the text itself so that the importer reads them as it
// reads any trace. Exact: numbers are rewritten in decimal, never through a
// double. Header-only, for tests.
#ifndef REVERIE_TESTS_METAMORPHIC_TRACE_TEXT_H_
#define REVERIE_TESTS_METAMORPHIC_TRACE_TEXT_H_

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reverie::testing {

// The file's bytes, gzip or not (gzread passes plain files through).
inline std::string ReadText(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Where the JSON string starting at text[i] (a '"') ends, one past its quote.
inline size_t StringEnd(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// The [begin, end) spans of the elements of the top-level "traceEvents"
// array, and the span of the array's inside.
struct EventSpans {
  size_t inside_begin = 0, inside_end = 0;
  std::vector<std::pair<size_t, size_t>> events;
};

inline EventSpans FindEvents(std::string_view text) {
  EventSpans out;
  int depth = 0;
  size_t element = 0;
  bool in_events = false;
  std::string_view last_key;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t end = StringEnd(text, i);
      if (depth == 1) last_key = text.substr(i + 1, end - i - 2);
      i = end - 1;
    } else if (c == '{' || c == '[') {
      if (depth == 1 && c == '[' && last_key == "traceEvents") {
        in_events = true;
        out.inside_begin = i + 1;
        element = i + 1;
      }
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
      if (in_events && depth == 1) {
        if (text.substr(element, i - element).find_first_not_of(" \t\r\n") != std::string_view::npos) {
          out.events.emplace_back(element, i);
        }
        out.inside_end = i;
        in_events = false;
      }
    } else if (c == ',' && in_events && depth == 2) {
      out.events.emplace_back(element, i);
      element = i + 1;
    }
  }
  return out;
}

// The text with its events in another order (a fixed Fisher-Yates).
inline std::string Shuffled(const std::string& text, uint32_t seed) {
  const EventSpans spans = FindEvents(text);
  std::vector<std::pair<size_t, size_t>> order = spans.events;
  std::mt19937 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  std::string out = text.substr(0, spans.inside_begin);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out += ",\n";
    out.append(text, order[i].first, order[i].second - order[i].first);
  }
  out.append(text, spans.inside_end, std::string::npos);
  return out;
}

// A JSON number as an integer count of 10^-`digits` units, exactly (the
// scaled text must not round where the importer does not).
struct Decimal {
  __int128 units = 0;
  int digits = 0;
};

inline bool ParseDecimal(std::string_view s, Decimal* out) {
  size_t i = 0;
  const bool neg = i < s.size() && s[i] == '-';
  if (neg) ++i;
  __int128 v = 0;
  int digits = -1;
  for (; i < s.size(); ++i) {
    if (s[i] == '.' && digits < 0) {
      digits = 0;
    } else if (s[i] >= '0' && s[i] <= '9' && v < (__int128{1} << 100)) {
      v = v * 10 + (s[i] - '0');
      if (digits >= 0) ++digits;
    } else {
      return false;  // exponents: not in the shared traces
    }
  }
  out->units = neg ? -v : v;
  out->digits = std::max(digits, 0);
  return true;
}

inline __int128 Rescale(const Decimal& d, int digits) {
  __int128 v = d.units;
  for (int i = d.digits; i < digits; ++i) v *= 10;
  return v;
}

inline std::string Print(__int128 v, int digits) {
  const bool neg = v < 0;
  if (neg) v = -v;
  std::string s;
  for (int i = 0; v > 0 || i <= digits; ++i) {
    if (i == digits && digits > 0) s += '.';
    s += static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  if (neg) s += '-';
  std::reverse(s.begin(), s.end());
  return s;
}

// Calls fn(key, begin, end) for every number value of a "ts" or "dur" key.
template <typename Fn>
void ForEachTime(std::string_view text, Fn fn) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    const size_t end = StringEnd(text, i);
    const std::string_view key = text.substr(i + 1, end - i - 2);
    i = end - 1;
    if (key != "ts" && key != "dur") continue;
    size_t v = text.find_first_not_of(" \t\r\n", end);
    if (v == std::string_view::npos || text[v] != ':') continue;
    v = text.find_first_not_of(" \t\r\n", v + 1);
    if (v == std::string_view::npos || !(text[v] == '-' || (text[v] >= '0' && text[v] <= '9'))) continue;
    const size_t v_end = text.find_first_of(",}] \t\r\n", v);
    fn(key, v, v_end == std::string_view::npos ? text.size() : v_end);
  }
}

// Every "ts" stretched by k around the earliest one, every "dur" by k, in
// exact decimal arithmetic (as many decimals as the trace's longest).
inline std::string Stretched(const std::string& text, int k) {
  int kDigits = 0;
  ForEachTime(text, [&](std::string_view, size_t b, size_t e) {
    Decimal d;
    if (ParseDecimal(std::string_view(text).substr(b, e - b), &d)) kDigits = std::max(kDigits, d.digits);
  });
  __int128 t0 = 0;
  bool any = false;
  ForEachTime(text, [&](std::string_view key, size_t b, size_t e) {
    Decimal d;
    if (key == "ts" && ParseDecimal(std::string_view(text).substr(b, e - b), &d)) {
      const __int128 v = Rescale(d, kDigits);
      t0 = any ? std::min(t0, v) : v;
      any = true;
    }
  });
  std::string out;
  size_t copied = 0;
  ForEachTime(text, [&](std::string_view key, size_t b, size_t e) {
    Decimal d;
    if (!ParseDecimal(std::string_view(text).substr(b, e - b), &d)) return;
    const __int128 v = Rescale(d, kDigits);
    const __int128 scaled = key == "ts" ? t0 + (v - t0) * k : v * k;
    out.append(text, copied, b - copied);
    out += Print(scaled, kDigits);
    copied = e;
  });
  out.append(text, copied, std::string::npos);
  return out;
}

}  // namespace reverie::testing

#endif  // REVERIE_TESTS_METAMORPHIC_TRACE_TEXT_H_
