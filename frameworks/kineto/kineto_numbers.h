// File: frameworks/kineto/kineto_numbers.h
//
// Exact conversion of Kineto timestamps. Kineto writes `ts`/`dur` in
// microseconds, as integers (2021 schema) or decimals with up to three
// fractional digits (ns resolution). Going through a double loses the
// nanoseconds of an epoch-based `ts` (1.7e15 us needs 51 bits before the
// fraction), so the number's text is converted digit by digit instead.
#ifndef REVERIE_FRAMEWORKS_KINETO_KINETO_NUMBERS_H_
#define REVERIE_FRAMEWORKS_KINETO_KINETO_NUMBERS_H_

#include <cstdint>
#include <string_view>

namespace reverie::kineto {

// Parses a JSON number token (or the text of a numeric string, without its
// quotes) holding microseconds into nanoseconds, rounding half away from
// zero below 1 ns. Trailing whitespace is ignored. Exponent forms ("1.5e-05")
// fall back to double arithmetic. Returns false when `text` is not a number
// or does not fit in int64 ns.
bool ParseMicrosToNanos(std::string_view text, int64_t* ns);

// Parses a decimal integer (optionally signed, surrounding whitespace
// ignored). A fractional part is rounded. Returns false on anything else.
bool ParseIntegerText(std::string_view text, int64_t* value);

// True when `text` is exactly one JSON number (RFC 8259 grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?), however large.
bool IsJsonNumber(std::string_view text);

// The number at the end of `text` ("stream 7" -> 7); false when `text` does
// not end in digits.
bool ParseTrailingInteger(std::string_view text, int64_t* value);

}  // namespace reverie::kineto

#endif  // REVERIE_FRAMEWORKS_KINETO_KINETO_NUMBERS_H_
