#include "frameworks/kineto/kineto_numbers.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace reverie::kineto {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' ||
                        s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Slow path for exponent forms: correct to the double's precision, which is
// ample for the small durations such forms appear in.
bool ParseViaDouble(std::string_view text, double scale, int64_t* out) {
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  const double scaled = v * scale;
  if (std::fabs(scaled) >= 9.2e18) return false;
  *out = std::llround(scaled);
  return true;
}

// The sign and integer digits that start `text` (already trimmed).
struct Leading {
  bool negative = false;
  uint64_t whole = 0;
  size_t end = 0;         // index after the digits
  bool too_long = false;  // more than max_digits digits: left for the slow path
};

// False when `text` does not start with an optional sign and a digit.
bool ParseLeading(std::string_view text, size_t max_digits, Leading* out) {
  if (text.empty()) return false;
  size_t i = 0;
  out->negative = text[0] == '-';
  if (out->negative || text[0] == '+') ++i;
  if (i >= text.size() || !IsDigit(text[i])) return false;
  size_t digits = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    if (++digits > max_digits) {
      out->too_long = true;
      break;
    }
    out->whole = out->whole * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  out->end = i;
  return true;
}

}  // namespace

bool ParseMicrosToNanos(std::string_view text, int64_t* ns) {
  text = Trim(text);
  Leading lead;
  if (!ParseLeading(text, 16, &lead)) return false;
  if (lead.too_long) return ParseViaDouble(text, 1000.0, ns);  // > 9.2e15 us
  size_t i = lead.end;
  uint64_t frac = 0;  // nanoseconds
  bool round_up = false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || !IsDigit(text[i])) return false;
    int taken = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i, ++taken) {
      if (taken < 3) {
        frac = frac * 10 + static_cast<uint64_t>(text[i] - '0');
      } else if (taken == 3) {
        round_up = text[i] >= '5';
      }
    }
    for (; taken < 3; ++taken) frac *= 10;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    return ParseViaDouble(text, 1000.0, ns);
  }
  if (i != text.size()) return false;
  const uint64_t total = lead.whole * 1000 + frac + (round_up ? 1 : 0);
  if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *ns = lead.negative ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
  return true;
}

bool ParseIntegerText(std::string_view text, int64_t* value) {
  text = Trim(text);
  Leading lead;
  if (!ParseLeading(text, 18, &lead)) return false;
  if (lead.too_long) return ParseViaDouble(text, 1.0, value);
  if (lead.end != text.size()) return ParseViaDouble(text, 1.0, value);
  *value = lead.negative ? -static_cast<int64_t>(lead.whole) : static_cast<int64_t>(lead.whole);
  return true;
}

bool IsJsonNumber(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  auto digits = [&] {
    const size_t from = i;
    while (i < n && IsDigit(text[i])) ++i;
    return i > from;
  };
  if (i < n && text[i] == '-') ++i;
  if (i < n && text[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < n && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

bool ParseTrailingInteger(std::string_view text, int64_t* value) {
  text = Trim(text);
  size_t start = text.size();
  while (start > 0 && IsDigit(text[start - 1])) --start;
  if (start == text.size()) return false;
  if (start > 0 && text[start - 1] == '-') --start;
  return ParseIntegerText(text.substr(start), value);
}

}  // namespace reverie::kineto
