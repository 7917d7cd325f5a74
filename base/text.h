// File: base/text.h
//
// Shortening text for one-line messages. Why in the middle: what a message
// is about comes last as often as first ("dependency 12 (<a 3 KB kernel
// name>) -> 14 would create a cycle"), so a cut keeps both ends.
#ifndef REVERIE_BASE_TEXT_H_
#define REVERIE_BASE_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace reverie {

// The first line of `s`: a status message's detail lines (a Lua traceback,
// a parser's context) dropped, for a message that must fit one line.
inline std::string FirstLine(std::string_view s) { return std::string(s.substr(0, s.find('\n'))); }

// `s` cut to `max` bytes with "..." at its end when longer (a label in a
// table or a legend, where the start says what it is).
inline std::string Ellipsize(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max < 3 ? 0 : max - 3)) + "...";
}

// `s` when it has at most `max` bytes, else its first and last parts with
// " ... (N bytes) ... " between them, about `max` bytes in all. Never
// splits a UTF-8 sequence (text that is not UTF-8 is cut where it falls).
inline std::string Abbreviate(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  auto back_to_char = [&](size_t i) {
    // At most 3 steps: a UTF-8 character has at most 3 continuation bytes,
    // and a longer run of them (a script's string of 0x80 bytes) is not
    // UTF-8; walking it back whole kept the entire text.
    for (int k = 0; k < 3 && i > 0 && i < s.size() &&
                    (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
         ++k) {
      --i;
    }
    return i;
  };
  const size_t head = back_to_char(max * 2 / 3);
  size_t tail = back_to_char(s.size() - (max - max * 2 / 3));
  if (tail < head) tail = head;
  std::string out(s.substr(0, head));
  out += " ... (" + std::to_string(tail - head) + " bytes) ... ";
  out += s.substr(tail);
  return out;
}

}  // namespace reverie

#endif  // REVERIE_BASE_TEXT_H_
